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
        # For the last counts of position, velocity and effort: each count's offset in the
        # message and its bytes; the pieces of the message after the names, each with the
        # padding CDR puts before it (the spans between paddings, merged); the size it needs.
        self._counts: tuple[tuple[int, bytes], ...] = ()
        self._pieces: tuple[tuple[bytes, slice], ...] = ()
        self._end = 0

    def __call__(self, raw: bytes) -> bytes:
        """The CDR of one ROS 1 JointState; ValueError (struct.error) if it is cut short."""
        if not (self._names_raw and raw.startswith(self._names_raw, 12)):
            self._names_raw, self._names_cdr = self._convert_names(raw)
            self._counts = ()
        # Nearly always the counts of the last message, where they were: three comparisons.
        counts = self._counts
        if not (counts and raw.startswith(counts[0][1], counts[0][0])
                and raw.startswith(counts[1][1], counts[1][0])
                and raw.startswith(counts[2][1], counts[2][0])):
            self._lay_out(raw)
        if len(raw) < self._end:
            raise ValueError('a JointState cut short')
        parts = [_CDR_LITTLE_ENDIAN, raw[4:12], self._names_cdr]
        for padding, span in self._pieces:
            parts += (padding, raw[span])
        return b''.join(parts)

    def _lay_out(self, raw: bytes) -> None:
        """Where the numbers of `raw` are, and the padding CDR puts before each piece."""
        at = 12 + len(self._names_raw)
        counts, pieces = [], []
        length = 8 + len(self._names_cdr)  # the CDR offset reached
        for _ in range(3):  # position, velocity, effort
            (count,) = unpack_from('<I', raw, at)
            counts.append((at, raw[at:at + 4]))
            for size, alignment in ((4, 4), (8 * count, 8)):
                if not size:  # an empty sequence has no padding before its absent numbers
                    continue
                padding = -length % alignment
                if padding or not pieces:
                    pieces.append((_ZEROS[:padding], at, at + size))
                else:  # follows the last piece in both: one span
                    pieces[-1] = (pieces[-1][0], pieces[-1][1], at + size)
                length += padding + size
                at += size
        self._counts = tuple(counts)
        self._pieces = tuple((padding, slice(start, end)) for padding, start, end in pieces)
        self._end = at

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
