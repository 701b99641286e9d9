# The fabric across nodes (docs/fabric.md): the NCCL transport and sysfs
# port parsers (pure), the bisection and attribution rules (judge, pure),
# the port reader (collect), `nodegate fabric pair|gang|ports` (cli), and
# the stand-in fleet (srun, all_reduce_perf, ib_write_bw in one program)
# the tests and `nodegate selftest` run it on.
target_sources(nodegate_judge PRIVATE src/judge/fabric.c)
target_sources(nodegate_parse PRIVATE src/parse/nccl_transport.c src/parse/ib_counters.c)
target_sources(nodegate_collect PRIVATE src/collect/ib_ports.c)
target_sources(nodegate_store PRIVATE src/store/fabric_peers.c)
target_sources(nodegate PRIVATE
 src/cli/cmd_fabric.c
 src/cli/fabric_opts.c src/cli/fabric_run.c src/cli/fabric_gang.c src/cli/fabric_pair.c src/cli/selftest_fabric.c)

# Built beside nodegate, like the synthetic GPU libraries, so that selftest
# finds it; it answers as whichever tool its name (a symlink) says.
add_executable(nodegate-fabric-synth src/synth/fabric_synth.c)
target_include_directories(nodegate-fabric-synth PRIVATE src)
target_link_libraries(nodegate-fabric-synth PRIVATE PkgConfig::CJSON m)
set_target_properties(nodegate-fabric-synth PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})
# Installed beside the synthetic NVML library: selftest looks for it in
# lib/nodegate/ of an installed tree, wherever the tree was moved.
install(TARGETS nodegate-fabric-synth RUNTIME DESTINATION lib/nodegate)
