/* The policy digest: SHA-256 over "name=value" lines of every policy value in
 * the registry's order, then "floor:metric=value" lines sorted by metric, so
 * the order floors were written in a file does not make a new version. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/policy_digest.h"
#include "core/sha256.h"
#include "core/strbuf.h"

static int by_metric(const void *a, const void *b)
{
	const struct ng_policy_floor *x = a, *y = b;
	return strcmp(x->metric, y->metric);
}

void ng_policy_digest(const ng_policy *p, char out[NG_POLICY_DIGEST_LEN])
{
	ng_strbuf text = {0};
	for (size_t i = 0; i < ng_policy_param_count(); i++) {
		ng_strbuf_printf(&text, "%s=", ng_policy_param_name(i));
		ng_policy_param_value(p, i, &text);
		ng_strbuf_addc(&text, '\n');
	}
	struct ng_policy_floor floors[NG_FLOORS_MAX];
	size_t n = p->n_floors < NG_FLOORS_MAX ? p->n_floors : NG_FLOORS_MAX;
	memcpy(floors, p->floors, n * sizeof floors[0]);
	qsort(floors, n, sizeof floors[0], by_metric);
	for (size_t i = 0; i < n; i++) {
		ng_strbuf_printf(&text, "floor:%s=", floors[i].metric);
		ng_strbuf_add_double(&text, floors[i].value);
		ng_strbuf_addc(&text, '\n');
	}
	char hex[65];
	ng_sha256_hex(text.s ? text.s : "", text.len, hex);
	ng_strbuf_free(&text);
	snprintf(out, NG_POLICY_DIGEST_LEN, "pol-%.12s", hex);
}
