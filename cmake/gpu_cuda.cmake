# (filled in by the gpu_cuda work)
