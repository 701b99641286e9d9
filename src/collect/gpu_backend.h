/* The GPU probes' backend: the few device operations the GPU probes need,
 * behind a table of functions that nodegate loads at run time.
 *
 * nodegate itself never links CUDA. The probes' host side
 * (collect/probe_gpu*.c: timing, sampling, verification bookkeeping, sibling
 * comparison, records) calls a backend through this table, found by dlopen:
 *   libnodegate-gpu-cuda.so   built with nvcc when CMake finds a CUDA
 *                             compiler (src/gpu/cuda/): the CUDA runtime,
 *                             cuBLAS loaded at run time where present, and
 *                             kernels of ours
 *   libnodegate-gpu-synth.so  synthetic GPUs for tests (src/synth/): answers
 *                             from the scenario file $NODEGATE_SYNTH_GPUS,
 *                             the same file the synthetic NVML reads, with
 *                             timings that follow the rates it names
 * $NODEGATE_GPU_BACKEND names the library to load; unset, nodegate looks for
 * libnodegate-gpu-cuda.so beside its own executable, then in its library
 * directory. No backend, no driver or no GPU is a record with no samples that
 * says why, never a number.
 *
 * The library exports one symbol, ng_gpu_backend_v1, a function returning
 * the table. This header is C and C++ (the CUDA backend is compiled as
 * CUDA C++).
 *
 * Conventions for every function:
 *   - returns 0 on success, or NG_GPU_ENOTAPPLICABLE (the operation does not
 *     apply: no peer access between these two GPUs), or NG_GPU_EFAIL with a
 *     one-line reason in why[NG_GPU_WHY] (the runtime's own error text);
 *   - times are measured on the device (events around the work), in seconds;
 *   - a context (void *) belongs to one device and is used by one thread at a
 *     time; different devices' contexts may be used from different threads
 *     at once (the probes drive every GPU at the same time);
 *   - nothing is printed. */
#ifndef NODEGATE_COLLECT_GPU_BACKEND_H
#define NODEGATE_COLLECT_GPU_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NG_GPU_BACKEND_ABI 1
#define NG_GPU_BACKEND_SYMBOL "ng_gpu_backend_v1"
#define NG_GPU_WHY 256

enum {
	NG_GPU_OK = 0,
	NG_GPU_EFAIL = -1,
	NG_GPU_ENOTAPPLICABLE = -2,
};

/* Integrity patterns of the memory probe, written and verified on the device. */
enum ng_gpu_pattern {
	NG_GPU_PATTERN_ADDRESS = 0, /* each 64-bit word holds its own byte offset */
	NG_GPU_PATTERN_WALKING = 1, /* word i holds 1 << (i % 64), then its complement */
	NG_GPU_PATTERN_RANDOM = 2,  /* a counter-based hash of (seed, i): splitmix64 */
	NG_GPU_PATTERN_COUNT
};

/* Copy paths of the copy probe. */
enum ng_gpu_path {
	NG_GPU_PATH_H2D = 0, /* pinned host memory to the device */
	NG_GPU_PATH_D2H = 1, /* the device to pinned host memory */
	NG_GPU_PATH_P2P = 2, /* device src to device dst, peer to peer */
};

struct ng_gpu_device {
	char name[96];
	char uuid[96];       /* "GPU-xxxxxxxx-xxxx-...", as NVML writes it */
	char pci_bus_id[32]; /* "0000:18:00.0" */
	uint64_t total_bytes, free_bytes;
	int cc_major, cc_minor;
	int sm_count;
};

/* Known inputs for the GEMM: A[i][k] and B[k][j] are small integers from
 * (i, k) and (k, j) (exact in bf16), so every element of C = A x B is an
 * exact integer in fp32 that the backend compares on the device with the
 * value computed from the same formula. */
struct ng_gpu_backend {
	unsigned abi;     /* NG_GPU_BACKEND_ABI */
	const char *name; /* "cuda", "synthetic" */

	/* Starts the runtime. *count: the GPUs it sees (0 is not an error).
	 * *version: runtime and driver versions, "cuda 13.0 / driver 580.65". */
	int (*init)(int *count, char *version, size_t version_len, char *why);
	int (*describe)(int dev, struct ng_gpu_device *d, char *why);

	/* ---- compute: an n x n x n GEMM, bf16 inputs, fp32 accumulate ---------- */
	/* engine receives "cublas" or "kernel" (ours, when cuBLAS is absent). */
	int (*gemm_setup)(int dev, unsigned n, void **ctx, char *engine, size_t engine_len, char *why);
	/* reps GEMMs back to back; *seconds is their device time. */
	int (*gemm_run)(void *ctx, unsigned reps, double *seconds, char *why);
	/* Compares the last result with the known answer: *wrong elements of
	 * *checked mismatched. */
	int (*gemm_verify)(void *ctx, uint64_t *wrong, uint64_t *checked, char *why);
	void (*gemm_teardown)(void *ctx);

	/* ---- GPU memory --------------------------------------------------------- */
	/* Allocates bytes (a whole number of 64-bit words) on dev. */
	int (*mem_setup)(int dev, uint64_t bytes, void **ctx, char *why);
	/* Writes pattern (seeded when random) over the whole buffer, then reads
	 * it back on the device: *wrong words mismatched; the byte offsets of
	 * the first of them (up to max_offsets) go to offsets[], *n_offsets of
	 * them. corrupt_word >= 0 flips one bit of that word between the write
	 * and the check (a planted fault, for the device check and tests). */
	int (*mem_pattern)(void *ctx, enum ng_gpu_pattern pattern, uint64_t seed, int64_t corrupt_word,
	                   uint64_t *wrong, uint64_t *offsets, unsigned max_offsets,
	                   unsigned *n_offsets, char *why);
	/* reps passes of our copy kernel from one half of the buffer to the
	 * other; *bytes read plus written, *seconds device time. */
	int (*mem_copy)(void *ctx, unsigned reps, uint64_t *bytes, double *seconds, char *why);
	void (*mem_teardown)(void *ctx);

	/* ---- copy paths ---------------------------------------------------------- */
	/* src and dst are devices (for H2D src is ignored, for D2H dst is).
	 * P2P between GPUs without peer access is NG_GPU_ENOTAPPLICABLE. */
	int (*copy_setup)(enum ng_gpu_path path, int src, int dst, uint64_t bytes, void **ctx,
	                  char *why);
	/* reps copies of bytes; *seconds device time. */
	int (*copy_run)(void *ctx, unsigned reps, double *seconds, char *why);
	/* Fills the source with a seeded pattern, copies once, checks the
	 * destination: *wrong 64-bit words mismatched. */
	int (*copy_verify)(void *ctx, uint64_t seed, uint64_t *wrong, char *why);
	void (*copy_teardown)(void *ctx);

	/* ---- references, for bench/ only ----------------------------------------- */
	/* The vendor's own rate at the same work, timed the same way:
	 * cuBLAS bf16 GEMM (cublasGemmEx, fp32 compute) of n; cudaMemcpy
	 * device-to-device of bytes (bytes read plus written = 2 x bytes);
	 * cudaMemcpy from pinned host memory of bytes. NG_GPU_ENOTAPPLICABLE
	 * when the backend has no such reference (cuBLAS missing). */
	int (*ref_gemm)(int dev, unsigned n, unsigned reps, double *seconds, char *why);
	int (*ref_d2d)(int dev, uint64_t bytes, unsigned reps, double *seconds, char *why);
	int (*ref_h2d)(int dev, uint64_t bytes, unsigned reps, double *seconds, char *why);

	/* ---- a planted slowdown, for the device check -------------------------- */
	/* While set, gemm_run on dev does only part of its time's work: the
	 * backend keeps the GPU busy with a spin kernel for (1 - share) of each
	 * batch, as a throttled GPU would deliver less. share 1 ends it. */
	int (*throttle)(int dev, double share, char *why);
};

typedef const struct ng_gpu_backend *(*ng_gpu_backend_fn)(void);

#ifdef __cplusplus
}
#endif

#endif
