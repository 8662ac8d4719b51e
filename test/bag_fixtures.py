"""The bag command's tests' helpers that need no ROS: what the command says when it fails."""

from __future__ import annotations

import subprocess


def error_line(result: subprocess.CompletedProcess) -> str:
    """The one line of the command's own that a failed run printed (exit 1, no traceback)."""
    assert result.returncode == 1, result.stdout + result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith(
        'urdf_state_publisher_bag: ')]
    assert len(lines) == 1, result.stderr
    assert 'Traceback' not in result.stderr
    return lines[0]
