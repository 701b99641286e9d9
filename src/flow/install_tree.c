#include "flow/install_tree.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

int ng_self_path(char *self, size_t cap, char *dir, size_t dcap)
{
	ssize_t n = readlink("/proc/self/exe", self, cap - 1);
	if (n <= 0)
		return -1;
	self[n] = '\0';
	const char *slash = strrchr(self, '/');
	if (!slash || (size_t)(slash - self) >= dcap)
		return -1;
	memcpy(dir, self, (size_t)(slash - self));
	dir[slash - self] = '\0';
	return 0;
}

int ng_shipped_path(const char *in_build, const char *in_install, char *out, size_t cap)
{
	char self[4096], dir[4000];
	if (ng_self_path(self, sizeof self, dir, sizeof dir) < 0) {
		snprintf(out, cap, "%s", in_install);
		return -1;
	}
	if (in_build) {
		snprintf(out, cap, "%s/%s", dir, in_build);
		if (access(out, F_OK) == 0)
			return 0;
	}
	snprintf(out, cap, "%s/../%s", dir, in_install);
	return access(out, F_OK) == 0 ? 0 : -1;
}
