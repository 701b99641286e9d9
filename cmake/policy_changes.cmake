# Trying a policy before it drains anyone (docs/policy-changes.md): the
# policy's text kept by digest, the replay of the recorded decisions under a
# proposed policy, the shadow policy beside the enforcing one, promotion with
# its guard, and the policy history.
# Their sources are in the lists of their folders (src/<folder>/sources.cmake).

# The replay's benchmark (bench/replay_bench.py, bench/README.md): not part of
# the build; `cmake --build BUILD --target replay_bench` runs it (SQLite).
add_custom_target(replay_bench
  COMMAND ${NG_REPORT_BENCH_PYTHON} ${CMAKE_SOURCE_DIR}/bench/replay_bench.py
          --nodegate $<TARGET_FILE:nodegate> --fleetgen $<TARGET_FILE:fleetgen>
          --dir ${CMAKE_BINARY_DIR}/replay-bench
  DEPENDS nodegate fleetgen
  USES_TERMINAL)
