/* What both SQL drivers share: how a statement is named in a message, and
 * the error class of a failed open (there is no connection to ask). */
#include <stdbool.h>
#include <string.h>

#include "store/sql.h"

static _Thread_local ng_sql_error open_error;

ng_sql_error ng_sql_open_error(void) { return open_error; }
void ng_sql_note_open_error(ng_sql_error e) { open_error = e; }

void ng_sql_snippet(const char *sql, char *out, size_t cap)
{
	size_t n = 0;
	bool space = false;
	const char *p = sql;
	for (; *p && n + 4 < cap && n < 60; p++) {
		bool ws = *p == ' ' || *p == '\t' || *p == '\n' || *p == '\r';
		if (ws && (space || n == 0))
			continue;
		space = ws;
		out[n++] = ws ? ' ' : *p;
	}
	while (n && out[n - 1] == ' ')
		n--;
	out[n] = '\0';
	if (p[strspn(p, " \t\r\n")])
		memcpy(out + n, "...", 4);
}
