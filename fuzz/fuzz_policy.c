/* libFuzzer target: a policy file. Either it is refused with a message and
 * the policy is unchanged, or every value it leaves is within its range. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "core/policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	ng_err err;
	cJSON *doc = ng_json_parse(text, size, &err);
	if (doc) {
		ng_policy p, before;
		ng_policy_default(&p);
		memcpy(&before, &p, sizeof p);
		if (ng_policy_apply_json(&p, doc, "fuzz", &err) != 0) {
			if (memcmp(&p, &before, sizeof p) != 0)
				abort(); /* a refused policy must change nothing */
		} else if (!(p.warn > 0 && p.warn <= p.block && p.block < 1 && p.fast > 1 &&
		             p.slow > 0 && p.slow < 1 && p.cohort_min >= 1 && p.clear_after >= 1 &&
		             p.escalate_after >= 1 && p.n_required_diag <= NG_DIAG_MAX &&
		             p.health_deadline_seconds >= 1 && p.health_retired_pages_per_day >= 0 &&
		             p.health_remapped_rows_per_day >= 0 && p.health_pcie_replays_per_hour >= 0 &&
		             p.health_nvlink_errors_per_hour >= 0 && p.health_replays_absolute >= 1 &&
		             p.health_clock_ratio_under_load > 0 && p.health_clock_ratio_under_load <= 1 &&
		             p.health_rate_min_hours > 0)) {
			abort();
		}
		ng_strbuf s = {0};
		for (size_t i = 0; i < ng_policy_param_count(); i++)
			ng_policy_param_value(&p, i, &s);
		ng_strbuf_free(&s);
		cJSON_Delete(doc);
	}
	free(text);
	return 0;
}
