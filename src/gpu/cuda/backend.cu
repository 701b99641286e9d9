/* The CUDA backend's table (collect/gpu_backend.h): start-up, the devices,
 * error text, launch shapes and the planted slowdown. The compute, memory
 * and copy operations are in gemm.cu, mem.cu and copy.cu.
 *
 * The CUDA runtime is linked statically, so this library loads on a node
 * whose loader cannot find libcudart; with no driver, init says so. */
#include <atomic>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/cuda/cuda_common.h"

/* ---- error text --------------------------------------------------------- */

static void vwhy(char *why, int dev, const char *tail, const char *what, va_list ap)
{
	if (!why) return;
	char op[160];
	vsnprintf(op, sizeof op, what, ap);
	if (dev >= 0 && tail)
		snprintf(why, NG_GPU_WHY, "%s on GPU %d: %s", op, dev, tail);
	else if (dev >= 0)
		snprintf(why, NG_GPU_WHY, "GPU %d: %s", dev, op);
	else
		snprintf(why, NG_GPU_WHY, "%s%s%s", op, tail ? ": " : "", tail ? tail : "");
	for (char *p = why; *p; p++) /* one line */
		if (*p == '\n' || *p == '\r') *p = ' ';
}

int ng_cuda_fail(char *why, int dev, cudaError_t e, const char *what, ...)
{
	va_list ap;
	va_start(ap, what);
	const char *text = cudaGetErrorString(e);
	vwhy(why, dev, text ? text : "unknown CUDA error", what, ap);
	va_end(ap);
	(void)cudaGetLastError(); /* a non-sticky error must not be read again later */
	return NG_GPU_EFAIL;
}

int ng_cuda_failmsg(char *why, int dev, const char *what, ...)
{
	va_list ap;
	va_start(ap, what);
	vwhy(why, dev, NULL, what, ap);
	va_end(ap);
	return NG_GPU_EFAIL;
}

const char *ng_cuda_size(uint64_t bytes, char *buf, size_t len)
{
	if (bytes >= (1ull << 30))
		snprintf(buf, len, "%.1f GiB", (double)bytes / (double)(1ull << 30));
	else if (bytes >= (1ull << 20))
		snprintf(buf, len, "%.1f MiB", (double)bytes / (double)(1ull << 20));
	else
		snprintf(buf, len, "%llu bytes", (unsigned long long)bytes);
	return buf;
}

int ng_cuda_use(int dev, char *why)
{
	NG_CUDA_TRY(dev, why, cudaSetDevice(dev), "cudaSetDevice");
	return 0;
}

int ng_cuda_elapsed(int dev, cudaEvent_t start, cudaEvent_t stop, double *seconds, char *why)
{
	NG_CUDA_TRY(dev, why, cudaEventSynchronize(stop), "cudaEventSynchronize");
	float ms = 0;
	NG_CUDA_TRY(dev, why, cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
	if (seconds) *seconds = (double)ms / 1e3;
	return 0;
}

int ng_cuda_timed_memcpy(int dev, void *dst, const void *src, uint64_t bytes, cudaMemcpyKind kind,
                         const char *what, unsigned reps, double *seconds, char *why)
{
	char sz[32];
	ng_cuda_size(bytes, sz, sizeof sz);
	cudaEvent_t e0 = NULL, e1 = NULL;
	int rc = NG_GPU_EFAIL;
	double t = 0;
	cudaError_t e;
	if ((e = cudaEventCreate(&e0)) != cudaSuccess || (e = cudaEventCreate(&e1)) != cudaSuccess) {
		ng_cuda_fail(why, dev, e, "cudaEventCreate");
		goto out;
	}
	if ((e = cudaMemcpy(dst, src, bytes, kind)) != cudaSuccess) {
		ng_cuda_fail(why, dev, e, "cudaMemcpy(%s, %s)", sz, what);
		goto out;
	}
	if ((e = cudaEventRecord(e0, 0)) != cudaSuccess) {
		ng_cuda_fail(why, dev, e, "cudaEventRecord");
		goto out;
	}
	for (unsigned r = 0; r < reps; r++)
		if ((e = cudaMemcpy(dst, src, bytes, kind)) != cudaSuccess) {
			ng_cuda_fail(why, dev, e, "cudaMemcpy(%s, %s)", sz, what);
			goto out;
		}
	if ((e = cudaEventRecord(e1, 0)) != cudaSuccess) {
		ng_cuda_fail(why, dev, e, "cudaEventRecord");
		goto out;
	}
	if (ng_cuda_elapsed(dev, e0, e1, &t, why)) goto out;
	if (seconds) *seconds = t;
	rc = 0;
out:
	if (e0) cudaEventDestroy(e0);
	if (e1) cudaEventDestroy(e1);
	return rc;
}

int ng_cuda_grid(int dev, unsigned *blocks, char *why)
{
	int sms = 0, threads = 0;
	NG_CUDA_TRY(dev, why, cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev),
	            "cudaDeviceGetAttribute(multiProcessorCount)");
	NG_CUDA_TRY(dev, why,
	            cudaDeviceGetAttribute(&threads, cudaDevAttrMaxThreadsPerMultiProcessor, dev),
	            "cudaDeviceGetAttribute(maxThreadsPerMultiProcessor)");
	if (sms < 1) sms = 1;
	int per_sm = threads / NG_CUDA_THREADS;
	if (per_sm < 4) per_sm = 4;
	*blocks = (unsigned)sms * (unsigned)per_sm;
	return 0;
}

/* ---- the planted slowdown ----------------------------------------------- */

static std::atomic<double> g_share[NG_CUDA_MAX_DEVICES];
static std::atomic<int> g_share_set[NG_CUDA_MAX_DEVICES];

double ng_cuda_throttle_share(int dev)
{
	if (dev < 0 || dev >= NG_CUDA_MAX_DEVICES || !g_share_set[dev].load()) return 1.0;
	return g_share[dev].load();
}

static int ng_throttle(int dev, double share, char *why)
{
	if (dev < 0 || dev >= NG_CUDA_MAX_DEVICES)
		return ng_cuda_failmsg(why, dev, "throttle: no such device");
	if (!(share > 0.0)) /* also NaN */
		return ng_cuda_failmsg(why, dev, "throttle: share %g is not above 0", share);
	if (share >= 1.0) {
		g_share_set[dev].store(0);
		g_share[dev].store(1.0);
		return 0;
	}
	if (share < 0.01) share = 0.01;
	g_share[dev].store(share);
	g_share_set[dev].store(1);
	return 0;
}

__device__ static inline uint64_t globaltimer_ns(void)
{
	uint64_t t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

/* Each block waits out ns of the device's wall clock; the first thread of
 * each block reads the timer, the others leave at once. */
__global__ void ng_spin_kernel(uint64_t ns)
{
	if (threadIdx.x != 0) return;
	uint64_t t0 = globaltimer_ns();
	while (globaltimer_ns() - t0 < ns) __nanosleep(2000);
}

int ng_cuda_spin_preload(int dev, char *why)
{
	NG_CUDA_PRELOAD(dev, why, ng_spin_kernel);
	return 0;
}

cudaError_t ng_cuda_spin(cudaStream_t stream, unsigned blocks, uint64_t ns)
{
	ng_spin_kernel<<<blocks, 32, 0, stream>>>(ns);
	return cudaGetLastError();
}

/* ---- start-up and the devices -------------------------------------------- */

/* The kernel module's version ("580.65.06") from /proc, where there is one. */
static int driver_release(char *out, size_t len)
{
	FILE *f = fopen("/proc/driver/nvidia/version", "r");
	if (!f) return 0;
	char line[512];
	int found = 0;
	if (fgets(line, sizeof line, f)) {
		const char *k = strstr(line, "Kernel Module");
		if (k) {
			k += strlen("Kernel Module");
			while (*k == ' ' || *k == '\t') k++;
			size_t n = strcspn(k, " \t\n");
			if (n > 0 && n < len) {
				memcpy(out, k, n);
				out[n] = '\0';
				found = 1;
			}
		}
	}
	fclose(f);
	return found;
}

static int ng_init(int *count, char *version, size_t version_len, char *why)
{
	if (count) *count = 0;
	/* CUDA numbers GPUs fastest first unless told otherwise; NVML, nvidia-smi
	 * and Slurm's GPU indexes follow the PCI bus order. Asked before the
	 * runtime's first call, CUDA numbers them the same way, so --gpus 3
	 * means the GPU the operator calls 3. An order the caller set is kept. */
	setenv("CUDA_DEVICE_ORDER", "PCI_BUS_ID", 0);
	int rv = 0, dv = 0;
	(void)cudaRuntimeGetVersion(&rv);
	(void)cudaDriverGetVersion(&dv); /* 0 when there is no driver */
	(void)cudaGetLastError();
	if (version && version_len) {
		char rel[64];
		if (driver_release(rel, sizeof rel))
			snprintf(version, version_len, "cuda %d.%d / driver %s", rv / 1000, (rv % 1000) / 10,
			         rel);
		else if (dv > 0)
			snprintf(version, version_len, "cuda %d.%d / driver cuda %d.%d", rv / 1000,
			         (rv % 1000) / 10, dv / 1000, (dv % 1000) / 10);
		else
			snprintf(version, version_len, "cuda %d.%d / no driver", rv / 1000, (rv % 1000) / 10);
	}
	int n = 0;
	cudaError_t e = cudaGetDeviceCount(&n);
	if (e == cudaErrorNoDevice) {
		(void)cudaGetLastError();
		return 0;
	}
	if (e != cudaSuccess) {
		if (e == cudaErrorInsufficientDriver) {
			(void)cudaGetLastError();
			if (dv == 0) /* no libcuda.so.1 to load */
				return ng_cuda_failmsg(why, -1, "cudaGetDeviceCount: %s (no NVIDIA driver library found)",
				                       cudaGetErrorString(e));
			return ng_cuda_failmsg(why, -1, "cudaGetDeviceCount: %s (runtime CUDA %d.%d, driver CUDA %d.%d)",
			                       cudaGetErrorString(e), rv / 1000, (rv % 1000) / 10, dv / 1000,
			                       (dv % 1000) / 10);
		}
		return ng_cuda_fail(why, -1, e, "cudaGetDeviceCount");
	}
	if (count) *count = n;
	return 0;
}

/* Copies a string of at most srclen bytes, cut to fit and terminated. */
static void copy_text(char *dst, size_t dstlen, const char *src, size_t srclen)
{
	size_t n = strnlen(src, srclen);
	if (n >= dstlen) n = dstlen - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

static int ng_describe(int dev, struct ng_gpu_device *d, char *why)
{
	if (!d) return ng_cuda_failmsg(why, dev, "describe: no output");
	memset(d, 0, sizeof *d);
	if (ng_cuda_use(dev, why)) return NG_GPU_EFAIL;
	cudaDeviceProp p;
	memset(&p, 0, sizeof p);
	NG_CUDA_TRY(dev, why, cudaGetDeviceProperties(&p, dev), "cudaGetDeviceProperties");
	copy_text(d->name, sizeof d->name, p.name, sizeof p.name);
	const unsigned char *u = (const unsigned char *)p.uuid.bytes;
	snprintf(d->uuid, sizeof d->uuid,
	         "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1],
	         u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14],
	         u[15]);
	char bus[sizeof d->pci_bus_id];
	NG_CUDA_TRY(dev, why, cudaDeviceGetPCIBusId(bus, (int)sizeof bus, dev), "cudaDeviceGetPCIBusId");
	copy_text(d->pci_bus_id, sizeof d->pci_bus_id, bus, sizeof bus);
	for (char *c = d->pci_bus_id; *c; c++) /* NVML writes it in lower case */
		if (*c >= 'A' && *c <= 'F') *c = (char)(*c - 'A' + 'a');
	size_t fr = 0, tot = 0;
	NG_CUDA_TRY(dev, why, cudaMemGetInfo(&fr, &tot), "cudaMemGetInfo");
	d->total_bytes = tot;
	d->free_bytes = fr;
	d->cc_major = p.major;
	d->cc_minor = p.minor;
	d->sm_count = p.multiProcessorCount;
	return 0;
}

/* ---- the table -------------------------------------------------------------- */

/* gemm.cu */
NG_CUDA_HIDDEN int ng_gemm_setup(int, unsigned, void **, char *, size_t, char *);
NG_CUDA_HIDDEN int ng_gemm_run(void *, unsigned, double *, char *);
NG_CUDA_HIDDEN int ng_gemm_verify(void *, uint64_t *, uint64_t *, char *);
NG_CUDA_HIDDEN void ng_gemm_teardown(void *);
NG_CUDA_HIDDEN int ng_ref_gemm(int, unsigned, unsigned, double *, char *);
/* mem.cu */
NG_CUDA_HIDDEN int ng_mem_setup(int, uint64_t, void **, char *);
NG_CUDA_HIDDEN int ng_mem_pattern(void *, enum ng_gpu_pattern, uint64_t, int64_t, uint64_t *,
                                  uint64_t *, unsigned, unsigned *, char *);
NG_CUDA_HIDDEN int ng_mem_copy(void *, unsigned, uint64_t *, double *, char *);
NG_CUDA_HIDDEN void ng_mem_teardown(void *);
NG_CUDA_HIDDEN int ng_ref_d2d(int, uint64_t, unsigned, double *, char *);
/* copy.cu */
NG_CUDA_HIDDEN int ng_copy_setup(enum ng_gpu_path, int, int, uint64_t, void **, char *);
NG_CUDA_HIDDEN int ng_copy_run(void *, unsigned, double *, char *);
NG_CUDA_HIDDEN int ng_copy_verify(void *, uint64_t, uint64_t *, char *);
NG_CUDA_HIDDEN void ng_copy_teardown(void *);
NG_CUDA_HIDDEN int ng_ref_h2d(int, uint64_t, unsigned, double *, char *);

static const struct ng_gpu_backend g_backend = {
	NG_GPU_BACKEND_ABI,
	"cuda",
	ng_init,
	ng_describe,
	ng_gemm_setup,
	ng_gemm_run,
	ng_gemm_verify,
	ng_gemm_teardown,
	ng_mem_setup,
	ng_mem_pattern,
	ng_mem_copy,
	ng_mem_teardown,
	ng_copy_setup,
	ng_copy_run,
	ng_copy_verify,
	ng_copy_teardown,
	ng_ref_gemm,
	ng_ref_d2d,
	ng_ref_h2d,
	ng_throttle,
};

extern "C" __attribute__((visibility("default"))) const struct ng_gpu_backend *
ng_gpu_backend_v1(void)
{
	return &g_backend;
}
