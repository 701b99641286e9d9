# The GPU probes' host side, without a GPU: the sibling and series rules
# (pure), the probe loops against a backend table in the test itself with
# fake device times, and the command line through the synthetic backend
# and the synthetic NVML (tests/cli/gpu_probe_tests.py).
foreach(t gpu_siblings gpu_series)
  add_executable(test_${t} unit/test_${t}.c)
  target_link_libraries(test_${t} PRIVATE nodegate_judge PkgConfig::CMOCKA)
  add_test(NAME unit_${t} COMMAND test_${t})
endforeach()
add_executable(test_gpu_probes unit/test_gpu_probes.c)
target_link_libraries(test_gpu_probes PRIVATE nodegate_collect PkgConfig::CMOCKA)
add_test(NAME unit_gpu_probes COMMAND test_gpu_probes)
set_tests_properties(unit_gpu_probes PROPERTIES TIMEOUT 120)

add_test(NAME gpu_probe_cli COMMAND ${NODEGATE_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/cli/gpu_probe_tests.py
         --nodegate $<TARGET_FILE:nodegate> --backend $<TARGET_FILE:nodegate-gpu-synth>
         --synth $<TARGET_FILE:nodegate-nvml-synth>)
set_tests_properties(gpu_probe_cli PROPERTIES TIMEOUT 600)
