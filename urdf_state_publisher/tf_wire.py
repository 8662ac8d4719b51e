"""TFMessages serialized once by the middleware, then patched in place for each publish.

Building a TFMessage of N rclpy message objects and converting it for the middleware costs
several microseconds per transform; publishing already-serialized bytes costs a few
microseconds in all. A template is a TFMessage for a fixed list of (parent, child) frames,
serialized by the middleware itself (`rclpy.serialization`), in which the byte offsets of every
stamp and every transform are found by sentinels (`wire_template`). Publishing then writes the
numbers at those offsets and hands the bytes over. Nothing assumes a particular encoding beyond
numbers being stored whole and little-endian, which is checked when the template is built.
"""

from __future__ import annotations

from collections.abc import Sequence
import struct

from geometry_msgs.msg import TransformStamped
import numpy as np
from rclpy.serialization import serialize_message
from tf2_msgs.msg import TFMessage

from urdf_state_publisher.wire_template import (
    locate_sentinels,
    sentinel_double,
    sentinel_stamp,
    unsupported,
)

__all__ = ['TransformTemplate', 'build_tf_message']

STAMP = struct.Struct('<II')  # sec (as its 32 bits), nanosec


def build_tf_message(frames: Sequence[tuple[str, str]], sec: int, nanosec: int,
                     transforms: np.ndarray) -> TFMessage:
    """A TFMessage object with one TransformStamped per (parent, child) and row of `transforms`.

    Each row holds translation x, y, z and rotation quaternion x, y, z, w.
    """
    message = TFMessage()
    for (parent, child), row in zip(frames, transforms.tolist()):
        stamped = TransformStamped()
        stamped.header.stamp.sec = sec
        stamped.header.stamp.nanosec = nanosec
        stamped.header.frame_id = parent
        stamped.child_frame_id = child
        t, r = stamped.transform.translation, stamped.transform.rotation
        t.x, t.y, t.z, r.x, r.y, r.z, r.w = row
        message.transforms.append(stamped)
    return message


class TransformTemplate:
    """The serialized TFMessage for one list of (parent, child) frames."""

    def __init__(self, frames: Sequence[tuple[str, str]]):
        """Serialize a message for `frames` and locate its stamps and transforms."""
        self.frames = tuple(frames)
        n = len(self.frames)
        sentinels = np.array([[sentinel_double(7 * i + k) for k in range(7)] for i in range(n)])
        message = build_tf_message(self.frames, 0, 0, sentinels.reshape(n, 7))
        for i, stamped in enumerate(message.transforms):
            stamped.header.stamp.sec, stamped.header.stamp.nanosec = sentinel_stamp(i)
        data = serialize_message(message)

        pose_offsets, stamp_offsets = locate_sentinels(data, n, 7, n, 'TFMessage')
        for i in range(n):
            # Each transform's 7 doubles must be stored whole, in order and little-endian.
            offset = pose_offsets[i]
            if offset < 0 or data[offset:offset + 56] != sentinels[i].astype('<f8').tobytes():
                raise unsupported('TFMessage', f'transform of frame {self.frames[i][1]!r}')
            if stamp_offsets[i] < 0:
                raise unsupported('TFMessage', f'stamp of frame {self.frames[i][1]!r}')
        # Numbers are written as 32-bit words (a double is two): a quarter of the elements of a
        # byte-wise copy. CDR aligns every number to 4 bytes or more from the start of the
        # data after the 4-byte encapsulation header, so every offset is a multiple of 4.
        if (pose_offsets % 4).any() or (stamp_offsets % 4).any():
            raise unsupported('TFMessage', 'transforms on 4-byte boundaries')
        self._buffer = bytearray(data)
        self._words = np.frombuffer(self._buffer, dtype='<u4', count=len(data) // 4)
        # Word indices: each transform's 14 words (a row of them), each stamp's 2 (sec, nanosec).
        self._pose_words = pose_offsets[:, None] // 4 + np.arange(14)
        self._stamp_words = (stamp_offsets[:, None] // 4 + np.arange(2)).ravel()
        self._stamp_bytes = bytearray(8)  # put() repeats it over every stamp
        self._stamp = np.frombuffer(self._stamp_bytes, dtype='<u4')

    def __len__(self) -> int:
        """Number of transforms."""
        return len(self.frames)

    def serialize(self, sec: int, nanosec: int, transforms: np.ndarray) -> bytes:
        """The serialized TFMessage with every stamp and every row of `transforms` filled in."""
        STAMP.pack_into(self._stamp_bytes, 0, sec & 0xFFFFFFFF, nanosec)
        words = self._words
        # put() repeats the 2-word stamp over every stamp, for a fifth of what an indexed
        # assignment costs.
        words.put(self._stamp_words, self._stamp)
        words[self._pose_words] = np.ascontiguousarray(transforms, dtype='<f8').view('<u4')
        return bytes(self._buffer)
