# The fleet report (docs/report.md): its pure rules and parser, and the
# report of a generated fleet on both store backends, rendered in Chromium.

foreach(t gpu_hours false_reject)
  add_executable(test_${t} unit/test_${t}.c)
  target_link_libraries(test_${t} PRIVATE nodegate_judge PkgConfig::CMOCKA)
  add_test(NAME unit_${t} COMMAND test_${t})
endforeach()
add_executable(test_parse_sacct unit/test_parse_sacct.c)
target_link_libraries(test_parse_sacct PRIVATE nodegate_parse PkgConfig::CMOCKA)
add_test(NAME unit_parse_sacct COMMAND test_parse_sacct)

# A small fleet from bench/fleetgen, reported as HTML and JSON: the planted
# sick nodes, the fleet regression, the breaker, GPU-hours, false rejects,
# escaping and exit statuses (report_cli_*), then the page in headless
# Chromium (report_browser_*: skips without chromium). The screenshot is
# kept as ${CMAKE_BINARY_DIR}/report-artifacts/report-<backend>.png.
set(NG_REPORT_ARTIFACTS ${CMAKE_BINARY_DIR}/report-artifacts)
foreach(mode cli browser)
  ng_add_store_test(report_${mode} ${NODEGATE_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/cli/report_tests.py
    --mode ${mode} --nodegate $<TARGET_FILE:nodegate> --fleetgen $<TARGET_FILE:fleetgen>
    --artifacts ${NG_REPORT_ARTIFACTS})
endforeach()
set_tests_properties(report_cli_sqlite report_cli_postgres report_browser_sqlite
  report_browser_postgres PROPERTIES TIMEOUT 300)
