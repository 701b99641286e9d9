/* Linked into nodegate only in the sanitizer build (NODEGATE_SANITIZE).
 *
 * A sanitizer's report otherwise exits 1, which is also nodegate's answer
 * "held", "suspect" or "drain": a test that expects exit 1 would pass on a
 * memory error. Every sanitizer here exits 86 instead, a status no verb
 * uses (cli/cmd.h: 0 to 3). The test environment sets the same through
 * ASAN_OPTIONS and UBSAN_OPTIONS; these defaults hold when a test runs
 * nodegate with an environment of its own. */
#define NG_SANITIZER_EXIT "86"

const char *__asan_default_options(void);
const char *__ubsan_default_options(void);
const char *__lsan_default_options(void);

__attribute__((used, visibility("default"))) const char *__asan_default_options(void)
{
	return "exitcode=" NG_SANITIZER_EXIT;
}

__attribute__((used, visibility("default"))) const char *__ubsan_default_options(void)
{
	return "halt_on_error=1:print_stacktrace=1:exitcode=" NG_SANITIZER_EXIT;
}

__attribute__((used, visibility("default"))) const char *__lsan_default_options(void)
{
	return "exitcode=" NG_SANITIZER_EXIT;
}
