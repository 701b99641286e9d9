# src/judge/: the gate, hysteresis, admission, breaker, GPU health and the report's rules (pure;
# compiled into nodegate_core).
# Every source of this folder is listed here, and only here.
set(NG_JUDGE_SOURCES
  admit.c
  attribution.c
  baseline.c
  breaker.c
  evidence_summary.c
  fabric.c
  false_reject.c
  gate.c
  gpu_health.c
  gpu_hours.c
  gpu_series.c
  gpu_siblings.c
  hysteresis.c
  lemon.c
  probation.c
  prolog_ask.c
  record.c
  samples_summary.c
)
list(TRANSFORM NG_JUDGE_SOURCES PREPEND ${CMAKE_CURRENT_LIST_DIR}/)
