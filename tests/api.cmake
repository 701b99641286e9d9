# The public API (include/nodegate/nodegate.h): examples/admit.c built
# against libnodegate.so with the public header alone and run, as curl's
# examples are; the same program built from an installed, moved tree with
# pkg-config, shared and static (tests/install/pkgconfig_test.py).
add_executable(example_admit ${CMAKE_SOURCE_DIR}/examples/admit.c)
target_link_libraries(example_admit PRIVATE nodegate_shared)
add_test(NAME example_admit COMMAND ${NODEGATE_PYTHON} -c
  "import subprocess, sys, tempfile, os\nwith tempfile.TemporaryDirectory() as d:\n    r = subprocess.run([sys.argv[1], os.path.join(d, 'store.db')], capture_output=True, text=True)\nprint(r.stdout, r.stderr)\nok = r.returncode == 0 and r.stdout.rstrip().endswith('ok') and 'node-slow quarantined (case 1) exit 1' in r.stdout and 'release node-slow not-yet (case 1, 0 of 2 passes)' in r.stdout and 'release node-slow released (case 1, 0 of 2 passes): manual release: storage controller replaced' in r.stdout and 'release node-slow no-case' in r.stdout and 'gate block (not admissible)' in r.stdout\nsys.exit(0 if ok else 1)"
  $<TARGET_FILE:example_admit>)
# The public GPU check against libnodegate.so on synthetic GPUs: the
# request reaches the check, the job's own GPUs only, errors by class.
add_executable(test_api_gpu_check unit/test_api_gpu_check.c)
target_link_libraries(test_api_gpu_check PRIVATE nodegate_shared PkgConfig::CMOCKA)
add_test(NAME api_gpu_check COMMAND test_api_gpu_check $<TARGET_FILE:nodegate-nvml-synth>)
add_test(NAME example_pkgconfig COMMAND ${NODEGATE_PYTHON}
  ${CMAKE_CURRENT_SOURCE_DIR}/install/pkgconfig_test.py --build ${CMAKE_BINARY_DIR}
  --source ${CMAKE_SOURCE_DIR} --cc ${CMAKE_C_COMPILER}
  "--flags=$<$<BOOL:${NODEGATE_SANITIZE}>:-fsanitize=address,undefined>")
set_tests_properties(example_pkgconfig PROPERTIES TIMEOUT 300)

# Every allocation of the gate's batch mode and of an admission from records
# failed in turn (tests/alloc/test_alloc_fail.c): a clean error each time,
# never a crash or a pass. The plain build only: the sanitizers keep their
# own allocator.
if(NOT NODEGATE_SANITIZE)
  add_executable(test_alloc_fail alloc/test_alloc_fail.c)
  target_link_libraries(test_alloc_fail PRIVATE nodegate_api)
  target_link_options(test_alloc_fail PRIVATE -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc
                      -Wl,--wrap=strdup,--wrap=strndup)
  add_test(NAME alloc_fail COMMAND ${NODEGATE_PYTHON} -c
    "import subprocess, sys, tempfile\nwith tempfile.TemporaryDirectory() as d:\n    sys.exit(subprocess.run([sys.argv[1], d]).returncode)"
    $<TARGET_FILE:test_alloc_fail>)
  set_tests_properties(alloc_fail PROPERTIES TIMEOUT 240)
endif()
