"""A run on a Dask worker reuses the large buffers it frees, and gives the memory back after.

Each case runs in a process of its own started as Dask's nanny starts a worker, with
MALLOC_TRIM_THRESHOLD_=65536 in its environment. What the allocator does is read from the
kernel's count of the process's page faults: a 1 MiB buffer that is mapped afresh faults in its
256 pages each time it is made; one reused from the heap faults none. And from the process's
resident memory, for what is handed back.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytestmark = [pytest.mark.ros_free,  # also runs where no ROS 2 is installed
              pytest.mark.skipif(not sys.platform.startswith('linux'),
                                 reason="glibc's allocator: Linux only")]

# Pages of a 1 MiB buffer, and how many buffers each measure makes and frees.
PAGES = (1 << 20) // os.sysconf('SC_PAGE_SIZE')
BUFFERS = 100

# Two measures, each in a fresh process: the faults per buffer through the runs, and then
# (where a freed 200 MiB would leave chunks that later buffers reuse, whatever the thresholds)
# the memory given back.
MEASURE = r'''
import ctypes, json, resource, sys
from urdf_state_publisher.recorded.memory_reuse import memory_kept_for_reuse

def faults_per_buffer():
    """Page faults per 1 MiB buffer made, filled and freed."""
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(int(sys.argv[1])):
        buffer = b'x' * (1 << 20)
        del buffer
    return (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / int(sys.argv[1])

class Mallinfo2(ctypes.Structure):  # glibc's struct mallinfo2 (malloc.h): ten size_t
    _fields_ = [(name, ctypes.c_size_t) for name in (
        'arena', 'ordblks', 'smblks', 'hblks', 'hblkhd', 'usmblks', 'fsmblks', 'uordblks',
        'fordblks', 'keepcost')]

libc = ctypes.CDLL(None)
libc.mallinfo2.restype = Mallinfo2

def mapped_for_a_held_buffer():
    """Chunks glibc maps apart from its heap for one 1 MiB buffer, while it is held."""
    before = libc.mallinfo2().hblks
    buffer = b'x' * (1 << 20)
    mapped = libc.mallinfo2().hblks - before
    del buffer
    return mapped

def resident_mib():
    with open('/proc/self/statm') as statm:
        return int(statm.read().split()[1]) * resource.getpagesize() / (1 << 20)

first, second = memory_kept_for_reuse(), memory_kept_for_reuse()
if sys.argv[2] == 'faults':
    outside, mapped_outside = faults_per_buffer(), mapped_for_a_held_buffer()
    first.__enter__()
    inside, mapped_inside = faults_per_buffer(), mapped_for_a_held_buffer()
    second.__enter__()  # a second run on the same worker, at once
    first.__exit__(None, None, None)
    one_of_two_ended = faults_per_buffer()
    second.__exit__(None, None, None)
    after, mapped_after = faults_per_buffer(), mapped_for_a_held_buffer()
    out = dict(outside=outside, inside=inside, one_of_two_ended=one_of_two_ended, after=after,
               mapped_outside=mapped_outside, mapped_inside=mapped_inside,
               mapped_after=mapped_after)
else:
    first.__enter__()
    held = [b'x' * (1 << 20) for _ in range(200)]
    del held
    freed_kept_mib = resident_mib()
    first.__exit__(None, None, None)
    out = dict(freed_kept_mib=freed_kept_mib, after_mib=resident_mib())
print(json.dumps(out))
'''


@pytest.fixture(scope='module')
def measured() -> dict[str, float]:
    environment = {**os.environ, 'MALLOC_TRIM_THRESHOLD_': '65536'}
    environment.pop('MALLOC_MMAP_THRESHOLD_', None)
    figures = {}
    for measure in ('faults', 'memory'):
        result = subprocess.run([sys.executable, '-c', MEASURE, str(BUFFERS), measure],
                                env=environment, capture_output=True, text=True, timeout=300,
                                check=True)
        figures.update(json.loads(result.stdout))
    return figures


def test_a_worker_s_environment_maps_each_large_buffer_afresh(measured):
    # What the runs are spared: without the context, each buffer faults in its pages.
    assert measured['outside'] > PAGES / 2


def test_inside_a_run_large_buffers_are_reused(measured):
    assert measured['inside'] < PAGES / 10


def test_buffers_stay_reused_while_another_run_is_under_way(measured):
    assert measured['one_of_two_ended'] < PAGES / 10


def test_after_the_last_run_the_nanny_s_setting_is_back(measured):
    # Freed memory returned at once (the trim threshold), a large buffer mapped apart (the
    # mmap threshold), as before the runs; inside one, it came from the heap.
    assert measured['after'] > PAGES / 2
    assert (measured['mapped_outside'], measured['mapped_inside'],
            measured['mapped_after']) == (1, 0, 1)


def test_after_the_last_run_freed_memory_is_given_back(measured):
    # 200 MiB freed inside a run stays in the process, and leaves it once the runs end.
    assert measured['freed_kept_mib'] - measured['after_mib'] > 150
