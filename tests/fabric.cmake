# The fabric across nodes: the pure rules and parsers, and `nodegate fabric`
# on the stand-in fleet (tests/cli/fabric_tests.py).
add_executable(test_fabric unit/test_fabric.c)
target_link_libraries(test_fabric PRIVATE nodegate_parse PkgConfig::CMOCKA)
add_test(NAME unit_fabric COMMAND test_fabric)
#LATER add_executable(test_ib_ports unit/test_ib_ports.c)
#LATER target_link_libraries(test_ib_ports PRIVATE nodegate_collect PkgConfig::CMOCKA)
#LATER add_test(NAME unit_ib_ports COMMAND test_ib_ports)
#LATER add_test(NAME fabric_cli COMMAND ${NODEGATE_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/cli/fabric_tests.py
#LATER          --nodegate $<TARGET_FILE:nodegate> --synth $<TARGET_FILE:nodegate-fabric-synth>)
#LATER set_tests_properties(fabric_cli PROPERTIES TIMEOUT 300)
#LATER 