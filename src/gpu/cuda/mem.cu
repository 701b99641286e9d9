/* The memory probe's operations: integrity patterns written and checked on
 * the device, and the bandwidth of our copy kernel; cudaMemcpy device to
 * device as the reference. */
#include <stdlib.h>
#include <string.h>

#include "gpu/cuda/cuda_common.h"

/* Offsets of mismatched words kept per pattern run. */
#define NG_MEM_MAX_OFFSETS 4096u

/* ---- pattern kernels (also used by copy.cu) ---------------------------------- */

__global__ void ng_pattern_write_kernel(uint64_t *__restrict__ w, uint64_t n, int pattern,
                                        uint64_t seed, int pass)
{
	const uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
	for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
		w[i] = ng_pattern_word(pattern, seed, i, pass);
}

/* Counts per thread and adds once; records offsets through a slot counter
 * that is read before it is taken, so a buffer full of errors does not make
 * every thread fight over it. */
__global__ void ng_pattern_check_kernel(const uint64_t *__restrict__ w, uint64_t n, int pattern,
                                        uint64_t seed, int pass, unsigned long long *wrong,
                                        unsigned *slots, uint64_t *offsets, unsigned max)
{
	const uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
	unsigned long long bad = 0;
	for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
		if (w[i] != ng_pattern_word(pattern, seed, i, pass)) {
			bad++;
			if (max && *(volatile unsigned *)slots < max) {
				unsigned s = atomicAdd(slots, 1u);
				if (s < max) offsets[s] = i * 8u;
			}
		}
	}
	if (bad) atomicAdd(wrong, bad);
}

cudaError_t ng_cuda_pattern_write(cudaStream_t s, unsigned blocks, uint64_t *words, uint64_t n,
                                  int pattern, uint64_t seed, int pass)
{
	ng_pattern_write_kernel<<<blocks, NG_CUDA_THREADS, 0, s>>>(words, n, pattern, seed, pass);
	return cudaGetLastError();
}

cudaError_t ng_cuda_pattern_check(cudaStream_t s, unsigned blocks, const uint64_t *words,
                                  uint64_t n, int pattern, uint64_t seed, int pass,
                                  unsigned long long *wrong, unsigned *slots, uint64_t *offsets,
                                  unsigned max)
{
	ng_pattern_check_kernel<<<blocks, NG_CUDA_THREADS, 0, s>>>(words, n, pattern, seed, pass,
	                                                             wrong, slots, offsets, max);
	return cudaGetLastError();
}

int ng_cuda_pattern_preload(int dev, char *why)
{
	NG_CUDA_PRELOAD(dev, why, ng_pattern_write_kernel);
	NG_CUDA_PRELOAD(dev, why, ng_pattern_check_kernel);
	return 0;
}

/* ---- the copy kernel ------------------------------------------------------------- */

/* 16-byte loads and stores, grid-stride, two in flight per thread. */
__global__ void __launch_bounds__(NG_CUDA_THREADS)
ng_copy_kernel(const uint4 *__restrict__ src, uint4 *__restrict__ dst, uint64_t n)
{
	const uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
	uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
	for (; i + stride < n; i += 2 * stride) {
		const uint4 a = src[i];
		const uint4 b = src[i + stride];
		dst[i] = a;
		dst[i + stride] = b;
	}
	if (i < n) dst[i] = src[i];
}

/* ---- contexts ------------------------------------------------------------------- */

struct mem_ctx {
	int dev;
	unsigned blocks;
	uint64_t bytes, words;
	uint64_t *buf;
	cudaStream_t stream;
	cudaEvent_t e0, e1;
	unsigned long long *wrong; /* device: [0] mismatches */
	unsigned *slots;           /* device: offsets taken */
	uint64_t *offsets;         /* device: NG_MEM_MAX_OFFSETS */
};

static int mem_preload(int dev, char *why)
{
	NG_CUDA_PRELOAD(dev, why, ng_copy_kernel);
	return ng_cuda_pattern_preload(dev, why);
}

static void mem_free(struct mem_ctx *c)
{
	if (!c) return;
	if (cudaSetDevice(c->dev) == cudaSuccess) {
		if (c->stream) (void)cudaStreamSynchronize(c->stream);
		cudaFree(c->buf);
		cudaFree(c->wrong);
		cudaFree(c->slots);
		cudaFree(c->offsets);
		if (c->e0) cudaEventDestroy(c->e0);
		if (c->e1) cudaEventDestroy(c->e1);
		if (c->stream) cudaStreamDestroy(c->stream);
	}
	(void)cudaGetLastError();
	free(c);
}

int ng_mem_setup(int dev, uint64_t bytes, void **ctx, char *why)
{
	if (!ctx) return ng_cuda_failmsg(why, dev, "mem_setup: no context pointer");
	*ctx = NULL;
	if (bytes < 8 || bytes % 8 != 0)
		return ng_cuda_failmsg(why, dev, "mem_setup: %llu bytes is not a whole number of 64-bit words",
		                       (unsigned long long)bytes);
	if (ng_cuda_use(dev, why)) return NG_GPU_EFAIL;
	struct mem_ctx *c = (struct mem_ctx *)calloc(1, sizeof *c);
	if (!c) return ng_cuda_failmsg(why, dev, "mem_setup: out of host memory");
	c->dev = dev;
	c->bytes = bytes;
	c->words = bytes / 8;
	char sz[32];
	cudaError_t e;
	if (ng_cuda_grid(dev, &c->blocks, why) || mem_preload(dev, why)) goto fail;
	if ((e = cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking)) != cudaSuccess) {
		ng_cuda_fail(why, dev, e, "cudaStreamCreate");
		goto fail;
	}
	if ((e = cudaEventCreate(&c->e0)) != cudaSuccess || (e = cudaEventCreate(&c->e1)) != cudaSuccess) {
		ng_cuda_fail(why, dev, e, "cudaEventCreate");
		goto fail;
	}
	/* the small buffers first: the big one may take nearly all that is free */
	if ((e = cudaMalloc((void **)&c->wrong, sizeof *c->wrong)) != cudaSuccess ||
	    (e = cudaMalloc((void **)&c->slots, sizeof *c->slots)) != cudaSuccess ||
	    (e = cudaMalloc((void **)&c->offsets, NG_MEM_MAX_OFFSETS * sizeof *c->offsets)) != cudaSuccess) {
		ng_cuda_fail(why, dev, e, "cudaMalloc(%u bytes)", NG_MEM_MAX_OFFSETS * 8u);
		goto fail;
	}
	if ((e = cudaMalloc((void **)&c->buf, bytes)) != cudaSuccess) {
		ng_cuda_fail(why, dev, e, "cudaMalloc(%s)", ng_cuda_size(bytes, sz, sizeof sz));
		goto fail;
	}
	*ctx = c;
	return 0;
fail:
	mem_free(c);
	return NG_GPU_EFAIL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

int ng_mem_pattern(void *ctx, enum ng_gpu_pattern pattern, uint64_t seed, int64_t corrupt_word,
                   uint64_t *wrong, uint64_t *offsets, unsigned max_offsets, unsigned *n_offsets,
                   char *why)
{
	struct mem_ctx *c = (struct mem_ctx *)ctx;
	if (wrong) *wrong = 0;
	if (n_offsets) *n_offsets = 0;
	if (!c) return ng_cuda_failmsg(why, -1, "mem_pattern: no context");
	const int dev = c->dev;
	if ((int)pattern < 0 || pattern >= NG_GPU_PATTERN_COUNT)
		return ng_cuda_failmsg(why, dev, "mem_pattern: unknown pattern %d", (int)pattern);
	if (corrupt_word >= 0 && (uint64_t)corrupt_word >= c->words)
		return ng_cuda_failmsg(why, dev, "mem_pattern: word %lld to corrupt is beyond the %llu words",
		                       (long long)corrupt_word, (unsigned long long)c->words);
	if (ng_cuda_use(dev, why)) return NG_GPU_EFAIL;
	unsigned max = offsets ? max_offsets : 0;
	if (max > NG_MEM_MAX_OFFSETS) max = NG_MEM_MAX_OFFSETS;
	const char *names[] = {"address", "walking", "random"};
	const char *name = names[pattern];
	NG_CUDA_TRY(dev, why, cudaMemsetAsync(c->wrong, 0, sizeof *c->wrong, c->stream), "cudaMemsetAsync");
	NG_CUDA_TRY(dev, why, cudaMemsetAsync(c->slots, 0, sizeof *c->slots, c->stream), "cudaMemsetAsync");
	/* the walking pattern writes and checks twice (the bits, then their
	 * complement): a word wrong in both passes counts twice */
	const int passes = pattern == NG_GPU_PATTERN_WALKING ? 2 : 1;
	for (int pass = 0; pass < passes; pass++) {
		NG_CUDA_TRY(dev, why,
		            ng_cuda_pattern_write(c->stream, c->blocks, c->buf, c->words, (int)pattern, seed,
		                                  pass),
		            "%s pattern write kernel launch", name);
		if (corrupt_word >= 0 && pass == 0) {
			/* the planted fault: one bit of one word, between write and check */
			uint64_t word = 0;
			uint64_t *p = c->buf + corrupt_word;
			NG_CUDA_TRY(dev, why, cudaMemcpyAsync(&word, p, 8, cudaMemcpyDeviceToHost, c->stream),
			            "cudaMemcpyAsync(8 bytes, device to host)");
			NG_CUDA_TRY(dev, why, cudaStreamSynchronize(c->stream), "%s pattern write", name);
			word ^= 1ull;
			NG_CUDA_TRY(dev, why, cudaMemcpyAsync(p, &word, 8, cudaMemcpyHostToDevice, c->stream),
			            "cudaMemcpyAsync(8 bytes, host to device)");
			NG_CUDA_TRY(dev, why, cudaStreamSynchronize(c->stream), "planting a corrupt word");
		}
		NG_CUDA_TRY(dev, why,
		            ng_cuda_pattern_check(c->stream, c->blocks, c->buf, c->words, (int)pattern, seed,
		                                  pass, c->wrong, c->slots, c->offsets, max),
		            "%s pattern check kernel launch", name);
	}
	unsigned long long bad = 0;
	unsigned taken = 0;
	NG_CUDA_TRY(dev, why, cudaMemcpyAsync(&bad, c->wrong, sizeof bad, cudaMemcpyDeviceToHost, c->stream),
	            "cudaMemcpyAsync(8 bytes, device to host)");
	NG_CUDA_TRY(dev, why, cudaMemcpyAsync(&taken, c->slots, sizeof taken, cudaMemcpyDeviceToHost, c->stream),
	            "cudaMemcpyAsync(4 bytes, device to host)");
	NG_CUDA_TRY(dev, why, cudaStreamSynchronize(c->stream), "%s pattern check", name);
	unsigned got = taken < max ? taken : max;
	if (got > bad) got = (unsigned)bad; /* cannot happen; keeps the count honest */
	if (got) {
		NG_CUDA_TRY(dev, why,
		            cudaMemcpyAsync(offsets, c->offsets, (size_t)got * sizeof *offsets,
		                            cudaMemcpyDeviceToHost, c->stream),
		            "cudaMemcpyAsync(%u bytes, device to host)", got * 8u);
		NG_CUDA_TRY(dev, why, cudaStreamSynchronize(c->stream), "%s pattern offsets", name);
		qsort(offsets, got, sizeof *offsets, cmp_u64);
	}
	if (wrong) *wrong = bad;
	if (n_offsets) *n_offsets = got;
	return 0;
}

int ng_mem_copy(void *ctx, unsigned reps, uint64_t *bytes, double *seconds, char *why)
{
	struct mem_ctx *c = (struct mem_ctx *)ctx;
	if (bytes) *bytes = 0;
	if (seconds) *seconds = 0;
	if (!c) return ng_cuda_failmsg(why, -1, "mem_copy: no context");
	const int dev = c->dev;
	/* the first half to the second, in 16-byte elements; cudaMalloc aligns to
	 * at least 256 bytes, so both halves are 16-byte aligned */
	const uint64_t n16 = (c->bytes / 2) / 16;
	if (n16 == 0) return ng_cuda_failmsg(why, dev, "mem_copy: a buffer of %llu bytes is too small",
	                                     (unsigned long long)c->bytes);
	if (ng_cuda_use(dev, why)) return NG_GPU_EFAIL;
	if (reps == 0) return 0;
	const uint4 *src = (const uint4 *)c->buf;
	uint4 *dst = (uint4 *)((char *)c->buf + n16 * 16);
	NG_CUDA_TRY(dev, why, cudaEventRecord(c->e0, c->stream), "cudaEventRecord");
	for (unsigned r = 0; r < reps; r++) {
		ng_copy_kernel<<<c->blocks, NG_CUDA_THREADS, 0, c->stream>>>(src, dst, n16);
		NG_CUDA_TRY(dev, why, cudaGetLastError(), "copy kernel launch");
	}
	NG_CUDA_TRY(dev, why, cudaEventRecord(c->e1, c->stream), "cudaEventRecord");
	double t = 0;
	if (ng_cuda_elapsed(dev, c->e0, c->e1, &t, why)) return NG_GPU_EFAIL;
	if (bytes) *bytes = (uint64_t)reps * 2u * n16 * 16u;
	if (seconds) *seconds = t;
	return 0;
}

void ng_mem_teardown(void *ctx)
{
	mem_free((struct mem_ctx *)ctx);
}

/* cudaMemcpy device to device of bytes, reps times, between events on the
 * default stream, after one untimed copy. */
int ng_ref_d2d(int dev, uint64_t bytes, unsigned reps, double *seconds, char *why)
{
	if (seconds) *seconds = 0;
	if (bytes == 0) return ng_cuda_failmsg(why, dev, "ref_d2d: no bytes");
	if (ng_cuda_use(dev, why)) return NG_GPU_EFAIL;
	char sz[32];
	void *a = NULL, *b = NULL;
	int rc = NG_GPU_EFAIL;
	cudaError_t e;
	if ((e = cudaMalloc(&a, bytes)) != cudaSuccess || (e = cudaMalloc(&b, bytes)) != cudaSuccess) {
		ng_cuda_fail(why, dev, e, "cudaMalloc(%s)", ng_cuda_size(bytes, sz, sizeof sz));
		goto out;
	}
	if ((e = cudaMemset(a, 0x5a, bytes)) != cudaSuccess) {
		ng_cuda_fail(why, dev, e, "cudaMemset(%s)", ng_cuda_size(bytes, sz, sizeof sz));
		goto out;
	}
	rc = ng_cuda_timed_memcpy(dev, b, a, bytes, cudaMemcpyDeviceToDevice, "device to device", reps,
	                          seconds, why);
out:
	cudaFree(a); /* waits for the copies */
	cudaFree(b);
	(void)cudaGetLastError();
	return rc;
}
