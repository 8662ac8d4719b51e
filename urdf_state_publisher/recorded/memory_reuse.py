"""A run on a Dask worker keeps the memory it frees for its next buffers, then gives it back.

Dask's nanny starts each worker with MALLOC_TRIM_THRESHOLD_=65536 (its
`distributed.nanny.pre-spawn-environ`), so that a worker returns freed memory to the system
at once. Setting that variable also fixes glibc's mmap threshold at its 128 KiB floor, which
glibc otherwise raises as it sees large buffers freed: every buffer of 128 KiB or more, an
MCAP chunk (1 MiB, read and written once each), is then mapped and unmapped each time, and its
pages faulted in again. A run's CPU grew by about a third from it (bench/benchmark.py
--only cluster). For the span of a run the thresholds are raised, so that freed buffers are
reused; after the last run under way in the process, they are put back to what the
environment set and malloc_trim(0) returns what was freed, as the nanny means.

Only where the environment fixed the trim threshold, and the C library is glibc (mallopt and
malloc_trim); elsewhere a run leaves the allocator alone.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
import ctypes
import os
import threading

__all__ = ['memory_kept_for_reuse']

# glibc's mallopt parameters (malloc.h) and its fixed mmap threshold's floor.
M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
DEFAULT_MMAP_THRESHOLD = 128 * 1024
# During a run: buffers up to 32 MiB from the heap, and up to 256 MiB of free memory kept.
RUN_MMAP_THRESHOLD = 32 * 1024 * 1024
RUN_TRIM_THRESHOLD = 256 * 1024 * 1024

_lock = threading.Lock()
_runs_under_way = 0


@contextmanager
def memory_kept_for_reuse() -> Iterator[None]:
    """Around a run on a worker whose environment pinned malloc: freed buffers reused."""
    libc = _glibc_pinned_by_environment()
    if libc is None:
        yield
        return
    global _runs_under_way
    with _lock:
        _runs_under_way += 1
        if _runs_under_way == 1:
            libc.mallopt(M_MMAP_THRESHOLD, RUN_MMAP_THRESHOLD)
            libc.mallopt(M_TRIM_THRESHOLD, RUN_TRIM_THRESHOLD)
    try:
        yield
    finally:
        with _lock:
            _runs_under_way -= 1
            if _runs_under_way == 0:
                libc.mallopt(M_TRIM_THRESHOLD, int(os.environ['MALLOC_TRIM_THRESHOLD_']))
                libc.mallopt(M_MMAP_THRESHOLD, _environment_number(
                    'MALLOC_MMAP_THRESHOLD_', DEFAULT_MMAP_THRESHOLD))
                libc.malloc_trim(0)


def _glibc_pinned_by_environment() -> ctypes.CDLL | None:
    """This process's glibc, if MALLOC_TRIM_THRESHOLD_ pinned its thresholds; else None."""
    if _environment_number('MALLOC_TRIM_THRESHOLD_', None) is None:
        return None
    libc = ctypes.CDLL(None)
    if not (hasattr(libc, 'mallopt') and hasattr(libc, 'malloc_trim')):
        return None
    return libc


def _environment_number(name: str, default: int | None) -> int | None:
    """A malloc tunable's value in the environment, as glibc reads it at start-up."""
    try:
        return int(os.environ[name])
    except (KeyError, ValueError):
        return default
