"""Configures OpenBLAS (Debian's torch calls the system BLAS) before torch loads it: import this
module before torch in every entry script.

One thread: on the shared 2-core machine torch's second thread mostly waits for the first, and
train.py --procs runs one process per core instead.

The kernel family: OpenBLAS 0.3.21 (Debian 12) does not know newer CPUs (Emerald Rapids, Zen 5)
and falls back to its generic "Prescott" SSE3 kernels, 4x slower for the model's matmuls (a
320x192 . 192x768 product ran at 32 GFLOP/s instead of 138 on one core); the whole training
step was 1.8x slower. Choosing the family from the CPU's own flags avoids that."""
import os


def _cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def _kernel_family(flags):
    if {"avx512f", "avx512bw", "avx512vl", "avx512dq", "avx512cd"} <= flags:
        return "SkylakeX"
    if {"avx2", "fma"} <= flags:
        return "Haswell"
    return None  # leave the choice to OpenBLAS


os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
if "OPENBLAS_CORETYPE" not in os.environ:
    family = _kernel_family(_cpu_flags())
    if family:
        os.environ["OPENBLAS_CORETYPE"] = family
