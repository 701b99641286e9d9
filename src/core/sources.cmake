# src/core/: records, verdicts, policy, errors, time, JSON, the safe file writer (pure).
# Every source of this folder is listed here, and only here.
set(NG_CORE_SOURCES
  atomic_file.c
  clock.c
  error.c
  gpu.c
  gpu_json.c
  gpu_wire.c
  json.c
  json_duplicates.c
  json_file.c
  json_path.c
  metric.c
  policy.c
  policy_digest.c
  policy_file.c
  policy_json.c
  read_file.c
  record_build.c
  sha256.c
  stats.c
  strbuf.c
  verdict.c
)
list(TRANSFORM NG_CORE_SOURCES PREPEND ${CMAKE_CURRENT_LIST_DIR}/)
