# The fabric across nodes (docs/fabric.md): the NCCL transport and sysfs
# port parsers (pure), the bisection and attribution rules (judge, pure),
# the port reader (collect), the tests, gang and pair (flow), their verbs (cli), and
# the stand-in fleet (srun, all_reduce_perf, ib_write_bw in one program)
# the tests and `nodegate selftest` run it on.
# Their sources are in the lists of their folders (src/<folder>/sources.cmake);
# the targets of this part alone are below.

# Built beside nodegate, like the synthetic GPU libraries, so that selftest
# finds it; it answers as whichever tool its name (a symlink) says.
add_executable(nodegate-fabric-synth src/synth/fabric_synth.c)
target_include_directories(nodegate-fabric-synth PRIVATE src)
target_link_libraries(nodegate-fabric-synth PRIVATE nodegate_parse PkgConfig::CJSON m)
set_target_properties(nodegate-fabric-synth PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})
# Installed beside the synthetic NVML library: selftest looks for it in
# lib/nodegate/ of an installed tree, wherever the tree was moved.
install(TARGETS nodegate-fabric-synth RUNTIME DESTINATION lib/nodegate)
