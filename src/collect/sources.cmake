# src/collect/: runs tools and probes, reads the node and NVML; never decides.
# Every source of this folder is listed here, and only here.
set(NG_COLLECT_SOURCES
  bounded.c
  cpu_features.c
  evidence_compute.c
  evidence_fabric.c
  evidence_memory.c
  evidence_storage.c
  evidence_xid.c
  gpu_backend_load.c
  gpu_kernel.c
  gpu_nvml_sampler.c
  harness.c
  ib_ports.c
  identity.c
  identity_cpu.c
  identity_devices.c
  identity_host.c
  identity_read.c
  identity_smbios.c
  identity_software.c
  identity_template.c
  job_steps.c
  nvml.c
  nvml_p2p.c
  probe_cpu.c
  probe_gpu_common.c
  probe_gpu_compute.c
  probe_gpu_copy.c
  probe_gpu_memory.c
  probe_hostmem.c
  probe_storage.c
  spawn.c
)
list(TRANSFORM NG_COLLECT_SOURCES PREPEND ${CMAKE_CURRENT_LIST_DIR}/)
