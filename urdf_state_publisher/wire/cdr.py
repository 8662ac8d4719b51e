"""CDR, the bytes of a ROS 2 message on the wire and in a bag: written and read here, without ROS.

ROS 2 middlewares send a message as plain CDR (OMG DDS-XTypes, version 1): a 4-byte
encapsulation header (00 01 00 00 for little-endian), then the fields in order, each number
aligned to its size counted from the end of the header, a string as its uint32 length
(the terminating NUL included), its bytes and a NUL, a sequence as its uint32 count and its
elements. rosbag2 stores those bytes as they are. A middleware set to XCDR version 2 sends
another encoding, which the readers here leave to the shell (UnsupportedEncapsulation).

The node writes what it publishes here (`CdrWriter`), always the same bytes for the same
message: padding is zero, where a middleware's serializer leaves whatever was in its buffer.
So the node's /tf, and the bag command's, are the same bytes for the same input, whatever
process or machine made them. Plain CDR, little-endian, is what every middleware reads.
`CdrReader` reads plain CDR of either byte order.
"""

from __future__ import annotations

from collections.abc import Sequence
import struct

import numpy as np

__all__ = ['BYTE_ORDERS', 'CdrReader', 'CdrWriter', 'ENCAPSULATION_SIZE', 'MalformedMessage',
           'read_string_message', 'string_message', 'unreadable_encapsulation',
           'UnsupportedEncapsulation']

ENCAPSULATION_SIZE = 4
CDR_LE = b'\x00\x01\x00\x00'
# The first two bytes of plain CDR, and the byte order (a struct prefix) they stand for.
BYTE_ORDERS = {b'\x00\x00': '>', b'\x00\x01': '<'}  # CDR_BE, CDR_LE


class MalformedMessage(ValueError):  # noqa: N818 - the name says what the bytes are
    """Bytes that are not the message a reader expects; the message says why."""


class UnsupportedEncapsulation(MalformedMessage):  # noqa: N818 - the name says what the bytes are
    """Bytes in an encoding other than plain CDR: the middleware's deserializer may read them.

    Not read here on purpose. XCDR version 2 (encapsulations 00 06 to 00 0b) aligns 8-byte
    numbers to 4 and puts length headers before nested structs and sequences of strings,
    depending on the type's extensibility: bytes read with the plain CDR rules would give wrong
    numbers, not an error.
    """

    def __init__(self, encapsulation: str):
        super().__init__(f'encapsulation {encapsulation} is not plain CDR')
        self.encapsulation = encapsulation  # its two bytes in hex, as '0007'


def unreadable_encapsulation(data: bytes | memoryview, what: str = 'message',
                             malformed: type[MalformedMessage] = MalformedMessage
                             ) -> MalformedMessage:
    """Why `data`, which does not start as plain CDR, is not read here: the error to raise."""
    if len(data) < ENCAPSULATION_SIZE:
        return malformed(f'truncated {what} ({len(data)} bytes)')
    return UnsupportedEncapsulation(bytes(data[:2]).hex())


class CdrWriter:
    """Writes one message, little-endian; each method returns where its value starts."""

    def __init__(self) -> None:
        self._buffer = bytearray(CDR_LE)

    def _align(self, size: int) -> int:
        self._buffer += bytes(-(len(self._buffer) - ENCAPSULATION_SIZE) % size)
        return len(self._buffer)

    def uint8(self, value: int) -> int:
        start = len(self._buffer)
        self._buffer.append(value)
        return start

    def uint32(self, value: int) -> int:
        start = self._align(4)
        self._buffer += struct.pack('<I', value)
        return start

    def stamp(self, sec: int, nanosec: int) -> int:
        """builtin_interfaces/Time: int32 sec, uint32 nanosec."""
        start = self._align(4)
        self._buffer += struct.pack('<iI', sec, nanosec)
        return start

    def string(self, text: str) -> int:
        data = text.encode()
        start = self.uint32(len(data) + 1)
        self._buffer += data + b'\x00'
        return start

    def strings(self, texts: Sequence[str]) -> int:
        """A sequence of strings."""
        start = self.uint32(len(texts))
        for text in texts:
            self.string(text)
        return start

    def float64s(self, values: Sequence[float] | np.ndarray) -> int:
        """Doubles in a row (an array, or a sequence's elements): where the first one is."""
        if not len(values):  # no element, no alignment: the next field follows at once
            return len(self._buffer)
        start = self._align(8)
        self._buffer += np.asarray(values, dtype='<f8').tobytes()
        return start

    def float64_sequence(self, values: Sequence[float] | np.ndarray) -> int:
        """A sequence of doubles: its count, then the doubles; where the first double is."""
        self.uint32(len(values))
        return self.float64s(values)

    def data(self) -> bytes:
        return bytes(self._buffer)


class CdrReader:
    """Reads one plain CDR message field by field; MalformedMessage for bytes that do not fit."""

    def __init__(self, data: bytes | memoryview):
        self.data = bytes(data)
        order = BYTE_ORDERS.get(self.data[:2])
        if order is None:
            raise unreadable_encapsulation(self.data)
        self.offset = ENCAPSULATION_SIZE
        self._uint32 = struct.Struct(order + 'I')
        self._stamp = struct.Struct(order + 'iI')
        self.double = np.dtype(order + 'f8')

    def _align(self, size: int) -> None:
        self.offset += -(self.offset - ENCAPSULATION_SIZE) % size

    def _take(self, size: int) -> int:
        start = self.offset
        if start + size > len(self.data):
            raise MalformedMessage(f'{size} bytes at {start} do not fit in {len(self.data)}')
        self.offset += size
        return start

    def uint8(self) -> int:
        return self.data[self._take(1)]

    def uint32(self) -> int:
        self._align(4)
        return self._uint32.unpack_from(self.data, self._take(4))[0]

    def count(self, element_size: int) -> int:
        """A sequence's count, checked against the bytes left for its elements.

        Each element takes at least `element_size` bytes.
        """
        count = self.uint32()
        if count * element_size > len(self.data) - self.offset:
            raise MalformedMessage(f'{count} elements do not fit in {len(self.data)} bytes')
        return count

    def stamp(self) -> tuple[int, int]:
        self._align(4)
        return self._stamp.unpack_from(self.data, self._take(8))

    def string(self) -> str:
        size = self.uint32()
        start = self._take(size)
        # A name that is not UTF-8 is kept, visibly, with replacement characters.
        return self.data[start:start + max(size - 1, 0)].decode('utf-8', 'replace')

    def strings(self) -> tuple[str, ...]:
        return tuple(self.string() for _ in range(self.count(4)))

    def float64s(self, count: int) -> np.ndarray:
        """`count` doubles in a row (read-only, in the message's byte order)."""
        if not count:
            return np.empty(0)
        self._align(8)
        return np.frombuffer(self.data, self.double, count, self._take(8 * count))

    def float64_sequence(self) -> np.ndarray:
        return self.float64s(self.count(8))

    def header(self) -> tuple[int, int]:
        """std_msgs/Header: the stamp (the frame_id is read and dropped)."""
        stamp = self.stamp()
        self.string()
        return stamp


def string_message(text: str) -> bytes:
    """A std_msgs/String."""
    writer = CdrWriter()
    writer.string(text)
    return writer.data()


def read_string_message(data: bytes) -> str:
    """The text of a std_msgs/String."""
    return CdrReader(data).string()
