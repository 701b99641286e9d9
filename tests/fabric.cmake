# The fabric across nodes: the pure rules and parsers, and `nodegate fabric`
# on the stand-in fleet (tests/cli/fabric_tests.py).
add_executable(test_fabric unit/test_fabric.c)
target_link_libraries(test_fabric PRIVATE nodegate_parse nodegate_judge PkgConfig::CMOCKA)
add_test(NAME unit_fabric COMMAND test_fabric)
add_executable(test_topology unit/test_topology.c)
target_link_libraries(test_topology PRIVATE nodegate_parse PkgConfig::CMOCKA)
add_test(NAME unit_topology COMMAND test_topology)
add_test(NAME fabric_cli COMMAND ${NODEGATE_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/cli/fabric_tests.py
         --nodegate $<TARGET_FILE:nodegate> --synth $<TARGET_FILE:nodegate-fabric-synth>)
set_tests_properties(fabric_cli PROPERTIES TIMEOUT 300)
# The same through a real srun: several slurmd on this host
# (scripts/slurm-fabric-cluster, its own ports); skips (77) when not root or
# Slurm is not installed.
add_test(NAME slurm_fabric COMMAND ${NODEGATE_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/slurm/fabric_slurm.py
         --nodegate $<TARGET_FILE:nodegate> --synth $<TARGET_FILE:nodegate-fabric-synth>
         --dir ${CMAKE_BINARY_DIR}/slurm-fabric)
set_tests_properties(slurm_fabric PROPERTIES RESOURCE_LOCK slurm_fabric SKIP_RETURN_CODE 77 TIMEOUT 300)
