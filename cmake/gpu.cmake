# The GPU probes' host side: the backend loader, the measurement loops and
# the NVML sampler (collect), the sibling and series rules (judge, pure),
# `nodegate probe gpu-compute|gpu-memory|gpu-copy` (cli), and the synthetic
# backend the tests drive them with. docs/gpu-probes.md.
target_sources(nodegate_judge PRIVATE
  src/judge/gpu_siblings.c
  src/judge/gpu_series.c
)
target_sources(nodegate_collect PRIVATE
  src/collect/gpu_backend_load.c
  src/collect/gpu_nvml_sampler.c
  src/collect/probe_gpu_common.c
  src/collect/probe_gpu_compute.c
  src/collect/probe_gpu_memory.c
  src/collect/probe_gpu_copy.c
)
target_sources(nodegate PRIVATE
  src/cli/probe_gpu_common.c
  src/cli/probe_gpu_compute.c
  src/cli/probe_gpu_memory.c
  src/cli/probe_gpu_copy.c
)

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
