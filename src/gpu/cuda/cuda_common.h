/* Private to the CUDA backend (src/gpu/cuda/): error text, device contexts,
 * the known values the kernels write and check, and the launch shapes. */
#ifndef NODEGATE_GPU_CUDA_COMMON_H
#define NODEGATE_GPU_CUDA_COMMON_H

#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

#include "collect/gpu_backend.h"

#define NG_CUDA_HIDDEN __attribute__((visibility("hidden")))

/* Most devices one process drives (the throttle table's size). */
#define NG_CUDA_MAX_DEVICES 64

/* ---- error text --------------------------------------------------------- */

/* Writes "<what> on GPU <dev>: <the runtime's text for e>" into why (dev < 0
 * leaves out " on GPU n"), clears the runtime's last error, and returns
 * NG_GPU_EFAIL. what is a printf format. */
NG_CUDA_HIDDEN int ng_cuda_fail(char *why, int dev, cudaError_t e, const char *what, ...)
	__attribute__((format(printf, 4, 5)));
/* The same without a runtime error: "GPU <dev>: <what>". */
NG_CUDA_HIDDEN int ng_cuda_failmsg(char *why, int dev, const char *what, ...)
	__attribute__((format(printf, 3, 4)));
/* "8.0 GiB", "512.0 MiB", "4096 bytes". */
NG_CUDA_HIDDEN const char *ng_cuda_size(uint64_t bytes, char *buf, size_t len);

/* Evaluates a runtime call; on failure returns ng_cuda_fail(why, dev, e, ...)
 * from the enclosing function (after the caller's own cleanup, so only use
 * where nothing needs freeing, or jump instead). */
#define NG_CUDA_TRY(dev, why, call, ...)                                          \
	do {                                                                          \
		cudaError_t ng_e_ = (call);                                           \
		if (ng_e_ != cudaSuccess) return ng_cuda_fail((why), (dev), ng_e_, __VA_ARGS__); \
	} while (0)

/* cudaSetDevice(dev), with the error text. Every entry point starts here:
 * the current device is per host thread. */
NG_CUDA_HIDDEN int ng_cuda_use(int dev, char *why);

/* The references' timing: one untimed cudaMemcpy of bytes from src to dst
 * (what says which way, "host to device"), then reps more between events on
 * the default stream; *seconds is their device time. */
NG_CUDA_HIDDEN int ng_cuda_timed_memcpy(int dev, void *dst, const void *src, uint64_t bytes,
                                        cudaMemcpyKind kind, const char *what, unsigned reps,
                                        double *seconds, char *why);

/* Device time between two events recorded on the same stream, after
 * synchronising on the second. */
NG_CUDA_HIDDEN int ng_cuda_elapsed(int dev, cudaEvent_t start, cudaEvent_t stop, double *seconds,
                                   char *why);

/* Blocks for a grid-stride kernel over the whole device: enough resident
 * threads to keep every SM full (blocks of NG_CUDA_THREADS). */
#define NG_CUDA_THREADS 256
NG_CUDA_HIDDEN int ng_cuda_grid(int dev, unsigned *blocks, char *why);

/* ---- the planted slowdown ----------------------------------------------- */

/* The share of its time's work gemm_run delivers on dev (1: all of it). */
NG_CUDA_HIDDEN double ng_cuda_throttle_share(int dev);
/* Queues a kernel on stream that keeps the GPU busy for ns nanoseconds of
 * wall time (the device's global timer). */
NG_CUDA_HIDDEN cudaError_t ng_cuda_spin(cudaStream_t stream, unsigned blocks, uint64_t ns);

/* Loads a kernel onto the current device now rather than at its first
 * launch (the runtime loads lazily), so that no timed launch pays for it and
 * a GPU this library has no code for says so at setup. */
#define NG_CUDA_PRELOAD(dev, why, kernel)                                               \
	do {                                                                            \
		cudaFuncAttributes ng_fa_;                                              \
		cudaError_t ng_pe_ = cudaFuncGetAttributes(&ng_fa_, (const void *)(kernel)); \
		if (ng_pe_ != cudaSuccess)                                              \
			return ng_cuda_fail((why), (dev), ng_pe_, "loading %s", #kernel); \
	} while (0)
/* The spin kernel, loaded (backend.cu). */
NG_CUDA_HIDDEN int ng_cuda_spin_preload(int dev, char *why);
/* The pattern kernels, loaded (mem.cu). */
NG_CUDA_HIDDEN int ng_cuda_pattern_preload(int dev, char *why);

/* ---- cuBLAS, loaded at run time ------------------------------------------ */

/* 1 when libcublas was found and has the four entry points. */
NG_CUDA_HIDDEN int ng_cublas_available(void);

/* ---- known values ----------------------------------------------------------- */

/* splitmix64's output for the (i + 1)-th step from seed: a counter-based
 * hash, the same on the host and the device. */
__host__ __device__ static inline uint64_t ng_splitmix64(uint64_t seed, uint64_t i)
{
	uint64_t z = seed + (i + 1) * 0x9E3779B97F4A7C15ull;
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* The memory probe's patterns. pass 1 is the walking pattern's complement. */
__host__ __device__ static inline uint64_t ng_pattern_word(int pattern, uint64_t seed, uint64_t i,
                                                           int pass)
{
	switch (pattern) {
	case NG_GPU_PATTERN_ADDRESS:
		return i * 8u;
	case NG_GPU_PATTERN_WALKING: {
		uint64_t w = 1ull << (i & 63u);
		return pass ? ~w : w;
	}
	default:
		return ng_splitmix64(seed, i);
	}
}

/* Writes the pattern over words[0, n) and checks it. The check adds the
 * number of mismatched words to *wrong and records the byte offsets of up to
 * max of them in offsets[], counting every recording attempt in *slots. */
NG_CUDA_HIDDEN cudaError_t ng_cuda_pattern_write(cudaStream_t s, unsigned blocks, uint64_t *words,
                                                 uint64_t n, int pattern, uint64_t seed, int pass);
NG_CUDA_HIDDEN cudaError_t ng_cuda_pattern_check(cudaStream_t s, unsigned blocks,
                                                 const uint64_t *words, uint64_t n, int pattern,
                                                 uint64_t seed, int pass,
                                                 unsigned long long *wrong, unsigned *slots,
                                                 uint64_t *offsets, unsigned max);

#endif
