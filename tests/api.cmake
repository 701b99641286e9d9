# The public API (include/nodegate/nodegate.h): examples/admit.c built
# against libnodegate.so with the public header alone and run, as curl's
# examples are; the same program built from an installed, moved tree with
# pkg-config, shared and static (tests/install/pkgconfig_test.py).
add_executable(example_admit ${CMAKE_SOURCE_DIR}/examples/admit.c)
target_link_libraries(example_admit PRIVATE nodegate_shared)
add_test(NAME example_admit COMMAND ${NODEGATE_PYTHON} -c
  "import subprocess, sys, tempfile, os\nwith tempfile.TemporaryDirectory() as d:\n    r = subprocess.run([sys.argv[1], os.path.join(d, 'store.db')], capture_output=True, text=True)\nprint(r.stdout, r.stderr)\nok = r.returncode == 0 and r.stdout.rstrip().endswith('ok') and 'node-slow quarantined (case 1) exit 1' in r.stdout and 'gate block (not admissible)' in r.stdout\nsys.exit(0 if ok else 1)"
  $<TARGET_FILE:example_admit>)
add_test(NAME example_pkgconfig COMMAND ${NODEGATE_PYTHON}
  ${CMAKE_CURRENT_SOURCE_DIR}/install/pkgconfig_test.py --build ${CMAKE_BINARY_DIR}
  --source ${CMAKE_SOURCE_DIR} --cc ${CMAKE_C_COMPILER}
  "--flags=$<$<BOOL:${NODEGATE_SANITIZE}>:-fsanitize=address,undefined>")
set_tests_properties(example_pkgconfig PROPERTIES TIMEOUT 300)
