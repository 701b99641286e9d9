# The admission queue (docs/slurm.md).
# The stand-in scontrol of selftest's admission-queue rows: one node's
# features and comment in a file (src/synth/scontrol_synth.c). Built beside
# nodegate and installed beside the synthetic NVML library, as the stand-in fleet is
# (cmake/fabric.cmake).
add_executable(nodegate-scontrol-synth src/synth/scontrol_synth.c)
target_include_directories(nodegate-scontrol-synth PRIVATE src)
target_link_libraries(nodegate-scontrol-synth PRIVATE nodegate_core)
set_target_properties(nodegate-scontrol-synth PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})
install(TARGETS nodegate-scontrol-synth RUNTIME DESTINATION lib/nodegate)
