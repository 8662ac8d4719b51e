"""The bag command's tests' helpers that need no ROS: what the command says when it fails; a
pipe that holds a run where a test stops it."""

from __future__ import annotations

import os
import subprocess


def error_line(result: subprocess.CompletedProcess) -> str:
    """The one line of the command's own that a failed run printed (exit 1, no traceback)."""
    assert result.returncode == 1, result.stdout + result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith(
        'urdf_state_publisher_bag: ')]
    assert len(lines) == 1, result.stderr
    assert 'Traceback' not in result.stderr
    return lines[0]


def full_pipe() -> tuple[int, int]:
    """A pipe already full: whoever writes to its write end waits until it is read."""
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    for size in (4096, 1):
        try:
            while True:
                os.write(write_end, bytes(size))
        except BlockingIOError:
            pass
    os.set_blocking(write_end, True)
    return read_end, write_end
