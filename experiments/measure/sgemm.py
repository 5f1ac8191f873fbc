#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""float32 sgemm speed of the BLAS LibTorch uses (libblas.so.3, OpenBLAS on Debian) against
oneDNN's (libdnnl.so.2), on the matrix shapes of a training step, alternating A B A B.

A benchmark, never a test: it says whether libtorch/kernels/onednn_matmul.h pays on this machine.
  experiments/measure/sgemm.py [--threads N]
Needs /usr/bin/python3 with numpy (scripts/setup.sh --with-python).
"""
import argparse
import ctypes
import os
import time

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--threads", type=int, default=os.cpu_count())
args = parser.parse_args()
os.environ["OMP_NUM_THREADS"] = str(args.threads)  # both libraries use OpenMP; before loading them
import numpy as np  # noqa: E402

dnnl = ctypes.CDLL("libdnnl.so.2")
blas = ctypes.CDLL("libblas.so.3")
i64 = ctypes.c_int64
dnnl.dnnl_sgemm.argtypes = [ctypes.c_char, ctypes.c_char, i64, i64, i64, ctypes.c_float,
                            ctypes.c_void_p, i64, ctypes.c_void_p, i64, ctypes.c_float,
                            ctypes.c_void_p, i64]


def pointer(array):
    return array.ctypes.data_as(ctypes.c_void_p)


def leading_dimensions(transpose_a, transpose_b, m, n, k):
    return (m if transpose_a else k), (k if transpose_b else n)


def onednn(transpose_a, transpose_b, m, n, k, a, b, c):  # row-major
    lda, ldb = leading_dimensions(transpose_a, transpose_b, m, n, k)
    dnnl.dnnl_sgemm(b"T" if transpose_a else b"N", b"T" if transpose_b else b"N", m, n, k, 1.0,
                    pointer(a), lda, pointer(b), ldb, 0.0, pointer(c), n)


def fortran_blas(transpose_a, transpose_b, m, n, k, a, b, c):  # row-major C^T = B^T A^T
    lda, ldb = leading_dimensions(transpose_a, transpose_b, m, n, k)
    ref = ctypes.byref
    blas.sgemm_(ref(ctypes.c_char(b"T" if transpose_b else b"N")),
                ref(ctypes.c_char(b"T" if transpose_a else b"N")), ref(ctypes.c_int(n)),
                ref(ctypes.c_int(m)), ref(ctypes.c_int(k)), ref(ctypes.c_float(1.0)), pointer(b),
                ref(ctypes.c_int(ldb)), pointer(a), ref(ctypes.c_int(lda)),
                ref(ctypes.c_float(0.0)), pointer(c), ref(ctypes.c_int(n)))


# (label, transpose_a, transpose_b, m, n, k): forward x W^T and the two backward products.
SHAPES = [
    ("ceiling 2048^3", False, False, 2048, 2048, 2048),
    ("d=256 projection, forward", False, True, 3000, 256, 256),
    ("FFN 256->1024, forward", False, True, 3000, 1024, 256),
    ("FFN 1024->256, forward", False, True, 3000, 256, 1024),
    ("output 256->8000, forward", False, True, 2800, 8000, 256),
    ("output, input gradient", False, False, 2800, 256, 8000),
    ("output, weight gradient", True, False, 8000, 256, 2800),
    ("d=256 projection, weight gradient", True, False, 256, 256, 3000),
    ("RNN step, GRU input gates (B=100)", False, True, 100, 1536, 1792),
    ("RNN step, GRU state gates (B=100)", False, True, 100, 1536, 512),
    ("RNN step, GRU weight gradient", True, False, 1536, 1792, 100),
]

print(f"threads {args.threads}; GFLOP/s, A B A B (BLAS = {os.path.realpath('/usr/lib/x86_64-linux-gnu/libblas.so.3')})")
print(f"{'shape':38} {'m':>5} {'n':>5} {'k':>5} {'BLAS':>7} {'oneDNN':>7} {'BLAS':>7} {'oneDNN':>7} {'ratio':>6}")
rng = np.random.default_rng(0)
for label, transpose_a, transpose_b, m, n, k in SHAPES:
    a = rng.random((k, m) if transpose_a else (m, k), dtype=np.float32)
    b = rng.random((n, k) if transpose_b else (k, n), dtype=np.float32)
    reference = (a.T if transpose_a else a) @ (b.T if transpose_b else b)
    rates = []
    for multiply in (fortran_blas, onednn, fortran_blas, onednn):
        c = np.zeros((m, n), np.float32)
        multiply(transpose_a, transpose_b, m, n, k, a, b, c)  # warm-up, and the check below
        assert np.allclose(c, reference, rtol=1e-4, atol=1e-3), (label, multiply.__name__)
        repeats = max(3, int(2e10 / (2 * m * n * k)))
        start = time.perf_counter()
        for _ in range(repeats):
            multiply(transpose_a, transpose_b, m, n, k, a, b, c)
        rates.append(2 * m * n * k * repeats / (time.perf_counter() - start) / 1e9)
    ratio = (rates[1] + rates[3]) / (rates[0] + rates[2])
    print(f"{label:38} {m:5} {n:5} {k:5} " + " ".join(f"{r:7.1f}" for r in rates) + f" {ratio:5.2f}x")
