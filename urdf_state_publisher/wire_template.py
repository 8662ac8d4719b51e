"""Finding numbers in a message serialized by the middleware: sentinels, then their offsets.

The node publishes messages it serialized once through `rclpy.serialization` and patches for
each publish (`tf_wire` for /tf, `resolved_wire` for joint_states). To find where each number
went, whatever the middleware's encoding, the template is serialized with sentinel values:
doubles and stamps whose bytes occur nowhere else in the message. Nothing is assumed beyond
numbers being stored whole and little-endian, which the callers check.
"""

from __future__ import annotations

import struct

import numpy as np

__all__ = ['locate_sentinels', 'sentinel_double', 'sentinel_stamp', 'unsupported']


def sentinel_double(index: int) -> float:
    """Sentinel double number `index` (below 2**21)."""
    # Bytes FF FE are never in UTF-8 text, so names cannot contain a sentinel; the index is
    # spread over 7-bit bytes so no sentinel has FF elsewhere; top bytes EF 7F keep the double
    # finite.
    return struct.unpack('<d', bytes((0xFF, 0xFE, index & 0x7F, (index >> 7) & 0x7F,
                                      (index >> 14) & 0x7F, 0xFE, 0xEF, 0x7F)))[0]


def sentinel_stamp(index: int) -> tuple[int, int]:
    """Sentinel stamp number `index` (below 2**14): (sec, nanosec)."""
    # The 8 bytes of (sec, nanosec): FF FE a b, FD FC a b. sec stays a positive int32.
    a, b = index & 0x7F, (index >> 7) & 0x7F
    sec = struct.unpack('<i', bytes((0xFF, 0xFE, a, b)))[0]
    nanosec = struct.unpack('<I', bytes((0xFD, 0xFC, a, b)))[0]
    return sec, nanosec


def unsupported(message: str, what: str) -> RuntimeError:
    """The error for a serialized `message` in which `what` cannot be found."""
    return RuntimeError(
        f'cannot locate the {what} in the serialized {message}: this middleware encodes '
        'messages in a way urdf_state_publisher does not support; please report it')


def locate_sentinels(data: bytes, blocks: int, stride: int, stamps: int, message: str
                     ) -> tuple[np.ndarray, np.ndarray]:
    """Offsets of sentinel doubles and stamps, in one pass; -1 where one is not found.

    The doubles are 0, stride, 2·stride, ... (`blocks` of them), the stamps 0 to `stamps` - 1.

    Every sentinel starts with FF FE and nothing else in the message does, so visiting each
    FF FE once finds them all, whatever the message's size.
    """
    starts = np.full(blocks, -1, dtype=np.intp)
    stamp_starts = np.full(stamps, -1, dtype=np.intp)
    start = data.find(b'\xff\xfe')
    while 0 <= start <= len(data) - 8:
        a, b = data[start + 2:start + 4]
        tail = data[start + 4:start + 8]
        if tail == bytes((0xFD, 0xFC, a, b)):
            found, index = stamp_starts, a | b << 7
        elif tail[1:] == b'\xfe\xef\x7f' and (a | b << 7 | tail[0] << 14) % stride == 0:
            found, index = starts, (a | b << 7 | tail[0] << 14) // stride
        else:
            found, index = None, -1
        if found is not None and 0 <= index < len(found):
            if found[index] >= 0:
                raise unsupported(message, 'sentinels (seen twice)')
            found[index] = start
        start = data.find(b'\xff\xfe', start + 1)
    return starts, stamp_starts
