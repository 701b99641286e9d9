# src/flow/: orchestration over collect, store and land; never prints.
# Every source of this folder is listed here, and only here.
set(NG_FLOW_SOURCES
  admit_json.c
  admit_judge.c
  admit_land.c
  admit_profile.c
  admit_queue.c
  admit_run.c
  class_baseline.c
  ctx.c
  evidence.c
  gate_batch.c
  gpu_check.c
  gpu_check_each.c
  gpu_check_inventory.c
  gpu_check_result.c
  gpu_check_store.c
  gpu_check_xid.c
  gpu_forget.c
  gpu_readings.c
  lemon.c
  policy_history.c
  probation.c
  promote.c
  records_in.c
  redecide.c
  replay.c
  replay_gpu.c
  replay_model.c
  report_model.c
  report_model_fr.c
  report_model_hours.c
  report_model_map.c
  report_model_truth.c
  shadow.c
)
list(TRANSFORM NG_FLOW_SOURCES PREPEND ${CMAKE_CURRENT_LIST_DIR}/)
