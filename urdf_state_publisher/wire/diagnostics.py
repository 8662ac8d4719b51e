"""diagnostic_msgs/DiagnosticArray bytes: the node's status written, recorded ones read; no ROS.

The node's status is `<node name>: joint_states`, with the robot's name as its hardware_id and
as its first value (`robot`), as diagnostic_updater names a node's task: what tells it from
other nodes' statuses in a recording (`is_nodes_status`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from urdf_state_publisher.wire.cdr import CdrReader, CdrWriter

__all__ = ['diagnostic_array', 'DiagnosticStatus', 'diagnostic_statuses', 'is_nodes_status',
           'read_diagnostic_array', 'ROBOT_KEY', 'status_name']

TASK = 'joint_states'
ROBOT_KEY = 'robot'  # the status's first value: the robot's name, also its hardware_id


class DiagnosticStatus(NamedTuple):
    """One diagnostic_msgs/DiagnosticStatus."""

    level: int  # OK 0, WARN 1, ERROR 2, STALE 3
    name: str
    message: str
    hardware_id: str
    values: tuple[tuple[str, str], ...]


def status_name(node_name: str) -> str:
    """The name of the node's status."""
    return f'{node_name}: {TASK}'


def is_nodes_status(status: DiagnosticStatus) -> bool:
    """Whether a status is this node's (under any node name), as status_name and health make it."""
    return (status.name.endswith(f': {TASK}') and bool(status.values)
            and status.values[0] == (ROBOT_KEY, status.hardware_id))


def diagnostic_array(stamp: tuple[int, int], *, level: int, name: str, message: str,
                     hardware_id: str, values: Sequence[tuple[str, str]]) -> bytes:
    """A DiagnosticArray stamped `stamp` holding one DiagnosticStatus.

    `level` is the status's byte (OK 0, WARN 1, ERROR 2, STALE 3); `values` its key/value pairs.
    """
    return diagnostic_statuses(stamp, '', [DiagnosticStatus(level, name, message, hardware_id,
                                                            tuple(values))])


def diagnostic_statuses(stamp: tuple[int, int], frame_id: str,
                        statuses: Sequence[DiagnosticStatus]) -> bytes:
    """A DiagnosticArray of `statuses`."""
    writer = CdrWriter()
    writer.stamp(*stamp)
    writer.string(frame_id)
    writer.uint32(len(statuses))
    for status in statuses:
        writer.uint8(status.level)
        for text in (status.name, status.message, status.hardware_id):
            writer.string(text)
        writer.uint32(len(status.values))
        for key, value in status.values:
            writer.string(key)
            writer.string(value)
    return writer.data()


def read_diagnostic_array(data: bytes) -> tuple[tuple[int, int], str, list[DiagnosticStatus]]:
    """A DiagnosticArray's stamp, frame_id and statuses; cdr.MalformedMessage for other bytes."""
    reader = CdrReader(data)
    stamp = reader.stamp()
    frame_id = reader.string()
    statuses = []
    for _ in range(reader.count(1 + 3 * 4 + 4)):
        level = reader.uint8()
        name, message, hardware_id = reader.string(), reader.string(), reader.string()
        values = tuple((reader.string(), reader.string()) for _ in range(reader.count(8)))
        statuses.append(DiagnosticStatus(level, name, message, hardware_id, values))
    return stamp, frame_id, statuses
