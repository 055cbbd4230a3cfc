"""The process's memory as the allocator and the kernel see it, for the tests that check memory is given back:
glibc's own figure of the bytes it has handed out and not had back (`mallinfo2`: in use on its heaps plus its
mmap'ed blocks; torch's CPU tensors are allocated through it), the resident set, and a `malloc_trim` so freed
pages leave the resident set before it is read."""

from __future__ import annotations

import ctypes
import ctypes.util
import gc

import psutil


class _MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks",
                 "keepcost")]


def _libc():
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.mallinfo2.restype = _MallInfo2
        libc.malloc_trim.argtypes = [ctypes.c_size_t]
        return libc
    except (OSError, AttributeError):  # not glibc (or older than 2.33)
        return None


LIBC = _libc()


def heap_in_use() -> int | None:
    """Bytes malloc has handed out and not had back (all arenas, mmap'ed blocks included); None without glibc."""
    if LIBC is None:
        return None
    info = LIBC.mallinfo2()
    return info.uordblks + info.hblkhd


def settle() -> None:
    """Collect garbage and give freed pages back to the kernel, so the resident set is what is alive."""
    gc.collect()
    if LIBC is not None:
        LIBC.malloc_trim(0)


def rss() -> int:
    return psutil.Process().memory_info().rss
