# The GPU probes' host side: the backend loader, the measurement loops and
# the NVML sampler (collect), the sibling and series rules (judge, pure),
# `nodegate probe gpu-compute|gpu-memory|gpu-copy` (cli), and the synthetic
# backend the tests drive them with. docs/gpu-probes.md.
# Their sources are in the lists of their folders (src/<folder>/sources.cmake);
# the targets of this part alone are below.

# Synthetic GPUs for the probes: the backend table answered from the
# scenario file $NODEGATE_SYNTH_GPUS (docs/synthetic-gpus.md, "probe"), with
# device times that follow the rates it names. Point nodegate at it with
# NODEGATE_GPU_BACKEND=<build>/libnodegate-gpu-synth.so. Only
# ng_gpu_backend_v1 is exported, and nodegate_core is not linked in.
add_library(nodegate-gpu-synth SHARED src/synth/gpu_probe_synth.c)
target_include_directories(nodegate-gpu-synth PRIVATE src)
target_link_libraries(nodegate-gpu-synth PRIVATE PkgConfig::CJSON Threads::Threads m)
set_target_properties(nodegate-gpu-synth PROPERTIES
  C_VISIBILITY_PRESET hidden
  LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})
