/* The GPU check's result as text: one line per GPU, the notes, and the
 * verdict last (the JSON is the flow's: flow/gpu_check_result.c). */
#include <stdarg.h>
#include <stdio.h>

#include "cli/gpu_check.h"
#include "core/strbuf.h"
#include "flow/gpu_check_run.h"

/* One line of the text report, with control characters escaped: names and
 * messages come from the environment (SLURMD_NODENAME), NVML and scontrol,
 * and a newline in one of them must not forge another line. */
static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	char buf[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	ng_strbuf line = {0};
	ng_strbuf_add_printable(&line, buf);
	printf("%s\n", line.s ? line.s : "");
	ng_strbuf_free(&line);
}

void ng_gpu_check_print_text(const ng_gpu_check_result *c)
{
	for (size_t i = 0; c->health && i < c->health->n_gpus; i++) {
		const ng_gpu_verdict *v = &c->health->gpu[i];
		ng_strbuf g = {0};
		ng_strbuf_printf(&g, "GPU %-3d %-10s %-40s %-*s", v->index, v->bus[0] ? v->bus : "-",
		                 v->uuid[0] ? v->uuid : "-", v->n_reasons ? 9 : 0,
		                 ng_health_name(v->severity));
		for (size_t k = 0; k < v->n_reasons; k++)
			ng_strbuf_printf(&g, "%s%s: %s", k ? "; " : " ",
			                 v->reason[k].signal ? v->reason[k].signal : "", v->reason[k].text);
		if (v->reasons_truncated)
			ng_strbuf_adds(&g, "; ...");
		say("%s", g.s ? g.s : "");
		ng_strbuf_free(&g);
	}
	const cJSON *n;
	cJSON_ArrayForEach(n, c->notes)
		say("note: %s", n->valuestring);
	size_t checked = c->health ? c->health->n_gpus : 0;
	/* The verdict stays the last line: what landing did comes before it. */
	if (c->landed)
		say("%s: landing: slurm: %s", ng_check_mode_name(c->mode),
		    c->land_rc < 0 && c->land_error[0] ? c->land_error : c->slurm.message);
	if (c->drain)
		say("%s: %s: drain: %s", ng_check_mode_name(c->mode), c->outcome, c->why);
	else if (c->why[0])
		say("%s: %s: %s: no drain", ng_check_mode_name(c->mode), c->outcome, c->why);
	else
		say("%s: %s: %zu GPU%s checked: no drain", ng_check_mode_name(c->mode), c->outcome,
		    checked, checked == 1 ? "" : "s");
}
