/* The compute probe's operation: C = A x B, n x n x n, bf16 inputs, fp32
 * accumulate and output, through cuBLAS (loaded at run time) or, where it is
 * absent, a tiled kernel of ours; and the check of C against known values.
 *
 * Layout. A, B and C are row-major: A[i][k] at A[i*n + k], B[k][j] at
 * B[k*n + j], C[i][j] at C[i*n + j], C = A x B. cuBLAS is column-major: a
 * row-major matrix read column-major is its transpose. So we ask cuBLAS for
 * the column-major product X x Y with X the memory of B (= B^T) and Y the
 * memory of A (= A^T): X x Y = B^T A^T = (A B)^T, which, stored column-major,
 * is A B row-major. Our kernel computes the row-major C directly, and one
 * check kernel verifies C[i*n + j] against sum_k A[i][k] B[k][j] for both.
 *
 * Known inputs: A[i][k] = ((7i + 3k) mod 5) - 2 and B[k][j] = ((2k + 3j) mod 5) - 2,
 * integers in [-2, 2], exact in bf16. Every partial sum is an integer of
 * magnitude at most 4n, below 2^24 for n < 4,194,304, so any summation order
 * (tensor cores, split-K) gives the exact value in fp32. Both depend on k
 * only through k mod 5 (and on i, j through i mod 5, j mod 5, but C is not
 * symmetric: a transposed A or B, or a lost stretch of k, changes most of
 * C), so C[i][j] = sum over r in [0, 5) of count(r) A[i][r] B[r][j], with
 * count(r) the number of k < n with k = r (mod 5): 5 terms per element. */
#include <cublas_api.h>
#include <cuda_bf16.h>
#include <dlfcn.h>
#include <mutex>
#include <stdlib.h>
#include <string.h>

#include "gpu/cuda/cuda_common.h"

#define NG_GEMM_MAX_N 65536u

__host__ __device__ static inline int ng_gemm_a(uint64_t i, uint64_t k)
{
	return (int)((7u * i + 3u * k) % 5u) - 2;
}

__host__ __device__ static inline int ng_gemm_b(uint64_t k, uint64_t j)
{
	return (int)((2u * k + 3u * j) % 5u) - 2;
}

/* ---- cuBLAS, loaded at run time ------------------------------------------ */

typedef cublasStatus_t (*create_fn)(cublasHandle_t *);
typedef cublasStatus_t (*destroy_fn)(cublasHandle_t);
typedef cublasStatus_t (*set_stream_fn)(cublasHandle_t, cudaStream_t);
typedef cublasStatus_t (*gemm_ex_fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                     int, const void *, const void *, cudaDataType, int,
                                     const void *, cudaDataType, int, const void *, void *,
                                     cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);

static struct {
	std::once_flag once;
	void *lib;
	create_fn create;
	destroy_fn destroy;
	set_stream_fn set_stream;
	gemm_ex_fn gemm_ex;
} g_cublas;

static void cublas_load(void)
{
	static const char *const names[] = {
		"libcublas.so.13",
		"libcublas.so.12",
		"libcublas.so",
		"/usr/local/cuda/lib64/libcublas.so.13",
		"/usr/local/cuda/lib64/libcublas.so.12",
	};
	for (size_t i = 0; i < sizeof names / sizeof names[0] && !g_cublas.lib; i++)
		g_cublas.lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
	(void)dlerror();
	if (!g_cublas.lib) return;
	g_cublas.create = (create_fn)dlsym(g_cublas.lib, "cublasCreate_v2");
	g_cublas.destroy = (destroy_fn)dlsym(g_cublas.lib, "cublasDestroy_v2");
	g_cublas.set_stream = (set_stream_fn)dlsym(g_cublas.lib, "cublasSetStream_v2");
	g_cublas.gemm_ex = (gemm_ex_fn)dlsym(g_cublas.lib, "cublasGemmEx");
	(void)dlerror();
	if (!g_cublas.create || !g_cublas.destroy || !g_cublas.set_stream || !g_cublas.gemm_ex) {
		dlclose(g_cublas.lib);
		g_cublas.lib = NULL;
		g_cublas.create = NULL;
		g_cublas.destroy = NULL;
		g_cublas.set_stream = NULL;
		g_cublas.gemm_ex = NULL;
	}
}

int ng_cublas_available(void)
{
	std::call_once(g_cublas.once, cublas_load);
	return g_cublas.lib != NULL;
}

static const char *cublas_text(cublasStatus_t s)
{
	switch (s) {
	case CUBLAS_STATUS_SUCCESS: return "success";
	case CUBLAS_STATUS_NOT_INITIALIZED: return "cuBLAS not initialized";
	case CUBLAS_STATUS_ALLOC_FAILED: return "cuBLAS allocation failed";
	case CUBLAS_STATUS_INVALID_VALUE: return "cuBLAS invalid value";
	case CUBLAS_STATUS_ARCH_MISMATCH: return "cuBLAS architecture mismatch";
	case CUBLAS_STATUS_MAPPING_ERROR: return "cuBLAS mapping error";
	case CUBLAS_STATUS_EXECUTION_FAILED: return "cuBLAS execution failed";
	case CUBLAS_STATUS_INTERNAL_ERROR: return "cuBLAS internal error";
	case CUBLAS_STATUS_NOT_SUPPORTED: return "cuBLAS not supported";
	case CUBLAS_STATUS_LICENSE_ERROR: return "cuBLAS license error";
	default: return "cuBLAS error";
	}
}

static int cublas_fail(char *why, int dev, const char *what, cublasStatus_t s)
{
	(void)cudaGetLastError();
	return ng_cuda_failmsg(why, dev, "%s: %s (status %d)", what, cublas_text(s), (int)s);
}

/* ---- kernels ------------------------------------------------------------------ */

/* A and B from the formulas, grid-stride over n*n elements. */
__global__ void ng_gemm_fill(__nv_bfloat16 *__restrict__ A, __nv_bfloat16 *__restrict__ B,
                             unsigned n)
{
	const uint64_t total = (uint64_t)n * n;
	const uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
	for (uint64_t e = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += stride) {
		uint64_t r = e / n, c = e % n;
		A[e] = __float2bfloat16((float)ng_gemm_a(r, c)); /* A[r][c]: i = r, k = c */
		B[e] = __float2bfloat16((float)ng_gemm_b(r, c)); /* B[r][c]: k = r, j = c */
	}
}

/* Our GEMM, for when cuBLAS is absent: row-major C = A x B. Blocks of 256
 * threads compute a 64 x 64 tile of C, walking k in steps of 16 through
 * shared memory (converted to fp32 on the way in); thread (tx, ty) of the
 * 16 x 16 block owns rows ty + 16r and columns tx + 16c, r, c in [0, 4). */
#define NG_TILE 64
#define NG_TILE_K 16
__global__ void __launch_bounds__(256)
ng_gemm_kernel(const __nv_bfloat16 *__restrict__ A, const __nv_bfloat16 *__restrict__ B,
               float *__restrict__ C, unsigned n)
{
	__shared__ float As[NG_TILE_K][NG_TILE + 1]; /* As[k][row] */
	__shared__ float Bs[NG_TILE_K][NG_TILE + 1]; /* Bs[k][col] */
	const unsigned t = threadIdx.x, tx = t % 16u, ty = t / 16u;
	const uint64_t row0 = (uint64_t)blockIdx.y * NG_TILE, col0 = (uint64_t)blockIdx.x * NG_TILE;
	float acc[4][4];
	for (int r = 0; r < 4; r++)
		for (int c = 0; c < 4; c++) acc[r][c] = 0.0f;

	for (uint64_t k0 = 0; k0 < n; k0 += NG_TILE_K) {
		/* 64 x 16 of A and 16 x 64 of B: 1024 elements each, 4 per thread */
		for (unsigned q = 0; q < 4; q++) {
			const unsigned e = t + 256u * q;
			const unsigned ar = e / NG_TILE_K, ak = e % NG_TILE_K;
			const uint64_t gi = row0 + ar, gk = k0 + ak;
			As[ak][ar] = (gi < n && gk < n) ? __bfloat162float(A[gi * n + gk]) : 0.0f;
			const unsigned bk = e / NG_TILE, bc = e % NG_TILE;
			const uint64_t gk2 = k0 + bk, gj = col0 + bc;
			Bs[bk][bc] = (gk2 < n && gj < n) ? __bfloat162float(B[gk2 * n + gj]) : 0.0f;
		}
		__syncthreads();
#pragma unroll
		for (unsigned kk = 0; kk < NG_TILE_K; kk++) {
			float a[4], b[4];
#pragma unroll
			for (int r = 0; r < 4; r++) a[r] = As[kk][ty + 16u * r];
#pragma unroll
			for (int c = 0; c < 4; c++) b[c] = Bs[kk][tx + 16u * c];
#pragma unroll
			for (int r = 0; r < 4; r++)
#pragma unroll
				for (int c = 0; c < 4; c++) acc[r][c] = fmaf(a[r], b[c], acc[r][c]);
		}
		__syncthreads();
	}
	for (int r = 0; r < 4; r++)
		for (int c = 0; c < 4; c++) {
			const uint64_t i = row0 + ty + 16u * r, j = col0 + tx + 16u * c;
			if (i < n && j < n) C[i * n + j] = acc[r][c];
		}
}

/* Checks every C[i][j] against its closed form (see the top of this file). */
__global__ void ng_gemm_check(const float *__restrict__ C, unsigned n,
                              unsigned long long *__restrict__ wrong)
{
	const uint64_t total = (uint64_t)n * n;
	const uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
	const long long per = n / 5u, rem = n % 5u;
	unsigned long long bad = 0;
	for (uint64_t e = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += stride) {
		const uint64_t i = e / n, j = e % n;
		long long s = 0;
		for (unsigned r = 0; r < 5u; r++) {
			const long long count = per + ((long long)r < rem ? 1 : 0);
			s += count * ng_gemm_a(i, r) * ng_gemm_b(r, j);
		}
		if (!(C[e] == (float)s)) bad++; /* NaN counts as wrong */
	}
	if (bad) atomicAdd(wrong, bad);
}

/* ---- contexts ----------------------------------------------------------------- */

struct gemm_ctx {
	int dev;
	unsigned n;
	unsigned blocks; /* grid-stride launches */
	unsigned sms;    /* spin kernel blocks */
	cublasHandle_t handle;
	cudaStream_t stream;
	cudaEvent_t e0, e1, e2;
	__nv_bfloat16 *A, *B;
	float *C;
	unsigned long long *wrong;
	double per_gemm; /* seconds, from the last batch */
};

static int gemm_preload(int dev, char *why)
{
	NG_CUDA_PRELOAD(dev, why, ng_gemm_fill);
	NG_CUDA_PRELOAD(dev, why, ng_gemm_kernel);
	NG_CUDA_PRELOAD(dev, why, ng_gemm_check);
	return ng_cuda_spin_preload(dev, why);
}

static void gemm_free(struct gemm_ctx *c)
{
	if (!c) return;
	if (cudaSetDevice(c->dev) == cudaSuccess) {
		if (c->stream) (void)cudaStreamSynchronize(c->stream);
		if (c->handle) (void)g_cublas.destroy(c->handle);
		cudaFree(c->A);
		cudaFree(c->B);
		cudaFree(c->C);
		cudaFree(c->wrong);
		if (c->e0) cudaEventDestroy(c->e0);
		if (c->e1) cudaEventDestroy(c->e1);
		if (c->e2) cudaEventDestroy(c->e2);
		if (c->stream) cudaStreamDestroy(c->stream);
	}
	(void)cudaGetLastError();
	free(c);
}

static int gemm_once(struct gemm_ctx *c, char *why)
{
	if (c->handle) {
		const float alpha = 1.0f, beta = 0.0f;
		const int n = (int)c->n;
		/* column-major (B^T)(A^T) = (A B)^T, i.e. row-major A B: see the top */
		cublasStatus_t s = g_cublas.gemm_ex(c->handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha,
		                                    c->B, CUDA_R_16BF, n, c->A, CUDA_R_16BF, n, &beta,
		                                    c->C, CUDA_R_32F, n, CUBLAS_COMPUTE_32F,
		                                    CUBLAS_GEMM_DEFAULT);
		if (s != CUBLAS_STATUS_SUCCESS) return cublas_fail(why, c->dev, "cublasGemmEx", s);
		return 0;
	}
	const unsigned tiles = (c->n + NG_TILE - 1) / NG_TILE;
	ng_gemm_kernel<<<dim3(tiles, tiles), 256, 0, c->stream>>>(c->A, c->B, c->C, c->n);
	NG_CUDA_TRY(c->dev, why, cudaGetLastError(), "GEMM kernel launch (n=%u)", c->n);
	return 0;
}

/* A context on dev with the inputs filled and one GEMM run untimed (cuBLAS
 * loads its kernels on the first call) and one timed (the first estimate of
 * a GEMM's time, for the planted slowdown). */
static int gemm_open(int dev, unsigned n, int want_cublas, struct gemm_ctx **out, char *why)
{
	*out = NULL;
	if (n == 0 || n > NG_GEMM_MAX_N)
		return ng_cuda_failmsg(why, dev, "GEMM size %u outside [1, %u]", n, NG_GEMM_MAX_N);
	if (ng_cuda_use(dev, why)) return NG_GPU_EFAIL;
	struct gemm_ctx *c = (struct gemm_ctx *)calloc(1, sizeof *c);
	if (!c) return ng_cuda_failmsg(why, dev, "GEMM context: out of host memory");
	c->dev = dev;
	c->n = n;
	c->per_gemm = 0;
	int rc = NG_GPU_EFAIL;
	char sz[32];
	const uint64_t elems = (uint64_t)n * n;
	cudaError_t e;
	int sms = 0;
	double t = 0;
	if (ng_cuda_grid(dev, &c->blocks, why) || gemm_preload(dev, why)) goto fail;
	e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
	if (e != cudaSuccess) { ng_cuda_fail(why, dev, e, "cudaDeviceGetAttribute"); goto fail; }
	c->sms = sms > 0 ? (unsigned)sms : 1u;
	if ((e = cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking)) != cudaSuccess) {
		ng_cuda_fail(why, dev, e, "cudaStreamCreate");
		goto fail;
	}
	if ((e = cudaEventCreate(&c->e0)) != cudaSuccess || (e = cudaEventCreate(&c->e1)) != cudaSuccess ||
	    (e = cudaEventCreate(&c->e2)) != cudaSuccess) {
		ng_cuda_fail(why, dev, e, "cudaEventCreate");
		goto fail;
	}
	if ((e = cudaMalloc((void **)&c->A, elems * 2)) != cudaSuccess ||
	    (e = cudaMalloc((void **)&c->B, elems * 2)) != cudaSuccess) {
		ng_cuda_fail(why, dev, e, "cudaMalloc(%s)", ng_cuda_size(elems * 2, sz, sizeof sz));
		goto fail;
	}
	if ((e = cudaMalloc((void **)&c->C, elems * 4)) != cudaSuccess) {
		ng_cuda_fail(why, dev, e, "cudaMalloc(%s)", ng_cuda_size(elems * 4, sz, sizeof sz));
		goto fail;
	}
	if ((e = cudaMalloc((void **)&c->wrong, sizeof *c->wrong)) != cudaSuccess) {
		ng_cuda_fail(why, dev, e, "cudaMalloc(8 bytes)");
		goto fail;
	}
	if (want_cublas && ng_cublas_available()) {
		cublasStatus_t s = g_cublas.create(&c->handle);
		if (s != CUBLAS_STATUS_SUCCESS) {
			c->handle = NULL;
			cublas_fail(why, dev, "cublasCreate", s);
			goto fail;
		}
		if ((s = g_cublas.set_stream(c->handle, c->stream)) != CUBLAS_STATUS_SUCCESS) {
			cublas_fail(why, dev, "cublasSetStream", s);
			goto fail;
		}
	}
	ng_gemm_fill<<<c->blocks, NG_CUDA_THREADS, 0, c->stream>>>(c->A, c->B, n);
	if ((e = cudaGetLastError()) != cudaSuccess) {
		ng_cuda_fail(why, dev, e, "GEMM input kernel launch");
		goto fail;
	}
	if ((e = cudaMemsetAsync(c->C, 0, elems * 4, c->stream)) != cudaSuccess) {
		ng_cuda_fail(why, dev, e, "cudaMemsetAsync");
		goto fail;
	}
	if (gemm_once(c, why)) goto fail;
	if ((e = cudaEventRecord(c->e0, c->stream)) != cudaSuccess) {
		ng_cuda_fail(why, dev, e, "cudaEventRecord");
		goto fail;
	}
	if (gemm_once(c, why)) goto fail;
	if ((e = cudaEventRecord(c->e1, c->stream)) != cudaSuccess) {
		ng_cuda_fail(why, dev, e, "cudaEventRecord");
		goto fail;
	}
	if (ng_cuda_elapsed(dev, c->e0, c->e1, &t, why)) goto fail;
	c->per_gemm = t;
	*out = c;
	return 0;
fail:
	gemm_free(c);
	return rc;
}

/* ---- the table's entries ------------------------------------------------------ */

int ng_gemm_setup(int dev, unsigned n, void **ctx, char *engine, size_t engine_len, char *why)
{
	if (!ctx) return ng_cuda_failmsg(why, dev, "gemm_setup: no context pointer");
	*ctx = NULL;
	const char *force = getenv("NODEGATE_CUDA_GEMM"); /* "kernel": ours even with cuBLAS */
	int want_cublas = !(force && strcmp(force, "kernel") == 0);
	struct gemm_ctx *c = NULL;
	if (gemm_open(dev, n, want_cublas, &c, why)) return NG_GPU_EFAIL;
	if (engine && engine_len) {
		const char *name = c->handle ? "cublas" : "kernel";
		size_t l = strlen(name);
		if (l >= engine_len) l = engine_len - 1;
		memcpy(engine, name, l);
		engine[l] = '\0';
	}
	*ctx = c;
	return 0;
}

int ng_gemm_run(void *ctx, unsigned reps, double *seconds, char *why)
{
	struct gemm_ctx *c = (struct gemm_ctx *)ctx;
	if (seconds) *seconds = 0;
	if (!c) return ng_cuda_failmsg(why, -1, "gemm_run: no context");
	if (ng_cuda_use(c->dev, why)) return NG_GPU_EFAIL;
	if (reps == 0) return 0;
	const double share = ng_cuda_throttle_share(c->dev);
	NG_CUDA_TRY(c->dev, why, cudaEventRecord(c->e0, c->stream), "cudaEventRecord");
	for (unsigned r = 0; r < reps; r++)
		if (gemm_once(c, why)) return NG_GPU_EFAIL;
	NG_CUDA_TRY(c->dev, why, cudaEventRecord(c->e1, c->stream), "cudaEventRecord");
	if (share < 1.0) {
		/* (1 - share) of the batch's time in the spin kernel: the GEMMs take
		 * reps x per_gemm, so the batch takes that / share */
		double spin_s = c->per_gemm * reps * (1.0 - share) / share;
		if (spin_s > 60.0) spin_s = 60.0;
		NG_CUDA_TRY(c->dev, why, ng_cuda_spin(c->stream, c->sms, (uint64_t)(spin_s * 1e9)),
		            "spin kernel launch");
	}
	NG_CUDA_TRY(c->dev, why, cudaEventRecord(c->e2, c->stream), "cudaEventRecord");
	double gemm_s = 0, all_s = 0;
	if (ng_cuda_elapsed(c->dev, c->e0, c->e2, &all_s, why)) return NG_GPU_EFAIL;
	if (ng_cuda_elapsed(c->dev, c->e0, c->e1, &gemm_s, why)) return NG_GPU_EFAIL;
	if (gemm_s > 0) c->per_gemm = gemm_s / reps;
	if (seconds) *seconds = all_s;
	return 0;
}

int ng_gemm_verify(void *ctx, uint64_t *wrong, uint64_t *checked, char *why)
{
	struct gemm_ctx *c = (struct gemm_ctx *)ctx;
	if (wrong) *wrong = 0;
	if (checked) *checked = 0;
	if (!c) return ng_cuda_failmsg(why, -1, "gemm_verify: no context");
	if (ng_cuda_use(c->dev, why)) return NG_GPU_EFAIL;
	unsigned long long bad = 0;
	NG_CUDA_TRY(c->dev, why, cudaMemsetAsync(c->wrong, 0, sizeof *c->wrong, c->stream),
	            "cudaMemsetAsync");
	ng_gemm_check<<<c->blocks, NG_CUDA_THREADS, 0, c->stream>>>(c->C, c->n, c->wrong);
	NG_CUDA_TRY(c->dev, why, cudaGetLastError(), "GEMM check kernel launch");
	NG_CUDA_TRY(c->dev, why,
	            cudaMemcpyAsync(&bad, c->wrong, sizeof bad, cudaMemcpyDeviceToHost, c->stream),
	            "cudaMemcpyAsync(8 bytes, device to host)");
	NG_CUDA_TRY(c->dev, why, cudaStreamSynchronize(c->stream), "GEMM check");
	if (wrong) *wrong = bad;
	if (checked) *checked = (uint64_t)c->n * c->n;
	return 0;
}

void ng_gemm_teardown(void *ctx)
{
	gemm_free((struct gemm_ctx *)ctx);
}

int ng_ref_gemm(int dev, unsigned n, unsigned reps, double *seconds, char *why)
{
	if (seconds) *seconds = 0;
	if (!ng_cublas_available()) {
		ng_cuda_failmsg(why, dev, "no cuBLAS library found");
		return NG_GPU_ENOTAPPLICABLE;
	}
	struct gemm_ctx *c = NULL;
	if (gemm_open(dev, n, 1, &c, why)) return NG_GPU_EFAIL;
	int rc = 0;
	double t = 0;
	cudaError_t e = cudaEventRecord(c->e0, c->stream);
	for (unsigned r = 0; r < reps && e == cudaSuccess && rc == 0; r++) rc = gemm_once(c, why);
	if (e == cudaSuccess && rc == 0) e = cudaEventRecord(c->e1, c->stream);
	if (e != cudaSuccess)
		rc = ng_cuda_fail(why, dev, e, "cudaEventRecord");
	else if (rc == 0)
		rc = ng_cuda_elapsed(dev, c->e0, c->e1, &t, why);
	gemm_free(c);
	if (rc == 0 && seconds) *seconds = t;
	return rc;
}
