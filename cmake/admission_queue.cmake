# The admission queue (docs/slurm.md).
# The stand-in scontrol of selftest's admission-queue rows: one node's
# features and comment in a file (src/synth/scontrol_synth.c). Built beside
# nodegate and installed beside the synthetic NVML library, as the stand-in fleet is
# (cmake/fabric.cmake).
# Like the other synthetic parts it is never linked against nodegate_core:
# the one safe writer (core/atomic_file.c) is compiled in.
add_executable(nodegate-scontrol-synth src/synth/scontrol_synth.c src/core/atomic_file.c
               src/core/error.c)
target_include_directories(nodegate-scontrol-synth PRIVATE src)
set_target_properties(nodegate-scontrol-synth PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})
install(TARGETS nodegate-scontrol-synth RUNTIME DESTINATION lib/nodegate)
