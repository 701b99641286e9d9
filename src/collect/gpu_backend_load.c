/* Finding and starting the GPU backend (see gpu_backend_load.h). */
#include "collect/gpu_backend_load.h"

#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The executable's directory, from /proc/self/exe; "" when unreadable. */
static void self_dir(char *dir, size_t len)
{
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	dir[0] = '\0';
	if (n <= 0)
		return;
	self[n] = '\0';
	char *slash = strrchr(self, '/');
	if (slash && (size_t)(slash - self) < len) {
		memcpy(dir, self, (size_t)(slash - self));
		dir[slash - self] = '\0';
	}
}

void ng_gpu_backend_candidate(char *out, size_t len)
{
	const char *env = getenv("NODEGATE_GPU_BACKEND");
	if (env && *env) {
		snprintf(out, len, "%s", env);
		return;
	}
	/* Short enough that the directory and the file name fit any caller's
	 * 4096-byte path. */
	char dir[4000];
	self_dir(dir, sizeof dir);
	if (dir[0])
		snprintf(out, len, "%s/%s", dir, NG_GPU_BACKEND_LIB);
	else
		snprintf(out, len, "%s", NG_GPU_BACKEND_LIB);
}

/* One line of dlerror, with nothing of ours left unterminated. */
static const char *dl_reason(void)
{
	const char *e = dlerror();
	return e ? e : "unknown dlopen error";
}

/* dlopen of the configured library, or of the ones nodegate looks for.
 * *absent: none is installed at all. */
static void *open_library(char *path, size_t path_len, bool *absent, char *why, size_t why_len)
{
	const char *env = getenv("NODEGATE_GPU_BACKEND");
	void *h;
	if (env && *env) {
		snprintf(path, path_len, "%s", env);
		h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		if (!h)
			snprintf(why, why_len, "cannot load the GPU backend $NODEGATE_GPU_BACKEND=%s: %s",
			         env, dl_reason());
		return h;
	}
	/* Beside the executable (a build tree), then its ../lib/nodegate (an
	 * install: bin/nodegate, lib/nodegate/libnodegate-gpu-cuda.so), then ../lib. One that is there but
	 * does not load is the reason: a broken install is not "no backend". */
	char dir[4000];
	self_dir(dir, sizeof dir);
	for (int i = 0; i < (dir[0] ? 3 : 1); i++) {
		if (i == 0)
			ng_gpu_backend_candidate(path, path_len);
		else if (i == 1)
			snprintf(path, path_len, "%s/../lib/nodegate/%s", dir, NG_GPU_BACKEND_LIB);
		else
			snprintf(path, path_len, "%s/../lib/%s", dir, NG_GPU_BACKEND_LIB);
		if (access(path, F_OK) != 0)
			continue;
		h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		if (!h)
			snprintf(why, why_len, "cannot load the GPU backend %s: %s", path, dl_reason());
		return h;
	}
	snprintf(path, path_len, "%s", NG_GPU_BACKEND_LIB);
	h = dlopen(NG_GPU_BACKEND_LIB, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *e = dl_reason();
		/* dlerror names the file it could not find first: ours, or a
		 * library ours needs (then ours is installed, and broken). */
		*absent = strncmp(e, NG_GPU_BACKEND_LIB ":", strlen(NG_GPU_BACKEND_LIB) + 1) == 0;
		snprintf(why, why_len,
		         "no GPU backend: %s is neither beside nodegate, nor in its ../lib, nor on the "
		         "library path (%s); "
		         "build nodegate where CUDA is installed, or set NODEGATE_GPU_BACKEND",
		         NG_GPU_BACKEND_LIB, e);
	}
	return h;
}

/* Every entry the probes call: a table missing one is refused at load, not
 * discovered as a NULL call in the middle of a run. */
static const char *missing_entry(const struct ng_gpu_backend *be)
{
	if (!be->init) return "init";
	if (!be->describe) return "describe";
	if (!be->gemm_setup) return "gemm_setup";
	if (!be->gemm_run) return "gemm_run";
	if (!be->gemm_verify) return "gemm_verify";
	if (!be->gemm_teardown) return "gemm_teardown";
	if (!be->mem_setup) return "mem_setup";
	if (!be->mem_pattern) return "mem_pattern";
	if (!be->mem_copy) return "mem_copy";
	if (!be->mem_teardown) return "mem_teardown";
	if (!be->copy_setup) return "copy_setup";
	if (!be->copy_run) return "copy_run";
	if (!be->copy_verify) return "copy_verify";
	if (!be->copy_teardown) return "copy_teardown";
	if (!be->throttle) return "throttle";
	return NULL;
}

int ng_gpu_backend_use(struct ng_gpu_loaded *g, const struct ng_gpu_backend *be,
                       const char *path, char *why, size_t why_len)
{
	char bwhy[NG_GPU_WHY] = "";
	memset(g, 0, sizeof *g);
	snprintf(g->path, sizeof g->path, "%s", path ? path : "(in-process)");
	if (!be) {
		snprintf(why, why_len, "the GPU backend %s returned no table", g->path);
		return -1;
	}
	if (be->abi != NG_GPU_BACKEND_ABI) {
		snprintf(why, why_len, "the GPU backend %s has ABI %u, this nodegate needs %u: "
		         "rebuild it with this nodegate", g->path, be->abi, NG_GPU_BACKEND_ABI);
		return -1;
	}
	const char *missing = missing_entry(be);
	if (missing) {
		snprintf(why, why_len, "the GPU backend %s lacks its %s function", g->path, missing);
		return -1;
	}
	int count = -1;
	if (be->init(&count, g->version, sizeof g->version, bwhy) != NG_GPU_OK) {
		bwhy[NG_GPU_WHY - 1] = '\0';
		snprintf(why, why_len, "the GPU backend (%s) could not start: %s",
		         be->name ? be->name : g->path, bwhy[0] ? bwhy : "no reason given");
		return -1;
	}
	g->version[sizeof g->version - 1] = '\0';
	if (count <= 0) {
		snprintf(why, why_len, "the GPU backend (%s, %s) sees no GPU", be->name ? be->name : g->path,
		         g->version);
		return -1;
	}
	if (count > NG_GPU_DEVICES_MAX) {
		snprintf(why, why_len, "the GPU backend sees %d GPUs; nodegate handles at most %d", count,
		         NG_GPU_DEVICES_MAX);
		return -1;
	}
	for (int i = 0; i < count; i++) {
		struct ng_gpu_device *d = &g->dev[i];
		memset(d, 0, sizeof *d);
		if (be->describe(i, d, bwhy) != NG_GPU_OK) {
			bwhy[NG_GPU_WHY - 1] = '\0';
			snprintf(why, why_len, "the GPU backend could not describe GPU %d: %s", i,
			         bwhy[0] ? bwhy : "no reason given");
			return -1;
		}
		/* The table is another library's: never trust its strings' ends. */
		d->name[sizeof d->name - 1] = '\0';
		d->uuid[sizeof d->uuid - 1] = '\0';
		d->pci_bus_id[sizeof d->pci_bus_id - 1] = '\0';
	}
	g->be = be;
	g->count = count;
	return 0;
}

int ng_gpu_backend_open(struct ng_gpu_loaded *g, char *why, size_t why_len)
{
	memset(g, 0, sizeof *g);
	char path[4096];
	bool absent = false;
	void *h = open_library(path, sizeof path, &absent, why, why_len);
	if (!h)
		return absent ? NG_GPU_LOAD_ABSENT : -1;
	dlerror();
	void *sym = dlsym(h, NG_GPU_BACKEND_SYMBOL);
	if (!sym) {
		snprintf(why, why_len, "%s is not a nodegate GPU backend: it has no %s (%s)", path,
		         NG_GPU_BACKEND_SYMBOL, dl_reason());
		dlclose(h);
		return -1;
	}
	ng_gpu_backend_fn fn;
	/* dlsym returns a data pointer; POSIX guarantees the conversion. */
	memcpy(&fn, &sym, sizeof fn);
	if (ng_gpu_backend_use(g, fn(), path, why, why_len) < 0) {
		dlclose(h);
		memset(g, 0, sizeof *g);
		return -1;
	}
	g->handle = h;
	return 0;
}

void ng_gpu_backend_close(struct ng_gpu_loaded *g)
{
	if (g->handle)
		dlclose(g->handle);
	memset(g, 0, sizeof *g);
}
