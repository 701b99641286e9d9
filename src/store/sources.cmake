# src/store/: SQLite and PostgreSQL behind one interface.
# Every source of this folder is listed here, and only here.
set(NG_STORE_SOURCES
  audit.c
  audit_anchor.c
  audit_state.c
  baselines.c
  cases.c
  cohort_mirror.c
  cohort_runs.c
  config_errors.c
  fabric_peers.c
  gpus.c
  node_names.c
  nodes.c
  policies.c
  probation.c
  records.c
  report_queries.c
  schema.c
  sql_common.c
  sql_pg.c
  sql_sqlite.c
  sql_sqlite_file.c
  sqlite_lib.c
  store.c
)
list(TRANSFORM NG_STORE_SOURCES PREPEND ${CMAKE_CURRENT_LIST_DIR}/)
