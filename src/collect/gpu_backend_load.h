/* Finding and starting the GPU probes' backend (collect/gpu_backend.h).
 *
 * The library is $NODEGATE_GPU_BACKEND when set; else
 * libnodegate-gpu-cuda.so beside the running executable, or in its ../lib;
 * else whatever dlopen finds under that name (LD_LIBRARY_PATH, the system's
 * library directories).
 * Every way this can fail (no library, no symbol, another ABI, a runtime
 * that will not start, no GPU) is a reason for people, never a crash: the
 * probes turn it into records with no samples that say why. */
#ifndef NODEGATE_COLLECT_GPU_BACKEND_LOAD_H
#define NODEGATE_COLLECT_GPU_BACKEND_LOAD_H

#include <stddef.h>

#include "collect/gpu_backend.h"

#define NG_GPU_BACKEND_LIB "libnodegate-gpu-cuda.so"
#define NG_GPU_DEVICES_MAX 64

struct ng_gpu_loaded {
	void *handle; /* dlopen handle; NULL for a table given in-process */
	const struct ng_gpu_backend *be;
	char path[4096];   /* what was opened ("(in-process)" for a given table) */
	char version[256]; /* what init said */
	int count;         /* GPUs described in dev[] */
	struct ng_gpu_device dev[NG_GPU_DEVICES_MAX];
};

/* Loads, checks and starts the backend, and describes every GPU it sees.
 * 0 with at least one GPU; else why (NG_GPU_WHY bytes or more) and g
 * holding nothing to close: NG_GPU_LOAD_ABSENT when no backend is installed
 * at all (none named, none beside nodegate, none on the library path), -1
 * for every other failure (one that is there but will not load or start,
 * no GPU). */
#define NG_GPU_LOAD_ABSENT (-2)
int ng_gpu_backend_open(struct ng_gpu_loaded *g, char *why, size_t why_len);

/* The same from a table already at hand (tests drive the probes with a
 * fake backend this way); path names it in records. */
int ng_gpu_backend_use(struct ng_gpu_loaded *g, const struct ng_gpu_backend *be,
                       const char *path, char *why, size_t why_len);

/* Unloads what ng_gpu_backend_open loaded; g is then empty. */
void ng_gpu_backend_close(struct ng_gpu_loaded *g);

/* The library ng_gpu_backend_open would try first, for messages and
 * records: $NODEGATE_GPU_BACKEND, else the one beside the executable. */
void ng_gpu_backend_candidate(char *out, size_t len);

#endif
