# (filled in by the gpu work)
