/* libFuzzer target for /proc/self/mountstats (parse/proc_text.h's
 * ng_mountstats_parse). For any bytes: at most cap mounts, each an NFS
 * mount with NUL-terminated names and a mount point that starts with /;
 * each operation named in capitals, digits and _, with at least one call,
 * and no more than NG_NFS_OPS_MAX of them; the mounts read plus the device
 * lines refused never exceed the lines given. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parse/proc_text.h"

static void require(int ok)
{
	if (!ok)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static ng_nfs_mount m[8];
	size_t lines = size ? 1 : 0;
	for (size_t i = 0; i < size; i++)
		lines += data[i] == '\n';
	size_t bad = 0;
	size_t n = ng_mountstats_parse((const char *)data, size, m, 8, &bad);
	require(n <= 8 && n + bad <= lines);
	for (size_t i = 0; i < n; i++) {
		require(memchr(m[i].device, '\0', sizeof m[i].device) != NULL);
		require(memchr(m[i].mountpoint, '\0', sizeof m[i].mountpoint) != NULL);
		require(m[i].mountpoint[0] == '/');
		require(strcmp(m[i].fstype, "nfs") == 0 || strcmp(m[i].fstype, "nfs4") == 0);
		require(m[i].n_ops <= NG_NFS_OPS_MAX);
		for (size_t k = 0; k < m[i].n_ops; k++) {
			const ng_nfs_op *op = &m[i].op[k];
			require(memchr(op->name, '\0', sizeof op->name) != NULL && op->name[0]);
			require(strspn(op->name, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") ==
			        strlen(op->name));
			require(op->ops > 0);
		}
	}
	return 0;
}
