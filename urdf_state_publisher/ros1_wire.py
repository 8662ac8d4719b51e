"""ROS 1 sensor_msgs/JointState bytes to ROS 2 CDR, the bytes rosbags' conversion writes.

A ROS 1 recording is mostly JointStates, and rosbags converts each field by a Python call: 200
µs for a 100-joint state, ten times what the rest of the command does with it. A driver sends
the same names in every message; only the stamp and the numbers change. So the converted frame
id and names of the last message are kept, and a message that starts with the same bytes takes
them as they are; with the same counts of numbers as the last, where each piece goes is known
too, and its numbers are copied in slices. A message with other names or counts is laid out
anew, once, and kept in turn.

ROS 1 (little-endian, nothing aligned): seq, sec, nsec (uint32 each), frame_id (uint32 length,
bytes), name (uint32 count, then each a uint32 length and bytes), position, velocity, effort
(uint32 count, float64 each). CDR (little-endian, after its 4-byte header, offsets counted from
there): sec, nanosec, frame_id (uint32 length with the NUL, bytes, NUL), name (4-aligned count,
each string 4-aligned likewise), each float64 sequence a 4-aligned count, then, when not empty,
8-aligned numbers. ROS 2's header has no seq.
"""

from __future__ import annotations

from struct import pack, unpack_from

__all__ = ['JointStateConverter']

_CDR_LITTLE_ENDIAN = b'\x00\x01\x00\x00'
_ZEROS = bytes(8)


class JointStateConverter:
    """Converts the JointStates of one recorded topic, keeping the last names converted."""

    def __init__(self) -> None:
        self._names_raw = b''  # the ROS 1 bytes from frame_id to the end of the names
        self._names_cdr = b''  # their CDR, from offset 8 (after the stamp)
        # For the last counts of position, velocity and effort: where their bytes are, after
        # the names, and the padding CDR puts before each piece.
        self._counts = b''
        self._pieces: list[tuple[bytes, int, int]] = []

    def __call__(self, raw: bytes) -> bytes:
        """The CDR of one ROS 1 JointState; ValueError (struct.error) if it is cut short."""
        if not (self._names_raw and raw.startswith(self._names_raw, 12)):
            self._names_raw, self._names_cdr = self._convert_names(raw)
            self._counts = b''
        at = 12 + len(self._names_raw)
        (first,) = unpack_from('<I', raw, at)
        second_at = at + 4 + 8 * first
        (second,) = unpack_from('<I', raw, second_at)
        (third,) = unpack_from('<I', raw, second_at + 4 + 8 * second)
        counts = pack('<3I', first, second, third)
        if counts != self._counts:
            self._counts, self._pieces = counts, self._layout(len(self._names_cdr), first,
                                                              second, third)
        if len(raw) < at + 12 + 8 * (first + second + third):
            raise ValueError('a JointState cut short')
        return b''.join([_CDR_LITTLE_ENDIAN, raw[4:12], self._names_cdr,
                         *[padding + raw[at + start:at + end]
                           for padding, start, end in self._pieces]])

    @staticmethod
    def _layout(names_length: int, *counts: int) -> list[tuple[bytes, int, int]]:
        """Each piece after the names: its padding, and its bytes' span from the names' end."""
        pieces = []
        length = 8 + names_length  # the CDR offset reached
        at = 0
        for count in counts:  # position, velocity, effort
            padding = -length % 4
            pieces.append((_ZEROS[:padding], at, at + 4))
            length += padding + 4
            at += 4
            if count:
                padding = -length % 8
                pieces.append((_ZEROS[:padding], at, at + 8 * count))
                length += padding + 8 * count
                at += 8 * count
        return pieces

    @staticmethod
    def _convert_names(raw: bytes) -> tuple[bytes, bytes]:
        """The ROS 1 bytes of frame_id and names, and their CDR from offset 8."""
        parts = []
        length = 8
        at = 12
        (size,) = unpack_from('<I', raw, at)
        parts.append(pack('<I', size + 1) + raw[at + 4:at + 4 + size] + b'\x00')
        length += 4 + size + 1
        at += 4 + size
        (count,) = unpack_from('<I', raw, at)
        padding = -length % 4
        parts.append(_ZEROS[:padding] + raw[at:at + 4])
        length += padding + 4
        at += 4
        for _ in range(count):
            (size,) = unpack_from('<I', raw, at)
            padding = -length % 4
            parts.append(_ZEROS[:padding] + pack('<I', size + 1) + raw[at + 4:at + 4 + size]
                         + b'\x00')
            length += padding + 4 + size + 1
            at += 4 + size
        if at > len(raw):
            raise ValueError('a JointState cut short')
        return raw[12:at], b''.join(parts)
