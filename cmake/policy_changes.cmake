# Trying a policy before it drains anyone (docs/policy-changes.md): the
# policy's text kept by digest, the replay of the recorded decisions under a
# proposed policy, the shadow policy beside the enforcing one, promotion with
# its guard, and the policy history.
target_sources(nodegate_core PRIVATE src/core/policy_json.c)
target_sources(nodegate_store PRIVATE src/store/policies.c)
