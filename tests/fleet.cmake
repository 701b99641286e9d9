# The fleet model and the decision simulator (docs/fleet-simulator.md):
# the model's draws, each contestant's rule on hand-made inputs, and a short
# simulation that checks nodegate's targets on a small fleet.
add_executable(test_fleet_model ${CMAKE_CURRENT_SOURCE_DIR}/fleet/test_fleet_model.c)
target_link_libraries(test_fleet_model PRIVATE nodegate_fleet_model PkgConfig::CMOCKA)
add_test(NAME fleet_model COMMAND test_fleet_model)

add_executable(test_fleet_contestants ${CMAKE_CURRENT_SOURCE_DIR}/fleet/test_fleet_contestants.c)
target_link_libraries(test_fleet_contestants PRIVATE nodegate_fleetsim PkgConfig::CMOCKA)
add_test(NAME fleet_contestants COMMAND test_fleet_contestants)

add_executable(test_fleetsim ${CMAKE_CURRENT_SOURCE_DIR}/fleet/test_fleetsim.c)
target_link_libraries(test_fleetsim PRIVATE nodegate_fleetsim PkgConfig::CMOCKA)
add_test(NAME fleet_sim COMMAND test_fleetsim)
# Its nodegate contestant runs real admissions against a SQLite store: about
# 250 s here, 490 s under the sanitizers.
set_tests_properties(fleet_sim PROPERTIES TIMEOUT 1200)
