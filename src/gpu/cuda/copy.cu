/* The copy probe's paths: pinned host memory to the device and back, and
 * device to device between peers; each copy verifiable with a seeded
 * pattern. cudaMemcpy from pinned memory is the host-to-device reference. */
#include <stdlib.h>
#include <string.h>

#include "gpu/cuda/cuda_common.h"

struct copy_ctx {
	enum ng_gpu_path path;
	int src, dst;
	int dev;  /* the device whose stream issues the copy */
	int cdev; /* the device that checks the copy (-1: the host, for D2H) */
	uint64_t bytes, words;
	unsigned blocks_src, blocks_chk;
	void *host;             /* pinned: the source (H2D) or the destination (D2H) */
	uint64_t *dsrc, *ddst;  /* device buffers: dsrc on src, ddst on dst */
	cudaStream_t stream;    /* on dev */
	cudaStream_t cstream;   /* on cdev, for P2P */
	cudaEvent_t e0, e1;     /* on dev */
	unsigned long long *wrong; /* on cdev */
};

static void copy_free(struct copy_ctx *c)
{
	if (!c) return;
	if (c->path == NG_GPU_PATH_P2P && cudaSetDevice(c->dst) == cudaSuccess) {
		if (c->cstream) {
			(void)cudaStreamSynchronize(c->cstream);
			cudaStreamDestroy(c->cstream);
		}
		cudaFree(c->ddst);
		cudaFree(c->wrong);
		c->ddst = NULL;
		c->wrong = NULL;
	}
	if (cudaSetDevice(c->dev) == cudaSuccess) {
		if (c->stream) (void)cudaStreamSynchronize(c->stream);
		cudaFree(c->dsrc);
		cudaFree(c->ddst);
		cudaFree(c->wrong);
		if (c->host) cudaFreeHost(c->host);
		if (c->e0) cudaEventDestroy(c->e0);
		if (c->e1) cudaEventDestroy(c->e1);
		if (c->stream) cudaStreamDestroy(c->stream);
	}
	(void)cudaGetLastError();
	free(c);
}

/* Lets from access to's memory; already allowed is fine. */
static int enable_peer(int from, int to, char *why)
{
	if (ng_cuda_use(from, why)) return NG_GPU_EFAIL;
	cudaError_t e = cudaDeviceEnablePeerAccess(to, 0);
	if (e == cudaErrorPeerAccessAlreadyEnabled) {
		(void)cudaGetLastError();
		return 0;
	}
	if (e != cudaSuccess) return ng_cuda_fail(why, from, e, "cudaDeviceEnablePeerAccess(GPU %d)", to);
	return 0;
}

int ng_copy_setup(enum ng_gpu_path path, int src, int dst, uint64_t bytes, void **ctx, char *why)
{
	if (!ctx) return ng_cuda_failmsg(why, -1, "copy_setup: no context pointer");
	*ctx = NULL;
	if (bytes == 0) return ng_cuda_failmsg(why, -1, "copy_setup: no bytes");
	int dev, cdev;
	switch (path) {
	case NG_GPU_PATH_H2D: dev = cdev = dst; break;
	case NG_GPU_PATH_D2H: dev = src; cdev = -1; break;
	case NG_GPU_PATH_P2P: dev = src; cdev = dst; break;
	default: return ng_cuda_failmsg(why, -1, "copy_setup: unknown path %d", (int)path);
	}
	if (path == NG_GPU_PATH_P2P) {
		if (src == dst) {
			ng_cuda_failmsg(why, src, "peer to peer needs two GPUs");
			return NG_GPU_ENOTAPPLICABLE;
		}
		int fwd = 0, back = 0;
		NG_CUDA_TRY(src, why, cudaDeviceCanAccessPeer(&fwd, src, dst), "cudaDeviceCanAccessPeer(GPU %d)", dst);
		NG_CUDA_TRY(dst, why, cudaDeviceCanAccessPeer(&back, dst, src), "cudaDeviceCanAccessPeer(GPU %d)", src);
		if (!fwd) {
			ng_cuda_failmsg(why, src, "no peer access to GPU %d", dst);
			return NG_GPU_ENOTAPPLICABLE;
		}
		if (enable_peer(src, dst, why)) return NG_GPU_EFAIL;
		if (back && enable_peer(dst, src, why)) return NG_GPU_EFAIL;
	}
	if (ng_cuda_use(dev, why)) return NG_GPU_EFAIL;
	struct copy_ctx *c = (struct copy_ctx *)calloc(1, sizeof *c);
	if (!c) return ng_cuda_failmsg(why, dev, "copy_setup: out of host memory");
	c->path = path;
	c->src = src;
	c->dst = dst;
	c->dev = dev;
	c->cdev = cdev;
	c->bytes = bytes;
	c->words = bytes / 8;
	const uint64_t alloc = (bytes + 7) / 8 * 8;
	char sz[32];
	ng_cuda_size(alloc, sz, sizeof sz);
	cudaError_t e;
	if (ng_cuda_grid(dev, &c->blocks_src, why) || ng_cuda_pattern_preload(dev, why)) goto fail;
	if ((e = cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking)) != cudaSuccess) {
		ng_cuda_fail(why, dev, e, "cudaStreamCreate");
		goto fail;
	}
	if ((e = cudaEventCreate(&c->e0)) != cudaSuccess || (e = cudaEventCreate(&c->e1)) != cudaSuccess) {
		ng_cuda_fail(why, dev, e, "cudaEventCreate");
		goto fail;
	}
	if (path != NG_GPU_PATH_P2P) {
		if ((e = cudaHostAlloc(&c->host, alloc, cudaHostAllocPortable)) != cudaSuccess) {
			c->host = NULL;
			ng_cuda_fail(why, dev, e, "cudaHostAlloc(%s, pinned)", sz);
			goto fail;
		}
		uint64_t **mine = path == NG_GPU_PATH_H2D ? &c->ddst : &c->dsrc;
		if ((e = cudaMalloc((void **)mine, alloc)) != cudaSuccess) {
			ng_cuda_fail(why, dev, e, "cudaMalloc(%s)", sz);
			goto fail;
		}
		if (path == NG_GPU_PATH_H2D) {
			c->blocks_chk = c->blocks_src;
			if ((e = cudaMalloc((void **)&c->wrong, sizeof *c->wrong)) != cudaSuccess) {
				ng_cuda_fail(why, dev, e, "cudaMalloc(8 bytes)");
				goto fail;
			}
		}
	} else {
		if ((e = cudaMalloc((void **)&c->dsrc, alloc)) != cudaSuccess) {
			ng_cuda_fail(why, dev, e, "cudaMalloc(%s)", sz);
			goto fail;
		}
		if (ng_cuda_use(dst, why) || ng_cuda_grid(dst, &c->blocks_chk, why) ||
		    ng_cuda_pattern_preload(dst, why))
			goto fail;
		if ((e = cudaStreamCreateWithFlags(&c->cstream, cudaStreamNonBlocking)) != cudaSuccess) {
			ng_cuda_fail(why, dst, e, "cudaStreamCreate");
			goto fail;
		}
		if ((e = cudaMalloc((void **)&c->ddst, alloc)) != cudaSuccess) {
			ng_cuda_fail(why, dst, e, "cudaMalloc(%s)", sz);
			goto fail;
		}
		if ((e = cudaMalloc((void **)&c->wrong, sizeof *c->wrong)) != cudaSuccess) {
			ng_cuda_fail(why, dst, e, "cudaMalloc(8 bytes)");
			goto fail;
		}
	}
	*ctx = c;
	return 0;
fail:
	copy_free(c);
	return NG_GPU_EFAIL;
}

static cudaError_t copy_once(struct copy_ctx *c)
{
	switch (c->path) {
	case NG_GPU_PATH_H2D:
		return cudaMemcpyAsync(c->ddst, c->host, c->bytes, cudaMemcpyHostToDevice, c->stream);
	case NG_GPU_PATH_D2H:
		return cudaMemcpyAsync(c->host, c->dsrc, c->bytes, cudaMemcpyDeviceToHost, c->stream);
	default:
		return cudaMemcpyPeerAsync(c->ddst, c->dst, c->dsrc, c->src, c->bytes, c->stream);
	}
}

static const char *path_name(enum ng_gpu_path p)
{
	return p == NG_GPU_PATH_H2D ? "host to device" : p == NG_GPU_PATH_D2H ? "device to host" : "peer";
}

int ng_copy_run(void *ctx, unsigned reps, double *seconds, char *why)
{
	struct copy_ctx *c = (struct copy_ctx *)ctx;
	if (seconds) *seconds = 0;
	if (!c) return ng_cuda_failmsg(why, -1, "copy_run: no context");
	if (ng_cuda_use(c->dev, why)) return NG_GPU_EFAIL;
	if (reps == 0) return 0;
	char sz[32];
	NG_CUDA_TRY(c->dev, why, cudaEventRecord(c->e0, c->stream), "cudaEventRecord");
	for (unsigned r = 0; r < reps; r++)
		NG_CUDA_TRY(c->dev, why, copy_once(c), "%s(%s, %s)",
		            c->path == NG_GPU_PATH_P2P ? "cudaMemcpyPeerAsync" : "cudaMemcpyAsync",
		            ng_cuda_size(c->bytes, sz, sizeof sz), path_name(c->path));
	NG_CUDA_TRY(c->dev, why, cudaEventRecord(c->e1, c->stream), "cudaEventRecord");
	return ng_cuda_elapsed(c->dev, c->e0, c->e1, seconds, why);
}

int ng_copy_verify(void *ctx, uint64_t seed, uint64_t *wrong, char *why)
{
	struct copy_ctx *c = (struct copy_ctx *)ctx;
	if (wrong) *wrong = 0;
	if (!c) return ng_cuda_failmsg(why, -1, "copy_verify: no context");
	const int rnd = NG_GPU_PATTERN_RANDOM;
	char sz[32];
	ng_cuda_size(c->bytes, sz, sizeof sz);
	unsigned long long bad = 0;
	if (c->path == NG_GPU_PATH_D2H) {
		/* the device writes, the host checks */
		if (ng_cuda_use(c->dev, why)) return NG_GPU_EFAIL;
		NG_CUDA_TRY(c->dev, why, ng_cuda_pattern_write(c->stream, c->blocks_src, c->dsrc, c->words, rnd, seed, 0),
		            "pattern write kernel launch");
		NG_CUDA_TRY(c->dev, why, cudaStreamSynchronize(c->stream), "pattern write");
		memset(c->host, 0, c->bytes);
		NG_CUDA_TRY(c->dev, why, copy_once(c), "cudaMemcpyAsync(%s, device to host)", sz);
		NG_CUDA_TRY(c->dev, why, cudaStreamSynchronize(c->stream), "cudaMemcpyAsync(%s, device to host)", sz);
		const uint64_t *h = (const uint64_t *)c->host;
		for (uint64_t i = 0; i < c->words; i++)
			if (h[i] != ng_splitmix64(seed, i)) bad++;
		if (wrong) *wrong = bad;
		return 0;
	}
	/* the source: the host (H2D) or a kernel on src (P2P); the destination
	 * cleared first, so a copy that did nothing cannot pass */
	if (ng_cuda_use(c->dev, why)) return NG_GPU_EFAIL;
	if (c->path == NG_GPU_PATH_H2D) {
		NG_CUDA_TRY(c->dev, why, cudaStreamSynchronize(c->stream), "copy_verify");
		uint64_t *h = (uint64_t *)c->host;
		for (uint64_t i = 0; i < c->words; i++) h[i] = ng_splitmix64(seed, i);
		NG_CUDA_TRY(c->dev, why, cudaMemsetAsync(c->ddst, 0, c->bytes, c->stream), "cudaMemsetAsync");
	} else {
		NG_CUDA_TRY(c->dev, why, ng_cuda_pattern_write(c->stream, c->blocks_src, c->dsrc, c->words, rnd, seed, 0),
		            "pattern write kernel launch");
		NG_CUDA_TRY(c->dev, why, cudaStreamSynchronize(c->stream), "pattern write");
		if (ng_cuda_use(c->cdev, why)) return NG_GPU_EFAIL;
		NG_CUDA_TRY(c->cdev, why, cudaMemsetAsync(c->ddst, 0, c->bytes, c->cstream), "cudaMemsetAsync");
		NG_CUDA_TRY(c->cdev, why, cudaStreamSynchronize(c->cstream), "cudaMemsetAsync");
		if (ng_cuda_use(c->dev, why)) return NG_GPU_EFAIL;
	}
	NG_CUDA_TRY(c->dev, why, copy_once(c), "%s(%s, %s)",
	            c->path == NG_GPU_PATH_P2P ? "cudaMemcpyPeerAsync" : "cudaMemcpyAsync", sz,
	            path_name(c->path));
	NG_CUDA_TRY(c->dev, why, cudaStreamSynchronize(c->stream), "%s copy", path_name(c->path));
	/* the check, on the destination device */
	const int cd = c->cdev;
	cudaStream_t cs = c->path == NG_GPU_PATH_P2P ? c->cstream : c->stream;
	if (ng_cuda_use(cd, why)) return NG_GPU_EFAIL;
	NG_CUDA_TRY(cd, why, cudaMemsetAsync(c->wrong, 0, sizeof *c->wrong, cs), "cudaMemsetAsync");
	NG_CUDA_TRY(cd, why, ng_cuda_pattern_check(cs, c->blocks_chk, c->ddst, c->words, rnd, seed, 0, c->wrong, NULL, NULL, 0),
	            "pattern check kernel launch");
	NG_CUDA_TRY(cd, why, cudaMemcpyAsync(&bad, c->wrong, sizeof bad, cudaMemcpyDeviceToHost, cs),
	            "cudaMemcpyAsync(8 bytes, device to host)");
	NG_CUDA_TRY(cd, why, cudaStreamSynchronize(cs), "pattern check");
	if (wrong) *wrong = bad;
	return ng_cuda_use(c->dev, why);
}

void ng_copy_teardown(void *ctx)
{
	copy_free((struct copy_ctx *)ctx);
}

/* cudaMemcpy from pinned host memory of bytes, reps times, between events on
 * the default stream, after one untimed copy. */
int ng_ref_h2d(int dev, uint64_t bytes, unsigned reps, double *seconds, char *why)
{
	if (seconds) *seconds = 0;
	if (bytes == 0) return ng_cuda_failmsg(why, dev, "ref_h2d: no bytes");
	if (ng_cuda_use(dev, why)) return NG_GPU_EFAIL;
	char sz[32];
	ng_cuda_size(bytes, sz, sizeof sz);
	void *h = NULL, *d = NULL;
	int rc = NG_GPU_EFAIL;
	cudaError_t e;
	if ((e = cudaMallocHost(&h, bytes)) != cudaSuccess) {
		h = NULL;
		ng_cuda_fail(why, dev, e, "cudaMallocHost(%s)", sz);
		goto out;
	}
	memset(h, 0x5a, bytes);
	if ((e = cudaMalloc(&d, bytes)) != cudaSuccess) {
		ng_cuda_fail(why, dev, e, "cudaMalloc(%s)", sz);
		goto out;
	}
	rc = ng_cuda_timed_memcpy(dev, d, h, bytes, cudaMemcpyHostToDevice, "host to device", reps,
	                          seconds, why);
out:
	cudaFree(d);
	if (h) cudaFreeHost(h);
	(void)cudaGetLastError();
	return rc;
}
