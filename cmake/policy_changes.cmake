# Trying a policy before it drains anyone (docs/policy-changes.md): the
# policy's text kept by digest, the replay of the recorded decisions under a
# proposed policy, the shadow policy beside the enforcing one, promotion with
# its guard, and the policy history.
target_sources(nodegate_core PRIVATE src/core/policy_json.c)
target_sources(nodegate_store PRIVATE src/store/policies.c)
target_sources(nodegate_flow PRIVATE
  src/flow/redecide.c
  src/flow/replay.c
  src/flow/replay_model.c)
target_sources(nodegate_flow PRIVATE
  src/flow/shadow.c
  src/flow/promote.c
  src/flow/policy_history.c)
target_sources(nodegate PRIVATE src/cli/cmd_policy_changes.c)
target_sources(nodegate_land PRIVATE src/land/metrics_shadow.c)
target_sources(nodegate PRIVATE src/cli/report_policy.c)

# The replay's benchmark (bench/replay_bench.py, bench/README.md): not part of
# the build; `cmake --build BUILD --target replay_bench` runs it (SQLite).
add_custom_target(replay_bench
  COMMAND ${NG_REPORT_BENCH_PYTHON} ${CMAKE_SOURCE_DIR}/bench/replay_bench.py
          --nodegate $<TARGET_FILE:nodegate> --fleetgen $<TARGET_FILE:fleetgen>
          --dir ${CMAKE_BINARY_DIR}/replay-bench
  DEPENDS nodegate fleetgen
  USES_TERMINAL)
