/* SQLite, loaded at run time (store/sqlite_lib.h).
 *
 * Every start of the binary used to map libsqlite3 and resolve its symbols,
 * though most starts open no store: `--version`, `epilog --no-store`, the
 * parsers, `policy check`. That was the largest single part of nodegate's
 * start-up past the C library (about 0.2 ms of a 1.2 ms start, measured by
 * linking an empty program against each library in turn). As libpq is for a
 * PostgreSQL store, SQLite is loaded when a SQLite store is opened. */
#define NG_SQLITE_LIB_SELF
#include "store/sqlite_lib.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#define NG_LIBSQLITE_DEFAULT "libsqlite3.so.0"

struct ng_sqlite_lib ng_sqlite;

int ng_sqlite_load(const char *where, ng_err *err)
{
	if (ng_sqlite.lib)
		return 0;
	const char *path = getenv("NODEGATE_LIBSQLITE");
	if (!path || !*path)
		path = NG_LIBSQLITE_DEFAULT;
	void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		const char *why = dlerror();
		return ng_fail_as(err, NG_ERR_STORE,
		                  "%s is a SQLite store, and the SQLite library cannot be loaded (%s: %s): "
		                  "install it (Debian: libsqlite3-0)",
		                  where, path, why ? why : "not found");
	}
	struct ng_sqlite_lib t = {.lib = lib};
#define NG_SQLITE_LOAD(f)                                                                        \
	t.fn_##f = (__typeof__(t.fn_##f))dlsym(lib, #f);                                           \
	if (!t.fn_##f) {                                                                           \
		dlclose(lib);                                                                          \
		return ng_fail_as(err, NG_ERR_STORE,                                                   \
		                  "%s: the SQLite library %s has no %s: it is not SQLite 3, or too old", \
		                  where, path, #f);                                                    \
	}
	NG_SQLITE_FUNCTIONS(NG_SQLITE_LOAD)
#undef NG_SQLITE_LOAD
	ng_sqlite = t;
	return 0;
}
