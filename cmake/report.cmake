# The fleet report (docs/report.md): `nodegate report`, the pure rules it
# counts with (GPU-hours attribution, false rejects), the sacct parser, the
# store's reads for it, the policy digest decisions are kept with, and the
# synthetic fleet generator its tests and benchmark run on.
target_sources(nodegate_core PRIVATE src/core/policy_digest.c)
target_sources(nodegate_judge PRIVATE
  src/judge/gpu_hours.c
  src/judge/false_reject.c)
target_sources(nodegate_parse PRIVATE src/parse/sacct.c)
target_sources(nodegate_store PRIVATE src/store/report_queries.c)
target_sources(nodegate PRIVATE
  src/cli/cmd_report.c
  src/cli/report_data.c
  src/cli/report_fr.c
  src/cli/report_hours.c
  src/cli/report_html.c
  src/cli/report_json.c
  src/cli/report_map.c
  src/cli/report_svg.c)

# The synthetic fleet generator (bench/fleetgen.c) on the shared fleet model
# (cmake/fleet.cmake's nodegate_fleet_model, resolved when generating): a
# month of a fleet written through the store API, for the report's tests and
# its benchmark. Built beside the other benchmarks, in bench/.
add_executable(fleetgen bench/fleetgen.c)
target_link_libraries(fleetgen PRIVATE nodegate_store nodegate_fleet_model)
set_target_properties(fleetgen PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bench)

# The report's benchmark (bench/report_bench.py, bench/README.md): not part
# of the build; `make bench-report` runs it on the optimised build, or
# `cmake --build BUILD --target report_bench` on this one (SQLite only).
find_program(NG_REPORT_BENCH_PYTHON NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
add_custom_target(report_bench
  COMMAND ${NG_REPORT_BENCH_PYTHON} ${CMAKE_SOURCE_DIR}/bench/report_bench.py
          --nodegate $<TARGET_FILE:nodegate> --fleetgen $<TARGET_FILE:fleetgen>
          --dir ${CMAKE_BINARY_DIR}/report-bench
  DEPENDS nodegate fleetgen
  USES_TERMINAL)
