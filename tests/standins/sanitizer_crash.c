/* Makes the error its argument names, so the sanitizer build's test can see
 * which status a sanitizer exits with: "heap" (a heap buffer overflow, ASan),
 * "leak" (LeakSanitizer), "shift" (undefined behaviour, UBSan). Exits 0 when
 * the sanitizer did not stop it: the build is not sanitized. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";
	volatile int n = argc + 30;
	if (strcmp(what, "heap") == 0) {
		char *p = calloc(8, 1);
		volatile char c = p ? p[n] : 0;
		(void)c;
		free(p);
	} else if (strcmp(what, "leak") == 0) {
		char *volatile p = malloc(64);
		p[0] = 1;
		p = NULL;
	} else if (strcmp(what, "shift") == 0) {
		volatile int x = 1 << n;
		(void)x;
	} else {
		fprintf(stderr, "usage: sanitizer_crash heap|leak|shift\n");
		return 2;
	}
	printf("sanitizer_crash %s: not stopped: this build is not sanitized\n", what);
	return 0;
}
