"""Configures OpenBLAS (Debian's torch calls the system BLAS) before torch loads it: import this
module before torch in every entry script.

One thread: on the shared 2-core machine torch's second thread mostly waits for the first, and
train.py --procs runs one process per core instead.

The kernel family: OpenBLAS 0.3.21 (Debian 12) does not know newer CPUs (Emerald Rapids, Zen 5)
and falls back to its generic "Prescott" SSE3 kernels, 4x slower for the model's matmuls (a
320x192 . 192x768 product ran at 32 GFLOP/s instead of 138 on one core); the whole training
step was 1.8x slower. Choosing the family from the CPU's own flags avoids that.

It also sets glibc's malloc to keep freed memory (_keep_freed_memory), which has to happen in the
same place: before torch allocates anything, in every entry script."""
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


def _keep_freed_memory():
    """glibc hands blocks over 128 KiB to mmap and returns them on free, so each of the step's
    many fresh tensors of that size faults its pages in again: on this VM Muon's Newton-Schulz
    iterations (128x128 and 8x128x128 products) took 3x as long as with the memory kept. A 32 MiB
    threshold and no trimming keep freed memory in the heap for the next tensor. Environment
    settings win (GLIBC_TUNABLES, read before this runs, is not overridden)."""
    if "GLIBC_TUNABLES" in os.environ:
        return
    try:
        import ctypes
        libc = ctypes.CDLL(None)
    except OSError:
        return
    m_trim_threshold, m_top_pad, m_mmap_threshold = -1, -2, -3  # <malloc.h>
    libc.mallopt(m_mmap_threshold, 32 << 20)
    libc.mallopt(m_trim_threshold, 1 << 30)
    libc.mallopt(m_top_pad, 64 << 20)


_keep_freed_memory()
