# src/parse/: tools' output into records (pure).
# Every source of this folder is listed here, and only here.
set(NG_PARSE_SOURCES
  dcgmi.c
  dcgmi_json.c
  dcgmi_outcome.c
  dcgmi_text.c
  help.c
  ib_counters.c
  job_gpus.c
  launcher.c
  nccl_tests.c
  nccl_tests_json.c
  nccl_tests_records.c
  nccl_tests_text.c
  nccl_transport.c
  nvbandwidth.c
  nvbandwidth_json.c
  nvbandwidth_records.c
  nvbandwidth_text.c
  nvidia_proc.c
  nvidia_smi.c
  nvidia_smi_json.c
  parsers.c
  perftest.c
  perftest_records.c
  perftest_text.c
  proc_text.c
  sacct.c
  sacct_json.c
  sacct_steps.c
  text.c
  topology.c
  xid.c
  xid_json.c
  xid_stream.c
)
list(TRANSFORM NG_PARSE_SOURCES PREPEND ${CMAKE_CURRENT_LIST_DIR}/)
