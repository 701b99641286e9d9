# src/flow/: orchestration over collect, store and land; never prints.
# Every source of this folder is listed here, and only here.
set(NG_FLOW_SOURCES
  ctx.c
)
list(TRANSFORM NG_FLOW_SOURCES PREPEND ${CMAKE_CURRENT_LIST_DIR}/)
