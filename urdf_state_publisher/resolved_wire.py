"""The resolved JointState serialized once by the middleware, then patched in place per publish.

A JointState of every joint of the model, built as a message object, costs microseconds per
name each time; its names never change for a model. So, as tf_wire does for /tf, a template
is serialized once with sentinel numbers (`wire_template`), the offsets of its stamp and its
position, velocity and effort arrays are found, and each publish writes the numbers there.
Velocities and efforts are either given for every joint or left empty (ResolvedFields), so a
model has at most four templates.
"""

from __future__ import annotations

from collections.abc import Sequence
import struct

import numpy as np
from rclpy.serialization import serialize_message
from sensor_msgs.msg import JointState

from urdf_state_publisher.resolved_state import ResolvedFields
from urdf_state_publisher.wire_template import (
    locate_sentinels,
    sentinel_double,
    sentinel_stamp,
    unsupported,
)

__all__ = ['ResolvedWriter']

STAMP = struct.Struct('<iI')


class _Template:
    """The serialized JointState of `names`, with or without velocities and efforts."""

    def __init__(self, names: Sequence[str], velocities: bool, efforts: bool):
        count = len(names)
        arrays = 1 + velocities + efforts
        sentinels = np.array([sentinel_double(i) for i in range(arrays * max(count, 1))])
        message = JointState(name=list(names))
        message.header.stamp.sec, message.header.stamp.nanosec = sentinel_stamp(0)
        filled = [sentinels[k * count:(k + 1) * count].tolist() for k in range(arrays)]
        message.position = filled[0]
        if velocities:
            message.velocity = filled[1]
        if efforts:
            message.effort = filled[-1]
        data = serialize_message(message)
        self._buffer = bytearray(data)
        self._arrays: list[np.ndarray] = []
        starts, [stamp] = locate_sentinels(data, arrays if count else 0, max(count, 1), 1,
                                           'JointState')
        if stamp < 0:
            raise unsupported('JointState', 'stamp')
        self._stamp = stamp
        for k, start in enumerate(starts):
            # Each array's doubles must be stored whole, in order and little-endian.
            expected = sentinels[k * count:(k + 1) * count].astype('<f8').tobytes()
            if start < 0 or data[start:start + 8 * count] != expected:
                raise unsupported('JointState', 'joint values')
            self._arrays.append(np.frombuffer(self._buffer, '<f8', count, start))

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
