"""diagnostic_msgs/DiagnosticArray bytes, for the node's one status (cdr.CdrWriter; no ROS)."""

from __future__ import annotations

from collections.abc import Sequence

from urdf_state_publisher.cdr import CdrWriter

__all__ = ['diagnostic_array']


def diagnostic_array(stamp: tuple[int, int], *, level: int, name: str, message: str,
                     hardware_id: str, values: Sequence[tuple[str, str]]) -> bytes:
    """A DiagnosticArray stamped `stamp` holding one DiagnosticStatus.

    `level` is the status's byte (OK 0, WARN 1, ERROR 2, STALE 3); `values` its key/value pairs.
    """
    writer = CdrWriter()
    writer.stamp(*stamp)
    writer.string('')  # header.frame_id
    writer.uint32(1)
    writer.uint8(level)
    for text in (name, message, hardware_id):
        writer.string(text)
    writer.uint32(len(values))
    for key, value in values:
        writer.string(key)
        writer.string(value)
    return writer.data()
