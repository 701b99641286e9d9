/* libFuzzer target for the admission queue's reads of scontrol: `scontrol
 * show node` features and comment (land/slurm_features.c) and `scontrol
 * show job` for the Prolog's question (judge/prolog_ask.c). For any bytes:
 * the parsed lists are NUL-terminated within their buffers; editing a list
 * adds the word once and drops the other, and editing again changes
 * nothing; a parsed job's comment and features are NUL-terminated and its
 * node count is not negative. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "judge/prolog_ask.h"
#include "land/slurm_features.h"

static void require(int ok)
{
	if (!ok)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	ng_slurm_features f;
	if (ng_slurm_parse_features(text, &f) == 0) {
		require(memchr(f.available, '\0', sizeof f.available) != NULL);
		require(memchr(f.active, '\0', sizeof f.active) != NULL);
		char once[NG_SLURM_FEATURES_MAX + 32], twice[NG_SLURM_FEATURES_MAX + 32];
		if (ng_slurm_feature_edit(f.active, NG_SLURM_ADMITTED_FEATURE, NG_SLURM_UNSCREENED_FEATURE,
		                          once, sizeof once) == 0) {
			require(ng_slurm_feature_has(once, NG_SLURM_ADMITTED_FEATURE));
			require(!ng_slurm_feature_has(once, NG_SLURM_UNSCREENED_FEATURE));
			require(ng_slurm_feature_edit(once, NG_SLURM_ADMITTED_FEATURE,
			                              NG_SLURM_UNSCREENED_FEATURE, twice, sizeof twice) == 0);
			require(strcmp(once, twice) == 0);
		}
	}
	ng_prolog_job j;
	if (ng_prolog_job_parse(text, &j) == 0) {
		require(memchr(j.features, '\0', sizeof j.features) != NULL);
		require(memchr(j.comment, '\0', sizeof j.comment) != NULL);
		require(j.num_nodes >= 0);
		ng_policy pol;
		ng_policy_default(&pol);
		pol.prolog_min_nodes = 4;
		char why[256];
		(void)ng_prolog_job_asks(&pol, &j, why, sizeof why);
		require(memchr(why, '\0', sizeof why) != NULL);
	}
	free(text);
	return 0;
}
