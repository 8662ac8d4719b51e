"""sensor_msgs/JointState read straight from its serialized bytes: stamp, names and positions.

The node subscribes to joint_states with `raw=True`: rclpy then hands over the bytes the
middleware received instead of building a message of N Python strings and three float lists,
which costs more than everything else the node does with a JointState. The encoding is CDR
(OMG DDS-XTypes, plain CDR version 1), what every ROS 2 middleware sends for ROS messages::

    4 bytes encapsulation: 00 00 (big-endian) or 00 01 (little-endian), then options
            (any other encapsulation is left to the middleware's deserializer, see
            cdr.UnsupportedEncapsulation)
    header: stamp (int32 sec, uint32 nanosec), frame_id (string)
    name (sequence<string>), position (sequence<double>), velocity, effort (read only for
            the resolved joint state, by `velocity_and_effort`)

with a string as uint32 length (counting the terminating NUL), bytes and NUL, a sequence as
uint32 count and elements, and every number aligned to its size from the end of the
encapsulation. A source sends the same names message after message: the reader keeps the
last name sequence and decodes it again only when its bytes change. Padding is left out of that
comparison: middlewares leave it uninitialised, so it differs between equal messages.
"""

from __future__ import annotations

import struct
from typing import NamedTuple

import numpy as np

from urdf_state_publisher.wire.cdr import (
    BYTE_ORDERS,
    CdrReader,
    ENCAPSULATION_SIZE,
    MalformedMessage,
    unreadable_encapsulation,
)

__all__ = [
    'JointStateReader', 'MalformedJointState', 'NamesLayout', 'read_multi_dof_joint_state',
    'velocity_and_effort',
]

STAMP_END = ENCAPSULATION_SIZE + 8  # where header.frame_id begins
NAME_SEQUENCES_KEPT = 4


class _Encoding(NamedTuple):
    """The readers of one byte order."""

    header: struct.Struct  # int32 sec, uint32 nanosec, then the uint32 size of frame_id
    stamp: struct.Struct   # int32 sec, uint32 nanosec
    count: struct.Struct   # uint32: a string's size, a sequence's length
    double: np.dtype


def _encoding(order: str) -> _Encoding:
    return _Encoding(struct.Struct(order + 'iII'), struct.Struct(order + 'iI'),
                     struct.Struct(order + 'I'), np.dtype(order + 'f8'))


class _Located(NamedTuple):
    """A message as located: what makes the next one of its source quick to locate."""

    encapsulation: bytes
    middle: bytes  # from the end of the stamp to the positions: frame_id, names, the count
    header: struct.Struct  # the stamp's
    names: tuple[str, ...]
    offset: int
    count: int
    double: np.dtype
    end: int  # of the positions


ENCODINGS = {start: _encoding(order) for start, order in BYTE_ORDERS.items()}


class MalformedJointState(MalformedMessage):  # noqa: N818 - the name says what the bytes are
    """Bytes that are not a JointState this reader understands; the message says why."""


class NamesLayout(NamedTuple):
    """A name sequence as it was read, to recognise it in later messages.

    Its size in bytes, the offsets (from its start) of its bytes that are not padding, those
    bytes, the names they spell, and all its bytes as last seen.
    """

    size: int
    kept: np.ndarray
    kept_bytes: bytes
    names: tuple[str, ...]
    seen: bytes

    def matches(self, data: bytes, start: int) -> bool:
        """Whether the name sequence at `start` of `data` is this one."""
        # A source's padding bytes usually repeat from message to message, so comparing all
        # bytes nearly always settles it; only when they differ is padding left out.
        if data.startswith(self.seen, start):
            return True
        if start + self.size > len(data):
            return False
        block = np.frombuffer(data, dtype=np.uint8, count=self.size, offset=start)
        return block[self.kept].tobytes() == self.kept_bytes


class JointStateReader:
    """Reads (sec, nanosec), names and positions from serialized JointStates."""

    def __init__(self):
        # The name sequences seen last, most recent first: several sources (an arm, a gripper)
        # may share one joint_states topic.
        self._layouts: list[NamesLayout] = []
        # The last message as located: its bytes between the stamp and the positions (frame_id,
        # names, the positions' count), and what they say. A source repeats them byte for
        # byte, message after message.
        self._last: _Located | None = None

    def read(self, data: bytes) -> tuple[tuple[int, int], tuple[str, ...], np.ndarray]:
        """The stamp, names and positions of the JointState serialized in `data`.

        Positions are a read-only view into `data`. Raises cdr.UnsupportedEncapsulation for
        bytes that are not plain CDR, MalformedJointState for plain CDR that is not a
        JointState.
        """
        stamp, names, offset, count, double = self.locate(data)
        # A read-only view (data is bytes); np.frombuffer does the same for twice the cost.
        return stamp, names, np.ndarray((count,), double, data, offset)

    def locate(self, data: bytes
               ) -> tuple[tuple[int, int], tuple[str, ...], int, int, np.dtype]:
        """The stamp, names, and where the positions are in `data`: offset, count and dtype.

        `read` without making the array. The node decides from the stamp and names alone
        whether a state is due, and a process woken for each message pays tens of
        microseconds for its first numpy call. Raises as `read`.
        """
        last = self._last
        if last is not None and data.startswith(last.middle, STAMP_END) \
                and data.startswith(last.encapsulation) and len(data) >= last.end:
            return last.header.unpack_from(data, ENCAPSULATION_SIZE), last.names, \
                last.offset, last.count, last.double
        encoding = ENCODINGS.get(data[:2])
        if encoding is None:
            raise unreadable_encapsulation(data, 'JointState', MalformedJointState)
        try:
            # The stamp, header.frame_id (a string), then the names. This runs for every
            # message, so it calls no function of its own when the names are the last ones;
            # `-x % n` is what aligns x to n (counted from the end of the encapsulation, as
            # _aligned does).
            sec, nanosec, size = encoding.header.unpack_from(data, ENCAPSULATION_SIZE)
            start = STAMP_END + 4 + size
            start += -(start - ENCAPSULATION_SIZE) % 4
            layouts = self._layouts
            if layouts and data.startswith(layouts[0].seen, start):
                layout = layouts[0]
            else:
                layout = self._names_at(data, encoding, start)
            offset = start + layout.size
            offset += -(offset - ENCAPSULATION_SIZE) % 4
            (count,) = encoding.count.unpack_from(data, offset)
            offset += 4 + -(offset + 4 - ENCAPSULATION_SIZE) % 8
            if offset + 8 * count > len(data):
                raise MalformedJointState(f'{count} positions do not fit in {len(data)} bytes')
        except struct.error as error:
            raise MalformedJointState(f'truncated JointState ({len(data)} bytes)') from error
        self._last = _Located(bytes(data[:ENCAPSULATION_SIZE]), bytes(data[STAMP_END:offset]),
                              encoding.stamp, layout.names, offset, count, encoding.double,
                              offset + 8 * count)
        return (sec, nanosec), layout.names, offset, count, encoding.double

    def _names_at(self, data: bytes, encoding: _Encoding, start: int) -> NamesLayout:
        layouts = self._layouts
        for i, layout in enumerate(layouts):
            if layout.matches(data, start):
                if i:
                    layouts.insert(0, layouts.pop(i))
                return layout
        layout = _read_names(data, encoding, start)
        layouts.insert(0, layout)
        del layouts[NAME_SEQUENCES_KEPT:]
        return layout


def velocity_and_effort(data: bytes, offset: int, count: int, double: np.dtype
                        ) -> tuple[np.ndarray | None, np.ndarray | None]:
    """The velocities and efforts of a JointState; None for a sequence that does not fit.

    `data` holds the JointState, whose `count` positions are at `offset` (as
    `JointStateReader.locate` found them).

    After the positions: each sequence's uint32 count, then its doubles aligned to 8. An empty
    sequence has no padding before its (absent) elements: the next count follows at once.
    """
    if not count:
        return None, None
    counts = struct.Struct(double.str[0] + 'I')
    found: list[np.ndarray | None] = [None, None]
    end = offset + 8 * count
    for k in range(2):
        end = _aligned(end, 4)
        if end + 4 > len(data):
            break
        (size,) = counts.unpack_from(data, end)
        end += 4
        if size:
            end = _aligned(end, 8)
            if end + 8 * size > len(data):
                break
        found[k] = np.ndarray((size,), double, data, end)
        end += 8 * size
    return found[0], found[1]


def _aligned(offset: int, size: int) -> int:
    """`offset` rounded up to a multiple of `size`, counted from the end of the encapsulation."""
    return offset + (-(offset - ENCAPSULATION_SIZE)) % size


def _read_names(data: bytes, encoding: _Encoding, first: int) -> NamesLayout:
    """The name sequence at `first` (4-aligned)."""
    (count,) = encoding.count.unpack_from(data, first)
    if count > (len(data) - first) // 4:
        raise MalformedJointState(f'{count} names do not fit in {len(data)} bytes')
    # Runs of bytes that are not padding: the count, then each string's size and characters.
    run_starts, run_ends = [first], [first + 4]
    offset = first + 4
    names = []
    for _ in range(count):
        offset = _aligned(offset, 4)
        (size,) = encoding.count.unpack_from(data, offset)
        start = offset + 4
        if start + size > len(data):
            raise MalformedJointState(
                f'a string of {size} bytes does not fit in {len(data)} bytes')
        run_starts.append(offset)
        run_ends.append(start + size)
        # A name that is not UTF-8 cannot be a joint's: it is kept, visibly, as unknown.
        names.append(bytes(data[start:start + max(size - 1, 0)]).decode('utf-8', 'replace'))
        offset = start + size
    starts, ends = np.array(run_starts) - first, np.array(run_ends) - first
    lengths = ends - starts
    kept = np.arange(lengths.sum()) + np.repeat(starts - np.cumsum(lengths) + lengths, lengths)
    block = np.frombuffer(data, dtype=np.uint8, count=offset - first, offset=first)
    return NamesLayout(offset - first, kept, block[kept].tobytes(), tuple(names),
                       bytes(data[first:offset]))


def read_multi_dof_joint_state(data: bytes) -> tuple[tuple[int, int], tuple[str, ...], np.ndarray]:
    """The stamp, joint names and transforms of a sensor_msgs/MultiDOFJointState.

    Each transform is a row of translation x, y, z and quaternion x, y, z, w; the twists and
    wrenches after them are not read. Raises cdr.UnsupportedEncapsulation for bytes that are
    not plain CDR, cdr.MalformedMessage for plain CDR that is not a MultiDOFJointState.
    """
    reader = CdrReader(data)
    stamp = reader.header()
    names = reader.strings()
    poses = reader.float64s(7 * reader.count(56)).reshape(-1, 7)
    return stamp, names, poses
