# src/land/: scontrol, kubectl, the --on-verdict hook, Prometheus metrics.
# Every source of this folder is listed here, and only here.
set(NG_LAND_SOURCES
  hook.c
  kube.c
  metrics.c
  metrics_gpu.c
  metrics_repeat.c
  metrics_shadow.c
  slurm.c
  slurm_features.c
)
list(TRANSFORM NG_LAND_SOURCES PREPEND ${CMAKE_CURRENT_LIST_DIR}/)
