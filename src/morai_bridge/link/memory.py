"""Keep freed memory in the process for reuse (glibc ``mallopt``; no ROS).

A sensor bridge allocates and frees buffers of a megabyte or more for every LiDAR revolution and
camera frame (decoded points, the packed cloud, rospy's serialisation buffer).  glibc serves
such sizes with fresh ``mmap`` regions, or trims them off the top of a thread's heap, and gives
them back to the kernel when they are freed, so the next revolution page-faults (and the kernel
zeroes) every 4 kB again: about a millisecond per HDL-32E revolution, paid at the cut, where the
latency counts.  :func:`keep_freed_memory` raises the mmap and trim thresholds once at start-up
(the ``MALLOC_MMAP_THRESHOLD_`` / ``MALLOC_TRIM_THRESHOLD_`` environment variables do the same),
so those buffers are reused from the heap.  The price: the process keeps its peak heap (tens of
MB for an HDL-32E) instead of returning it.  Figures: docs/sensors_ros.md.
"""
import ctypes
import ctypes.util

# glibc malloc.h
M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
#: the largest mmap threshold glibc accepts on 64-bit (HEAP_MAX_SIZE / 2)
MMAP_THRESHOLD_MAX = 32 << 20


def keep_freed_memory(mmap_threshold=MMAP_THRESHOLD_MAX, trim_threshold=256 << 20):
    """Serve allocations below ``mmap_threshold`` bytes from the heap and return free memory to the
    kernel only above ``trim_threshold`` bytes.  True when applied; False where the C library has
    no ``mallopt`` (not glibc) or refused a value."""
    name = ctypes.util.find_library('c')
    try:
        libc = ctypes.CDLL(name)
        mallopt = libc.mallopt
    except (OSError, AttributeError, TypeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    return bool(mallopt(M_MMAP_THRESHOLD, int(mmap_threshold))) and bool(mallopt(M_TRIM_THRESHOLD,
                                                                                    int(trim_threshold)))
