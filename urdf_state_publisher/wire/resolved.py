"""The resolved JointState's bytes: written once per model, then patched in place per publish.

A JointState of every joint of the model, built as a message object, costs microseconds per
name each time; its names never change for a model. So, as wire.tf does for /tf, a template is
written once (`wire.cdr.CdrWriter`), with the offsets of its stamp and its position, velocity and
effort arrays, and each publish writes the numbers there. Velocities and efforts are either
given for every joint or left empty (ResolvedFields), so a model has at most four templates.
Nothing here imports ROS.
"""

from __future__ import annotations

from collections.abc import Sequence
import struct

import numpy as np

from urdf_state_publisher.kinematics.resolved import ResolvedFields
from urdf_state_publisher.wire.cdr import CdrWriter

__all__ = ['ResolvedWriter']

STAMP = struct.Struct('<iI')


class _Template:
    """The JointState of `names`, with or without velocities and efforts."""

    def __init__(self, names: Sequence[str], velocities: bool, efforts: bool):
        count = len(names)
        writer = CdrWriter()
        self._stamp = writer.stamp(0, 0)
        writer.string('')  # header.frame_id
        writer.strings(names)
        starts = [writer.float64_sequence(np.zeros(count))]
        for given in (velocities, efforts):
            start = writer.float64_sequence(np.zeros(count if given else 0))
            if given:
                starts.append(start)
        self._buffer = bytearray(writer.data())
        self._arrays = [np.frombuffer(self._buffer, '<f8', count, start) for start in starts]

    def serialize(self, fields: ResolvedFields) -> bytes:
        STAMP.pack_into(self._buffer, self._stamp, fields.sec, fields.nanosec)
        given = [a for a in (fields.positions, fields.velocities, fields.efforts)
                 if a is not None]
        for array, values in zip(self._arrays, given):
            array[:] = values
        return bytes(self._buffer)


class ResolvedWriter:
    """Serializes the ResolvedFields of one model, whose names never change."""

    def __init__(self, names: Sequence[str]):
        self.names = tuple(names)
        self._templates: dict[tuple[bool, bool], _Template] = {}

    def serialize(self, fields: ResolvedFields) -> bytes:
        """The serialized JointState of `fields` (whose names are this writer's)."""
        layout = (fields.velocities is not None, fields.efforts is not None)
        template = self._templates.get(layout)
        if template is None:
            template = self._templates[layout] = _Template(self.names, *layout)
        return template.serialize(fields)
