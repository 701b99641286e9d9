/* What the end-to-end runners share (flow/testing/test_env.h). */
#include "flow/testing/test_env.h"

#include <errno.h>
#include <ftw.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

extern char **environ;

void ng_env_unset_prefix(const char *prefix)
{
	size_t pl = strlen(prefix);
	for (;;) {
		char name[256] = "";
		for (char **e = environ; e && *e; e++)
			if (strncmp(*e, prefix, pl) == 0) {
				const char *eq = strchr(*e, '=');
				size_t l = eq ? (size_t)(eq - *e) : strlen(*e);
				if (l < sizeof name) {
					memcpy(name, *e, l);
					name[l] = '\0';
					break;
				}
			}
		if (!name[0])
			return;
		unsetenv(name); /* environ changes under it: scan again from the start */
	}
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)ftw;
	return (flag == FTW_DP ? rmdir(path) : unlink(path)) < 0 && errno != ENOENT ? -1 : 0;
}

int ng_remove_tree(const char *dir)
{
	return nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}
