/* dcgmi diag: from the tests read to the diag map and the outcome. DCGM's
 * own faults and the node's configuration are told apart from the GPU's
 * failures; the exit status decides who is told. */
#include "parse/dcgmi_int.h"

/* ----------------------------------------------------------- summarising */

/* DCGM's words for a fault of its own harness, not of the GPU: DCGM's
 * documentation and the runbook warn these come from host software,
 * permissions and other processes on the node. */
static bool harness_words(const char *t)
{
	return strstr(t, "There was an internal error during the test") || strstr(t, "internal error") ||
	       strstr(t, "couldn't be parsed") || strstr(t, "could not be parsed") ||
	       (strstr(t, "child process") && strstr(t, "exited with non-zero status"));
}

/* The node-side configuration a failure names (not its hardware), or NULL. */
static const char *config_words(const char *t)
{
	if (strcasestr(t, "persistence mode") &&
	    (strcasestr(t, "disabled") || strcasestr(t, "not enabled") || strcasestr(t, " off")))
		return "persistence mode is off";
	if (strcasestr(t, "fabric manager") || strcasestr(t, "fabricmanager"))
		return "the fabric manager is not running";
	if (strstr(t, "cuInit"))
		return "cuInit fails (on NVSwitch systems, the fabric manager is not running)";
	return NULL;
}

/* The first warning of obj whose text matches, or NULL. */
static const char *warning_matching(const cJSON *obj, bool harness, const char **what)
{
	const cJSON *ws = ng_json_get(obj, "warnings");
	for (const cJSON *w = cJSON_IsArray(ws) ? ws->child : NULL; w; w = w->next) {
		const cJSON *t = ng_json_get(w, "text");
		if (!cJSON_IsString(t))
			continue;
		if (harness && harness_words(t->valuestring))
			return t->valuestring;
		if (!harness && (*what = config_words(t->valuestring)))
			return t->valuestring;
	}
	return NULL;
}

/* How one Fail result reads: DCGM's own fault, the node's configuration,
 * or neither (a failure of the GPU). */
enum fault { FAULT_NONE, FAULT_GPU, FAULT_HARNESS, FAULT_CONFIG };

static void note_harness(struct summary *s, const cJSON *test, const char *h)
{
	const char *name = dg_label_of(test, "name");
	if (s->n_harness++ && s->harness.s && strstr(s->harness.s, name))
		return;
	if (s->harness.len)
		ng_strbuf_adds(&s->harness, ", ");
	ng_strbuf_printf(&s->harness, "%s (\"%.120s\")", name, h);
}

/* A Fail whose words are DCGM's internal error did not test the GPU: it
 * becomes skip (not completed), keeping DCGM's status and words beside it.
 * A Fail naming a configuration stays fail and is given its cause. inherit
 * is how the result's own entities read, for a test-wide Fail with no words
 * of its own. */
static enum fault classify_one(cJSON *obj, const cJSON *test, struct summary *s, enum fault inherit)
{
	if (dg_rank_of(ng_json_get(obj, "status")) != R_FAIL)
		return FAULT_NONE;
	const char *what = NULL;
	const char *h = warning_matching(obj, true, &what);
	const char *cfg = h ? NULL : warning_matching(obj, false, &what);
	bool own_words = cJSON_GetArraySize(ng_json_get(obj, "warnings")) > 0;
	enum fault f = h ? FAULT_HARNESS : cfg ? FAULT_CONFIG : own_words ? FAULT_GPU : inherit;
	if (f == FAULT_HARNESS) {
		ng_json_set(obj, "status", cJSON_CreateString("skip"));
		ng_json_set(obj, "cause", cJSON_CreateString("harness"));
		if (h) {
			ng_json_set(obj, "harness_fault", dg_json_str(h, strlen(h)));
			note_harness(s, test, h);
		}
	} else if (f == FAULT_CONFIG) {
		ng_json_set(obj, "cause", cJSON_CreateString("configuration"));
		if (what && !s->config_what)
			s->config_what = what;
	}
	return f == FAULT_NONE ? FAULT_GPU : f;
}

/* Entities first: a test-wide Fail without words of its own reads as its
 * entities do when they all agree (a GPU's failure whenever one is). */
static void classify_faults(struct dcgm *c, struct summary *s, int *config_fails, int *fails)
{
	for (cJSON *t = c->tests ? c->tests->child : NULL; t; t = t->next) {
		enum fault agreed = FAULT_NONE;
		bool mixed = false;
		cJSON *ents = cJSON_GetObjectItemCaseSensitive(t, "entities");
		for (cJSON *e = cJSON_IsArray(ents) ? ents->child : NULL; e; e = e->next) {
			enum fault f = classify_one(e, t, s, FAULT_GPU);
			if (f == FAULT_NONE)
				continue;
			if (f == FAULT_GPU || f == FAULT_CONFIG)
				(*fails)++, *config_fails += f == FAULT_CONFIG;
			if (agreed != FAULT_NONE && agreed != f)
				mixed = true;
			agreed = f;
		}
		enum fault f = classify_one(t, t, s, mixed || agreed == FAULT_NONE ? FAULT_GPU : agreed);
		/* A test-wide Fail echoing its entities is not a failure more. */
		if ((f == FAULT_GPU || f == FAULT_CONFIG) && agreed == FAULT_NONE)
			(*fails)++, *config_fails += f == FAULT_CONFIG;
		else if (f == FAULT_GPU && mixed)
			(*fails)++;
	}
}

static int entity_worst(const cJSON *test, int worst)
{
	const cJSON *ents = ng_json_get(test, "entities");
	for (const cJSON *e = cJSON_IsArray(ents) ? ents->child : NULL; e; e = e->next) {
		int r = dg_rank_of(ng_json_get(e, "status"));
		if (r > worst)
			worst = r;
	}
	return worst;
}

/* Severity facts and the first warning text of one failing test or entity. */
static void scan_failure(const cJSON *obj, struct summary *s, const char **first, int *coded,
                         int *config)
{
	const cJSON *ws = ng_json_get(obj, "warnings");
	for (const cJSON *w = cJSON_IsArray(ws) ? ws->child : NULL; w; w = w->next) {
		const cJSON *t = ng_json_get(w, "text"), *sev = ng_json_get(w, "error_severity");
		if (!*first && cJSON_IsString(t))
			*first = t->valuestring;
		if (cJSON_IsNumber(sev)) {
			(*coded)++;
			if (sev->valuedouble == SEV_ISOLATE)
				s->isolate = true;
			if (sev->valuedouble == SEV_CONFIG)
				(*config)++;
		}
	}
}

static void describe_failure(const cJSON *test, struct summary *s, int *coded, int *config)
{
	const char *first = NULL;
	if (dg_rank_of(ng_json_get(test, "status")) == R_FAIL)
		scan_failure(test, s, &first, coded, config);
	const cJSON *ents = ng_json_get(test, "entities");
	for (const cJSON *e = cJSON_IsArray(ents) ? ents->child : NULL; e; e = e->next)
		if (dg_rank_of(ng_json_get(e, "status")) == R_FAIL)
			scan_failure(e, s, &first, coded, config);
	if (s->failed.len)
		ng_strbuf_adds(&s->failed, ", ");
	ng_strbuf_adds(&s->failed, dg_label_of(test, "name"));
	const char *disp = dg_label_of(test, "display_name");
	if (first)
		ng_strbuf_printf(&s->failed, " (%s%s%.120s%s)", strcmp(disp, dg_label_of(test, "name")) ? disp : "",
		                 strcmp(disp, dg_label_of(test, "name")) ? ": " : "", first,
		                 strlen(first) > 120 ? "..." : "");
}

/* Gives every test its worst status and merges them by name into s->map
 * (the diag the record gets when the run may be judged on it). */
void dg_summarise(struct dcgm *c, struct summary *s)
{
	int coded = 0, config = 0, config_fails = 0, fails = 0;
	classify_faults(c, s, &config_fails, &fails);
	s->map = cJSON_CreateObject();
	for (cJSON *t = c->tests ? c->tests->child : NULL; t; t = t->next) {
		int worst = entity_worst(t, dg_rank_of(ng_json_get(t, "status")));
		if (worst < 0) {
			dg_problem(c, "test %s: no status was printed for it; read as skip", dg_label_of(t, "display_name"));
			worst = R_SKIP;
		}
		ng_json_set(t, "status", cJSON_CreateString(dg_rank_names[worst]));
		s->n_tests++;
		if (worst == R_FAIL)
			describe_failure(t, s, &coded, &config);
		const char *name = dg_label_of(t, "name");
		if (dg_rank_of(ng_json_get(s->map, name)) < worst)
			ng_json_set(s->map, name, cJSON_CreateString(dg_rank_names[worst]));
	}
	s->config_coded = coded > 0 && coded == config;
	s->config_only = s->config_coded || (fails > 0 && fails == config_fails);
	if (s->config_only)
		ng_json_set(c->detail, "cause", cJSON_CreateString("configuration"));
	else
		s->config_what = NULL;
	for (const cJSON *d = s->map ? s->map->child : NULL; d; d = d->next) {
		int r = dg_rank_of(d);
		if (r == R_FAIL)
			s->n_fail++;
		ng_strbuf *b = r == R_PASS ? &s->passed : r == R_SKIP ? &s->skipped : NULL;
		if (b) {
			if (b->len)
				ng_strbuf_adds(b, ", ");
			ng_strbuf_adds(b, d->string);
		}
	}
}

/* Whether the gate may read the parsed results as this run's diag. Not when
 * the exit status voids them (a signal, 203, 204, 217, 226 without a failing
 * test, any other error) nor when it contradicts passes (205 with nothing
 * failed): a diag of passes there would let the gate pass the node, while
 * no diag holds it as diag-incomplete. */
bool dg_diag_allowed(ng_run_status st, const struct summary *s)
{
	int x = st.exit_status;
	if (st.signal > 0)
		return false;
	/* DCGM's own fault explains a 226: the diag then says which tests did
	 * not complete. */
	return x <= 0 || ((x == 205 || x == 226) && s->n_fail > 0) || (x == 226 && s->n_harness > 0);
}

/* "; DCGM's own harness failed in ...": the tests counted as not completed. */
static void harness_note(const struct summary *s, ng_strbuf *b, bool lead)
{
	if (!s->n_harness)
		return;
	ng_strbuf_printf(b, "%sDCGM's own harness failed in %s, so %s not completed, not failed; fix the "
	                    "harness (host software, permissions, other processes on the GPUs: run it with the "
	                    "node to itself) and rerun",
	                 lead ? "" : "; ", s->harness.s, s->n_harness > 1 ? "those tests are" : "that test is");
}

int dg_cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;
	return (x > y) - (x < y);
}

/* ------------------------------------------------------------- outcome */

static const char *or_none(const ng_strbuf *b) { return b->len ? b->s : "none"; }

/* The outcome when the exit status says nothing beyond the results (0 or
 * unknown): what the parsed tests show. */
static void from_results(struct dcgm *c, const struct summary *s, bool readable, const char *unreadable,
                         struct verdict *v)
{
	if (!readable) {
		v->outcome = "harness";
		ng_strbuf_printf(&v->reason, "%s; fix the harness or DCGM and rerun, the node was not judged",
		                 unreadable);
	} else if (s->n_fail) {
		v->outcome = "node";
		ng_strbuf_printf(&v->reason, "DCGM reported failing tests: %s; route the node to its owner",
		                 s->failed.s);
		if (s->isolate)
			ng_strbuf_adds(&v->reason, " and drain it (DCGM rates a failure ISOLATE)");
		harness_note(s, &v->reason, false);
	} else if (s->n_harness) {
		v->outcome = "harness";
		harness_note(s, &v->reason, true);
	} else if (c->n_problems || c->runtime_error) {
		v->outcome = "harness";
		ng_strbuf_printf(&v->reason,
		                 "no DCGM test failed, but part of the output could not be read (%s); rerun "
		                 "and capture the complete output before trusting the passes",
		                 c->runtime_error ? "DCGM reported a runtime error" : "see detail.problems");
	} else {
		v->outcome = "clean";
		ng_strbuf_printf(&v->reason, "no DCGM test failed (passed: %s", or_none(&s->passed));
		if (s->skipped.len)
			ng_strbuf_printf(&v->reason, "; skipped: %s, and a skip is not a pass, so rerun "
			                             "those the gate requires)",
			                 s->skipped.s);
		else
			ng_strbuf_adds(&v->reason, ")");
	}
}

void dg_decide(struct dcgm *c, ng_run_status st, const struct summary *s, bool readable,
                   const char *unreadable, struct verdict *v)
{
	int x = st.exit_status;
	const char *basis = "exit status";
	if (st.signal > 0) {
		v->outcome = "harness";
		ng_strbuf_printf(&v->reason, "dcgmi was killed by signal %d, so nothing it printed is a "
		                             "verdict; rerun it and check for a timeout or an interrupt",
		                 st.signal);
	} else if (x == 205) {
		v->outcome = "node";
		ng_strbuf_adds(&v->reason, "dcgmi exited 205: DCGM reports a condition that requires isolating "
		                           "the GPU; drain the node and hand it to its owner");
		if (s->n_fail)
			ng_strbuf_printf(&v->reason, " (failed: %s)", s->failed.s);
		else if (!readable)
			ng_strbuf_printf(&v->reason, " (%s; keep the raw output as evidence)", unreadable);
	} else if (x == 226 && s->n_fail) {
		v->outcome = "node";
		ng_strbuf_printf(&v->reason, "dcgmi exited 226 and DCGM reported failing tests: %s; route the "
		                             "node to its owner",
		                 s->failed.s);
		if (!readable)
			ng_strbuf_printf(&v->reason, " (%s)", unreadable);
		harness_note(s, &v->reason, false);
	} else if (x == 226 && s->n_harness) {
		v->outcome = "harness";
		ng_strbuf_adds(&v->reason, "dcgmi exited 226: ");
		harness_note(s, &v->reason, true);
	} else if (x == 226) {
		v->outcome = "harness";
		ng_strbuf_printf(&v->reason, "dcgmi exited 226 but no test failed in its output (%s): DCGM "
		                             "returns 226 for harness faults too, such as a failed child wait "
		                             "or a malformed response; check the host engine log and rerun",
		                 readable ? "all results read" : unreadable);
	} else if (x == 217) {
		v->outcome = "harness";
		ng_strbuf_adds(&v->reason, "dcgmi exited 217: another DCGM diagnostic was already running; "
		                           "wait for it to finish and rerun");
	} else if (x == 204) {
		v->outcome = "harness";
		ng_strbuf_adds(&v->reason, "dcgmi exited 204: the NVVS binary was not found; repair the DCGM "
		                           "installation and rerun");
	} else if (x == 203) {
		v->outcome = "harness";
		ng_strbuf_adds(&v->reason, "dcgmi exited 203: the NVVS process was killed; rerun, and check "
		                           "for a timeout, an OOM kill or an interrupt");
	} else if (x > 128 && x <= 128 + 64) {
		v->outcome = "harness";
		ng_strbuf_printf(&v->reason, "dcgmi exited %d (128+%d: killed by signal %d), which describes "
		                             "the process and not the GPUs; rerun it",
		                 x, x - 128, x - 128);
	} else if (x > 0) {
		v->outcome = "harness";
		ng_strbuf_printf(&v->reason, "dcgmi exited %d, which is not a diagnostic result (%s); fix the "
		                             "cause and rerun",
		                 x, readable ? "a DCGM error code" : unreadable);
	} else {
		basis = "results";
		from_results(c, s, readable, unreadable, v);
		if (x == 0 && s->n_fail && readable)
			ng_strbuf_adds(&v->reason, ", although dcgmi exited 0");
	}
	if (!strcmp(v->outcome, "node") && s->config_only && s->config_what)
		ng_strbuf_printf(&v->reason, "; the failure is the node's configuration, not its hardware (%s%s): "
		                             "fix the configuration and rerun",
		                 s->config_what, s->config_coded ? "; DCGM rates it severity CONFIG" : "");
	else if (!strcmp(v->outcome, "node") && s->config_only)
		ng_strbuf_adds(&v->reason, "; DCGM classes every coded failure as a configuration problem "
		                           "(severity CONFIG), so fix the node's configuration, not its hardware");
	if (x < 0 && st.signal <= 0)
		ng_strbuf_adds(&v->reason, " (exit status unknown: outcome derived from the parsed results alone)");
	ng_json_set(c->detail, "outcome_basis", cJSON_CreateString(basis));
}
