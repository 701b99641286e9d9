# Trying a policy before it drains anyone (docs/policy-changes.md): replay,
# shadow, promotion and history on a month of fleet from bench/fleetgen and on
# epilog runs against the synthetic NVML library, on both store backends.
ng_add_store_test(policy_changes ${NODEGATE_PYTHON}
  ${CMAKE_CURRENT_SOURCE_DIR}/cli/policy_changes_tests.py --nodegate $<TARGET_FILE:nodegate>
  --fleetgen $<TARGET_FILE:fleetgen> --synth $<TARGET_FILE:nodegate-nvml-synth>)
set_tests_properties(policy_changes_sqlite policy_changes_postgres PROPERTIES TIMEOUT 600)

# The policy's text as the store keeps it: read back, the same version.
add_executable(test_policy_json unit/test_policy_json.c)
target_link_libraries(test_policy_json PRIVATE nodegate_core PkgConfig::CMOCKA)
add_test(NAME unit_policy_json COMMAND test_policy_json)

# What a replay judges again, on both store backends: GPU checks from the
# readings they kept (schema 13: a tighter and a looser health threshold,
# the policy in force, runs from before readings were kept), and the gate
# from the records, baselines and cohorts the store keeps (diagnostics,
# warn and block lines, a fleet event whose cohort has moved on since).
ng_add_store_test(replay_rejudge ${NODEGATE_PYTHON}
  ${CMAKE_CURRENT_SOURCE_DIR}/cli/replay_rejudge_tests.py --nodegate $<TARGET_FILE:nodegate>
  --synth $<TARGET_FILE:nodegate-nvml-synth>)

# What a GPU check keeps of what it judged, read back: the same verdicts.
add_executable(test_gpu_readings unit/test_gpu_readings.c)
target_link_libraries(test_gpu_readings PRIVATE nodegate_flow PkgConfig::CMOCKA)
add_test(NAME unit_gpu_readings COMMAND test_gpu_readings)
