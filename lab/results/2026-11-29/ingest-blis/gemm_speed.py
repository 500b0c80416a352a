"""Single-core sgemm speed of thinc's blis against numpy's OpenBLAS, (4500 x 288) @ (288 x 288):
the shape of spaCy's layers over a batch of chunks. Run with OPENBLAS_NUM_THREADS=1, and
BLIS_ARCH_DEBUG=1 to see which BLIS kernels were picked."""

import time

import blis.py
import numpy as np

a = np.random.rand(4500, 288).astype("float32")
b = np.random.rand(288, 288).astype("float32")
blis.py.gemm(a, b)
t = time.perf_counter()
n = 20
for _ in range(n):
    blis.py.gemm(a, b)
dt = (time.perf_counter() - t) / n
print("blis GFLOP/s", 2 * 4500 * 288 * 288 / dt / 1e9)
t = time.perf_counter()
for _ in range(n):
    a @ b
dt = (time.perf_counter() - t) / n
print("numpy GFLOP/s", 2 * 4500 * 288 * 288 / dt / 1e9)
