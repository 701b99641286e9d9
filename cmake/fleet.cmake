# The fleet model (tools/fleet/fleet_model.h): a seeded synthetic fleet with
# planted truth, shared by the decision simulator and the fleet report's
# generator. Pure C, no dependencies beyond libm.
add_library(nodegate_fleet_model STATIC tools/fleet/fleet_model.c)
target_include_directories(nodegate_fleet_model PUBLIC ${CMAKE_SOURCE_DIR}/tools/fleet)
target_link_libraries(nodegate_fleet_model PUBLIC m)

# The decision simulator (docs/fleet-simulator.md): the contestants, the
# scoring, and the nodegate-fleetsim tool `make fleet-sim` runs.
add_library(nodegate_fleetsim STATIC
  tools/fleetsim/sim.c
  tools/fleetsim/sim_util.c
  tools/fleetsim/scenarios.c
  tools/fleetsim/contest_dcgm.c
  tools/fleetsim/contest_aznhc.c
  tools/fleetsim/contest_superbench.c
  tools/fleetsim/contest_sigma.c
  tools/fleetsim/contest_nodegate.c
)
target_include_directories(nodegate_fleetsim PUBLIC ${CMAKE_SOURCE_DIR}/tools/fleetsim)
target_link_libraries(nodegate_fleetsim PUBLIC nodegate_fleet_model nodegate_flow)
add_executable(nodegate-fleetsim tools/fleetsim/main.c)
target_link_libraries(nodegate-fleetsim PRIVATE nodegate_fleetsim)
