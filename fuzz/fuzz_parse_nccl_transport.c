/* libFuzzer target for the NCCL transport reader and the rule that judges
 * it. For any bytes: names are printable and bounded, the kind is one of
 * four, the JSON summary prints, and a run judged to be on the intended
 * path showed IB channels and no socket channel. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "judge/fabric.h"
#include "parse/nccl_transport.h"

static void require(int ok)
{
	if (!ok)
		abort();
}

static void printable(const char *s, size_t cap)
{
	size_t n = strnlen(s, cap);
	require(n < cap);
	for (size_t i = 0; i < n; i++)
		require((unsigned char)s[i] > 0x20 && (unsigned char)s[i] < 0x7f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	ng_nccl_transport t;
	ng_nccl_transport_read(text, size, &t);
	require(t.n_ib <= NG_NT_MAX_DEVICES && t.n_socket <= NG_NT_MAX_DEVICES);
	for (size_t i = 0; i < t.n_ib; i++)
		printable(t.ib[i], NG_NT_NAME);
	for (size_t i = 0; i < t.n_socket; i++)
		printable(t.socket[i], NG_NT_NAME);
	printable(t.network, NG_NT_NAME);
	const char *kind = ng_nccl_transport_kind(&t);
	require(!strcmp(kind, "ib") || !strcmp(kind, "socket") || !strcmp(kind, "other") ||
	        !strcmp(kind, "unseen"));
	cJSON *j = ng_nccl_transport_json(&t);
	if (j) {
		char *out = cJSON_PrintUnformatted(j);
		require(out != NULL);
		free(out);
		char why[256];
		const char *hcas[] = {"mlx5_0", "mlx5_1"};
		ng_fabric_path p = {hcas, 2, false};
		if (ng_fabric_transport_ok(j, &p, why, sizeof why))
			require(strcmp(kind, "ib") == 0 && t.via_socket == 0);
		else
			require(why[0] != '\0');
		cJSON_Delete(j);
	}
	free(text);
	return 0;
}
