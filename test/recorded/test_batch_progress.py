"""A batch's progress lines: pure, in-process."""

import io
from pathlib import Path

import pytest

from urdf_state_publisher.recorded.progress import (
    BatchProgress,
    BatchState,
    PLAIN_PERIOD_S,
    progress_text,
)

pytestmark = pytest.mark.ros_free  # also runs where no ROS 2 is installed


def test_the_progress_line_says_done_running_left_and_after_a_run_the_throughput():
    assert progress_text(BatchState(total=5, running=2), 1.0) == (
        'batch: 0 of 5 runs done, 2 running, 3 left; 1 s')
    # 2 runs of 30 s of recording each in 20 s: 0.1 runs/s, 3 s of bag per second.
    assert progress_text(BatchState(total=5, done=2, running=2, not_ok=1,
                                    recorded_seconds=60.0), 20.0) == (
        'batch: 2 of 5 runs done (1 not OK), 2 running, 1 left; 20 s, 0.1 runs/s, '
        '3.0 s of bag per second')
    assert progress_text(BatchState(total=1, done=1), 0.5).startswith(
        'batch: 1 of 1 run done, 0 running, 0 left')


def test_a_terminal_gets_one_line_redrawn_at_each_look():
    stream = io.StringIO()
    progress = BatchProgress(stream, terminal=True, start=100.0, columns=80)
    progress.show(BatchState(total=3, running=2), 100.0)
    progress.show(BatchState(total=3, running=2), 101.0)
    progress.clear()
    assert '\n' not in stream.getvalue()
    assert stream.getvalue().split('\r\x1b[K') == [
        '', 'batch: 0 of 3 runs done, 2 running, 1 left; 0 s',
        'batch: 0 of 3 runs done, 2 running, 1 left; 1 s', '']


def test_a_log_gets_a_line_at_each_change_and_now_and_then_without_one():
    stream = io.StringIO()
    progress = BatchProgress(stream, terminal=False, start=0.0, columns=80)
    for now in range(0, 10):  # looked at once a second, nothing changes
        progress.show(BatchState(total=3, running=2), float(now))
    progress.show(BatchState(total=3, done=1, running=2, recorded_seconds=10.0), 10.0)
    progress.show(BatchState(total=3, done=1, running=2, recorded_seconds=10.0), 11.0)
    progress.show(BatchState(total=3, done=1, running=2, recorded_seconds=10.0),
                  10.0 + PLAIN_PERIOD_S)
    progress.clear()  # a log's lines stay
    lines = stream.getvalue().splitlines()
    assert [line.split(';')[0] for line in lines] == [
        'batch: 0 of 3 runs done, 2 running, 1 left',
        'batch: 1 of 3 runs done, 2 running, 0 left',
        'batch: 1 of 3 runs done, 2 running, 0 left']
    assert lines[-1].startswith(f'batch: 1 of 3 runs done, 2 running, 0 left; '
                                f'{10 + PLAIN_PERIOD_S:.0f} s')
    assert '\r' not in stream.getvalue()


def test_the_progress_line_of_the_recorded_data_page_is_a_batchs():
    page = Path(__file__).resolve().parents[2] / 'doc' / 'recorded-data.md'
    [shown] = [line for line in page.read_text(encoding='utf-8').splitlines()
               if line.startswith('batch: ')]
    # 2 runs of 60 s of recording each, done in 48 s: 2/48 runs/s, 120/48 s per second.
    assert shown == progress_text(BatchState(total=5, done=2, running=2,
                                             recorded_seconds=120.0), 48.0)


def test_a_narrow_terminal_gets_the_line_without_its_last_parts_never_a_number_cut():
    stream = io.StringIO()
    state = BatchState(total=5, done=2, running=2, recorded_seconds=60.0)
    full = progress_text(state, 20.0)  # '..., 1 left; 20 s, 0.1 runs/s, 3.0 s of bag per second'
    BatchProgress(stream, terminal=True, start=0.0, columns=len(full) - 5).show(state, 20.0)
    assert stream.getvalue() == '\r\x1b[K' + full.removesuffix(', 3.0 s of bag per second')
