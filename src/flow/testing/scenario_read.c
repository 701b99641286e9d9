/* Reading the scenarios of `nodegate scenarios` (flow/testing/scenario.h): every key
 * checked, every name and path refused that could reach outside the run. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json_file.h"
#include "flow/testing/scenario.h"
#include "core/json.h"

/* ---- reading the scenarios ---------------------------------------------------------- */

static bool valid_name(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > NAME_MAX_LEN)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
			return false;
	return true;
}

/* "07-remap-failure.json" -> "remap-failure" (the digits and dash are an order). */
static void name_of_file(const char *base, char *out, size_t cap)
{
	const char *p = base;
	while (*p >= '0' && *p <= '9')
		p++;
	if (p != base && *p == '-')
		p++;
	else
		p = base;
	snprintf(out, cap, "%.*s", (int)(strlen(p) > 5 ? strlen(p) - 5 : 0), p);
}

static bool string_array(const cJSON *a)
{
	if (!cJSON_IsArray(a))
		return false;
	const cJSON *e;
	cJSON_ArrayForEach(e, a)
		if (!cJSON_IsString(e))
			return false;
	return true;
}

static bool env_name_ok(const char *k)
{
	if (strncmp(k, "SLURM_", 6) != 0 || !k[6])
		return false;
	for (const char *p = k; *p; p++)
		if (!((*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_'))
			return false;
	return true;
}

/* A PCI address as a directory name: "0000:18:00.0" and nothing else. */
static bool pci_name_ok(const char *s)
{
	unsigned d, b, v, f;
	char tail;
	return strlen(s) == 12 && sscanf(s, "%4x:%2x:%2x.%1x%c", &d, &b, &v, &f, &tail) == 4;
}

static int check_kernel(const cJSON *k, const char *file, ng_err *err)
{
	if (!cJSON_IsObject(k))
		return ng_fail(err, "%s: \"kernel\" must be an object", file);
	const cJSON *m;
	cJSON_ArrayForEach(m, k) {
		if (strcmp(m->string, "boot_id") == 0 && cJSON_IsString(m))
			continue;
		if (strcmp(m->string, "gpus") != 0 || !cJSON_IsArray(m))
			return ng_fail(err, "%s: kernel \"%s\": only \"boot_id\" (a string) and \"gpus\" (a list)",
			               file, m->string);
		const cJSON *g;
		cJSON_ArrayForEach(g, m) {
			const cJSON *bus = ng_json_get(g, "bus"), *drv = ng_json_get(g, "driver"),
			            *minor = ng_json_get(g, "minor"), *uuid = ng_json_get(g, "uuid"),
			            *ex = ng_json_get(g, "excluded");
			if (ex && !cJSON_IsBool(ex))
				return ng_fail(err, "%s: kernel gpus: \"excluded\" is true or false", file);
			if (!cJSON_IsObject(g) || !cJSON_IsString(bus) || !pci_name_ok(bus->valuestring))
				return ng_fail(err, "%s: kernel gpus: each needs \"bus\" like \"0000:18:00.0\"", file);
			if ((drv && !(cJSON_IsString(drv) && drv->valuestring[0] && !strchr(drv->valuestring, '/'))) ||
			    (minor && !(cJSON_IsNumber(minor) && minor->valuedouble >= 0 && minor->valuedouble < 256)) ||
			    (uuid && !cJSON_IsString(uuid)))
				return ng_fail(err, "%s: kernel gpus: \"driver\" a name, \"minor\" 0-255, \"uuid\" a string",
				               file);
		}
	}
	return 0;
}

static int read_body(struct scenario *s, const cJSON *d, ng_err *err);

int ng_scenario_load(struct scenario *s, const char *dir, const char *base, ng_err *err)
{
	snprintf(s->file, sizeof s->file, "%s/%s", dir, base);
	char *text;
	size_t len;
	s->doc = ng_load_json_file(s->file, &text, &len, err);
	if (!s->doc)
		return -1;
	free(text);
	const cJSON *d = s->doc;
	static const char *const keys[] = {"name", "about", "env", "args", "kmsg", "library",
	                                   "expect", "synthetic", "mode", "kernel", "runs", "store"};
	const cJSON *m;
	cJSON_ArrayForEach(m, d) {
		bool known = false;
		for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
			known = known || strcmp(m->string, keys[i]) == 0;
		if (!known)
			return ng_fail(err, "%s: unknown key \"%s\"", s->file, m->string);
	}
	char from_file[64];
	name_of_file(base, from_file, sizeof from_file);
	const cJSON *name = ng_json_get(d, "name");
	if (!cJSON_IsString(name) || !valid_name(name->valuestring))
		return ng_fail(err, "%s: \"name\" must be a short name of a-z, 0-9 and -", s->file);
	if (strcmp(name->valuestring, from_file) != 0)
		return ng_fail(err, "%s: \"name\" is \"%s\" but the file is named for \"%s\"", s->file,
		               name->valuestring, from_file);
	snprintf(s->name, sizeof s->name, "%s", name->valuestring);
	const cJSON *runs = ng_json_get(d, "runs"), *store = ng_json_get(d, "store");
	if (store && !cJSON_IsBool(store))
		return ng_fail(err, "%s: \"store\" is true or false", s->file);
	s->keep_store = cJSON_IsTrue(store);
	if (!runs)
		return read_body(s, d, err);
	if (!cJSON_IsArray(runs) || cJSON_GetArraySize(runs) < 1 || cJSON_GetArraySize(runs) > 16)
		return ng_fail(err, "%s: \"runs\" is a list of 1 to 16 runs", s->file);
	s->n_runs = (size_t)cJSON_GetArraySize(runs);
	if (!(s->run = calloc(s->n_runs, sizeof *s->run)))
		return ng_fail(err, "out of memory");
	size_t k = 0;
	const cJSON *r;
	cJSON_ArrayForEach(r, runs) {
		struct scenario *one = &s->run[k++];
		snprintf(one->file, sizeof one->file, "%.4000s (run %zu)", s->file, k);
		snprintf(one->name, sizeof one->name, "%s", s->name);
		if (!cJSON_IsObject(r))
			return ng_fail(err, "%s: each run is an object of scenario keys", one->file);
		cJSON *merged = cJSON_Duplicate(d, 1);
		one->doc = merged;
		if (!merged)
			return ng_fail(err, "out of memory");
		cJSON_DeleteItemFromObjectCaseSensitive(merged, "runs");
		cJSON_DeleteItemFromObjectCaseSensitive(merged, "store");
		const cJSON *m2;
		cJSON_ArrayForEach(m2, r) {
			bool known = false;
			for (size_t i = 2; i < 10; i++)
				known = known || strcmp(m2->string, keys[i]) == 0;
			if (!known)
				return ng_fail(err, "%s: unknown key \"%s\" in a run", one->file, m2->string);
			cJSON_DeleteItemFromObjectCaseSensitive(merged, m2->string);
			cJSON_AddItemToObject(merged, m2->string, cJSON_Duplicate(m2, 1));
		}
		if (read_body(one, merged, err) < 0)
			return -1;
	}
	/* The table's row is the last run's. */
	s->want_severity = s->run[s->n_runs - 1].want_severity;
	return 0;
}

/* Everything but the name: what to run and what to expect. */
static int read_body(struct scenario *s, const cJSON *d, ng_err *err)
{
	const cJSON *m;
	s->env = ng_json_get(d, "env");
	if (s->env) {
		if (!cJSON_IsObject(s->env))
			return ng_fail(err, "%s: \"env\" must be an object", s->file);
		cJSON_ArrayForEach(m, s->env)
			if (!env_name_ok(m->string) || !cJSON_IsString(m))
				return ng_fail(err, "%s: env \"%s\": only SLURM_* variables, as strings", s->file,
				               m->string);
	}
	s->args = ng_json_get(d, "args");
	if (s->args && !string_array(s->args))
		return ng_fail(err, "%s: \"args\" must be a list of strings", s->file);
	s->kmsg = ng_json_get(d, "kmsg");
	if (s->kmsg && !string_array(s->kmsg))
		return ng_fail(err, "%s: \"kmsg\" must be a list of lines", s->file);
	const cJSON *lib = ng_json_get(d, "library");
	if (lib && !(cJSON_IsString(lib) && (strcmp(lib->valuestring, "synthetic") == 0 ||
	                                     strcmp(lib->valuestring, "missing") == 0)))
		return ng_fail(err, "%s: \"library\" is \"synthetic\" or \"missing\"", s->file);
	s->missing_library = lib && strcmp(lib->valuestring, "missing") == 0;
	const cJSON *mode = ng_json_get(d, "mode");
	s->mode = "epilog";
	if (mode) {
		if (!cJSON_IsString(mode) || (strcmp(mode->valuestring, "epilog") != 0 &&
		                              strcmp(mode->valuestring, "prolog") != 0 &&
		                              strcmp(mode->valuestring, "health") != 0))
			return ng_fail(err, "%s: \"mode\" is \"epilog\", \"prolog\" or \"health\"", s->file);
		s->mode = mode->valuestring;
	}
	s->kernel = ng_json_get(d, "kernel");
	if (s->kernel && check_kernel(s->kernel, s->file, err) < 0)
		return -1;
	s->synthetic = ng_json_get(d, "synthetic");
	if (!s->missing_library && !cJSON_IsObject(s->synthetic))
		return ng_fail(err, "%s: \"synthetic\" (the GPUs) must be an object", s->file);

	const cJSON *ex = ng_json_get(d, "expect");
	const cJSON *sev = ng_json_get(ex, "severity"), *drain = ng_json_get(ex, "drain"),
	            *ext = ng_json_get(ex, "exit"), *max = ng_json_get(ex, "max_seconds");
	if (!cJSON_IsString(sev) || !cJSON_IsBool(drain) || !cJSON_IsNumber(ext) ||
	    (max && !(cJSON_IsNumber(max) && max->valuedouble > 0)))
		return ng_fail(err, "%s: \"expect\" needs severity (a name), drain (true or false) and "
		                    "exit (a number), and max_seconds is a number above 0",
		               s->file);
	s->want_severity = sev->valuestring;
	s->want_drain = cJSON_IsTrue(drain);
	s->want_exit = (int)ext->valuedouble;
	s->max_seconds = max ? max->valuedouble : 0;
	return 0;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The scenario files of dir, sorted; *n of them. */
char **ng_scenario_list(const char *dir, size_t *n, ng_err *err)
{
	DIR *d = opendir(dir);
	if (!d) {
		ng_fail(err, "cannot read the scenario directory %s: %s (give --dir)", dir,
		        strerror(errno));
		return NULL;
	}
	char **names = calloc(SCENARIOS_MAX, sizeof *names);
	bool failed = !names;
	if (failed)
		ng_fail(err, "out of memory");
	*n = 0;
	struct dirent *de;
	while (!failed && (de = readdir(d))) {
		size_t l = strlen(de->d_name);
		if (l < 6 || strcmp(de->d_name + l - 5, ".json") != 0 || de->d_name[0] == '.')
			continue;
		if (*n == SCENARIOS_MAX) {
			failed = true;
			ng_fail(err, "%s: more than %d scenarios", dir, SCENARIOS_MAX);
		} else if (!(names[*n] = strdup(de->d_name))) {
			failed = true;
			ng_fail(err, "out of memory");
		} else {
			(*n)++;
		}
	}
	closedir(d);
	if (failed) {
		for (size_t i = 0; names && i < *n; i++)
			free(names[i]);
		free(names);
		return NULL;
	}
	qsort(names, *n, sizeof *names, cmp_names);
	return names;
}

int ng_scenarios_load(const char *dir, struct scenario **out, size_t *n,
                      void (*problem)(void *arg, const char *msg), void *arg)
{
	*out = NULL;
	*n = 0;
	ng_err err;
	size_t n_files = 0;
	char **files = ng_scenario_list(dir, &n_files, &err);
	if (!files) {
		problem(arg, err.msg);
		return -1;
	}
	struct scenario *sc = calloc(n_files ? n_files : 1, sizeof *sc);
	int rc = 0;
	for (size_t i = 0; sc && i < n_files; i++) {
		if (ng_scenario_load(&sc[*n], dir, files[i], &err) < 0) {
			problem(arg, err.msg);
			cJSON_Delete(sc[*n].doc);
			rc = -1;
			break;
		}
		for (size_t k = 0; k < *n; k++)
			if (strcmp(sc[k].name, sc[*n].name) == 0) {
				char msg[64];
				snprintf(msg, sizeof msg, "two scenarios named %s", sc[*n].name);
				problem(arg, msg);
				rc = -1;
			}
		(*n)++;
	}
	if (!sc) {
		problem(arg, "out of memory");
		rc = -1;
	}
	for (size_t i = 0; i < n_files; i++)
		free(files[i]);
	free(files);
	*out = sc;
	return rc;
}

void ng_scenarios_free(struct scenario *sc, size_t n)
{
	for (size_t i = 0; sc && i < n; i++) {
		for (size_t k = 0; k < sc[i].n_runs; k++)
			cJSON_Delete(sc[i].run[k].doc);
		free(sc[i].run);
		cJSON_Delete(sc[i].doc);
	}
	free(sc);
}
