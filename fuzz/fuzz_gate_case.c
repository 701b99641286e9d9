/* libFuzzer target: one batch case, as raw bytes, through everything the gate
 * reads it with: the JSON parser, the record/baseline/cohort readers, the rule
 * and hysteresis. Any input must give a verdict or a clean refusal, never a
 * crash, a leak or undefined behaviour; and the rule must never call a run
 * admissible when it says a sample or #wrong was unusable. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "judge/record.h"
#include "judge/hysteresis.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';

	static ng_policy pol;
	static int ready;
	if (!ready) {
		ng_policy_default(&pol);
		ready = 1;
	}
	ng_err err;
	cJSON *doc = ng_json_parse(text, size, &err);
	if (doc && cJSON_IsObject(doc)) {
		ng_json_source src = {text, size, doc};
		ng_gate_input in = {0};
		const cJSON *rec = ng_json_get(doc, "record");
		if (rec && ng_gate_input_record(&in, rec, &src, &err) == 0 &&
		    ng_gate_input_baseline(&in, ng_json_get(doc, "baseline"), &err) == 0 &&
		    ng_gate_input_cohort_json(&in, ng_json_get(doc, "cohort_drops"), &err) == 0) {
			ng_gate_trace t;
			ng_verdict v = ng_gate_input_judge(&in, &pol, &t);
			if (v != t.verdict)
				abort();
			/* Fail closed: an admissible verdict needs usable evidence. */
			if (ng_verdict_admissible(v)) {
				if (in.rec.wrong_kind != NG_WRONG_VALUE || in.rec.wrong != 0 ||
				    in.rec.n_samples == 0)
					abort();
				for (size_t i = 0; i < in.rec.n_samples; i++)
					if (!(isfinite(in.rec.samples[i]) && in.rec.samples[i] > 0))
						abort();
			}
			ng_hist_kind hist[4] = {NG_HIST_PASS, NG_HIST_WARN, NG_HIST_HARD, NG_HIST_OTHER};
			ng_hysteresis h;
			if (ng_with_hysteresis(v, hist, size % 5, size & 1, 1 + size % 3, 1 + size % 4, &h) != 0)
				abort();
			if (ng_verdict_hard(v) && (h.effective != v || !h.blocked))
				abort();
		}
		ng_gate_input_free(&in);
	}
	cJSON_Delete(doc);
	free(text);
	return 0;
}
