"""tf2_msgs/TFMessage bytes: written once per list of frames, then patched for each publish.

Building a TFMessage of N rclpy message objects and converting it for the middleware costs
several microseconds per transform; patching bytes costs a few microseconds in all. A template
is the CDR of a TFMessage for a fixed list of (parent, child) frames (`cdr.CdrWriter`), with the
byte offsets of every stamp and every transform: publishing writes the numbers there and hands
the bytes over. `read_tf_message` reads one back (the bag command keeps recorded transforms of
other frames). Nothing here imports ROS.
"""

from __future__ import annotations

from collections.abc import Sequence
import struct
from typing import NamedTuple

import numpy as np

from urdf_state_publisher.wire.cdr import CdrReader, CdrWriter

__all__ = ['RecordedTransform', 'TransformTemplate', 'read_tf_message', 'tf_message']

STAMP = struct.Struct('<II')  # sec (as its 32 bits), nanosec


class RecordedTransform(NamedTuple):
    """One geometry_msgs/TransformStamped as read: stamp, frames, and 7 numbers (xyz, xyzw)."""

    sec: int
    nanosec: int
    parent: str
    child: str
    values: tuple[float, ...]


class TransformTemplate:
    """The TFMessage for one list of (parent, child) frames."""

    def __init__(self, frames: Sequence[tuple[str, str]]):
        """Write a message for `frames` and note where its stamps and transforms are."""
        self.frames = tuple(frames)
        writer = CdrWriter()
        writer.uint32(len(self.frames))
        stamps, poses = [], []
        for parent, child in self.frames:
            stamps.append(writer.stamp(0, 0))
            writer.string(parent)
            writer.string(child)
            poses.append(writer.float64s(np.zeros(7)))
        data = writer.data()
        # The message sits 4 bytes into a buffer numpy aligned, so that its data, which CDR
        # aligns from the end of the 4-byte encapsulation header, is aligned in memory too: the
        # doubles are an aligned float64 view (one assignment writes every transform) and the
        # stamps, aligned to 4, a uint32 view.
        self._raw = np.zeros(len(data) + 4, dtype=np.uint8)
        self._raw[4:] = np.frombuffer(data, dtype=np.uint8)
        self._message = self._raw[4:]
        self._words = self._raw[4:4 + len(data) // 4 * 4].view('<u4')
        self._doubles = self._raw[8:8 + (len(data) - 4) // 8 * 8].view('<f8')
        # Each transform's 7 doubles (a row of indices into the float64 view), each stamp's 2
        # words (sec, nanosec) into the uint32 view.
        self._pose_slots = (np.array(poses, dtype=np.intp).reshape(-1, 1) - 4) // 8 + np.arange(7)
        self._stamp_words = (np.array(stamps, dtype=np.intp).reshape(-1, 1) // 4
                             + np.arange(2)).ravel()
        self._stamp_bytes = bytearray(8)  # put() repeats it over every stamp
        self._stamp = np.frombuffer(self._stamp_bytes, dtype='<u4')

    def __len__(self) -> int:
        """Number of transforms."""
        return len(self.frames)

    def serialize(self, sec: int, nanosec: int, transforms: np.ndarray) -> bytes:
        """The TFMessage with every stamp and every row of `transforms` filled in.

        Each row holds translation x, y, z and rotation quaternion x, y, z, w.
        """
        STAMP.pack_into(self._stamp_bytes, 0, sec & 0xFFFFFFFF, nanosec)
        # put() repeats the 2-word stamp over every stamp, for a fifth of what an indexed
        # assignment costs.
        self._words.put(self._stamp_words, self._stamp)
        self._doubles[self._pose_slots] = transforms
        return self._message.tobytes()


def tf_message(transforms: Sequence[RecordedTransform]) -> bytes:
    """A TFMessage of `transforms`, each with its own stamp."""
    writer = CdrWriter()
    writer.uint32(len(transforms))
    for transform in transforms:
        writer.stamp(transform.sec, transform.nanosec)
        writer.string(transform.parent)
        writer.string(transform.child)
        writer.float64s(transform.values)
    return writer.data()


def read_tf_message(data: bytes) -> list[RecordedTransform]:
    """The transforms of a TFMessage; cdr.MalformedMessage for bytes that are not one."""
    reader = CdrReader(data)
    transforms = []
    for _ in range(reader.count(4 + 4 + 4 + 4 + 56)):
        sec, nanosec = reader.stamp()
        parent, child = reader.string(), reader.string()
        transforms.append(RecordedTransform(sec, nanosec, parent, child,
                                            tuple(reader.float64s(7).tolist())))
    return transforms
