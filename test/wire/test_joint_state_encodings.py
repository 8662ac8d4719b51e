"""Which JointState bytes the fast reader reads itself, and which it leaves to rclpy (ROS-free).

The reader reads plain CDR, both byte orders. Every other encapsulation raises
cdr.UnsupportedEncapsulation, naming it, for the node to hand the bytes to rclpy's deserializer:
XCDR2 lays the same values out differently (8-byte numbers aligned to 4, length headers
before structs and sequences of strings), so reading it with the plain CDR rules would give
wrong values. The bytes are written by test/xcdr.py, following the XTypes rules.
"""

import struct

import numpy as np
import pytest
from xcdr import APPENDABLE, FINAL, joint_state_bytes

from urdf_state_publisher.wire.cdr import MalformedMessage, UnsupportedEncapsulation
from urdf_state_publisher.wire.joint_state import JointStateReader, MalformedJointState

pytestmark = pytest.mark.ros_free  # also runs where no ROS 2 is installed

# Lengths that move the alignment: a 3-byte frame_id, names of 5 and 8 bytes with NUL.
VALUES = dict(sec=12, nanosec=345, frame_id='ab', names=['pan_', 'elbow_j'],
              position=[0.25, -1.5], velocity=[2.0], effort=[])


@pytest.mark.parametrize('big_endian', [False, True], ids=['little-endian', 'big-endian'])
def test_plain_cdr_is_read_by_the_fast_reader_in_both_byte_orders(big_endian):
    data = joint_state_bytes(**VALUES, big_endian=big_endian)

    stamp, names, positions = JointStateReader().read(data)

    assert data[:2] == (b'\x00\x00' if big_endian else b'\x00\x01')
    assert (stamp, names, positions.tolist()) == ((12, 345), ('pan_', 'elbow_j'), [0.25, -1.5])


@pytest.mark.parametrize('extensibility, big_endian, header', [
    (FINAL, True, '0006'), (FINAL, False, '0007'),  # PLAIN_CDR2
    (APPENDABLE, True, '0008'), (APPENDABLE, False, '0009'),  # DELIMIT_CDR2
])
def test_xcdr2_is_left_to_the_middleware_with_its_encapsulation_named(extensibility, big_endian,
                                                                      header):
    data = joint_state_bytes(**VALUES, big_endian=big_endian, version=2,
                             extensibility=extensibility)

    with pytest.raises(UnsupportedEncapsulation, match=f'encapsulation {header} is not plain CDR'
                       ) as raised:
        JointStateReader().read(data)

    assert data[:2].hex() == header
    assert raised.value.encapsulation == header
    assert isinstance(raised.value, MalformedMessage)  # to callers that know no fallback


@pytest.mark.parametrize('header', [b'\x00\x02', b'\x00\x03', b'\x00\x0a', b'\x00\x0b',
                                    b'\x12\x34', b'\x01\x01'])
def test_any_other_encapsulation_is_left_to_the_middleware(header):
    # PL_CDR (00 02/03), PL_CDR2 (00 0a/0b), and headers no specification defines.
    data = header + joint_state_bytes(**VALUES)[2:]

    with pytest.raises(UnsupportedEncapsulation) as raised:
        JointStateReader().read(data)

    assert raised.value.encapsulation == header.hex()


@pytest.mark.parametrize('size', [0, 1, 2, 3])
def test_bytes_too_short_for_an_encapsulation_are_malformed_not_another_encoding(size):
    with pytest.raises(MalformedJointState, match='truncated') as raised:
        JointStateReader().read(b'\x00\x07\x00'[:size])

    assert not isinstance(raised.value, UnsupportedEncapsulation)


def test_xcdr2_differs_from_plain_cdr_where_the_reader_would_misread_it():
    # Why the reader does not try: the same values, in XCDR2, sit elsewhere. A length header
    # comes before the names (so the plain CDR reader would take it for their count), and the
    # positions start at a multiple of 4 that is no multiple of 8.
    plain = joint_state_bytes(**VALUES)
    final = joint_state_bytes(**VALUES, version=2, extensibility=FINAL)
    names_at = 4 + 8 + 4 + 4  # encapsulation, stamp, frame_id 'ab' with NUL, padded to 4
    positions = struct.pack('<2d', 0.25, -1.5)

    assert struct.unpack_from('<I', plain, names_at)[0] == 2  # the count of names
    assert struct.unpack_from('<I', final, names_at)[0] == 4 + 4 + 5 + 3 + 4 + 8  # DHEADER
    assert (plain.index(positions) - 4) % 8 == 0
    assert (final.index(positions) - 4) % 8 == 4


def test_appendable_xcdr2_delimits_each_struct_and_the_names():
    data = joint_state_bytes(**VALUES, version=2, extensibility=APPENDABLE)
    body = data[4:]
    sizes = struct.unpack_from('<3I', body)  # JointState, Header, Time: each its DHEADER

    assert sizes[0] == len(body) - 4  # the whole JointState after its DHEADER
    assert sizes[2] == 8  # Time: sec and nanosec
    assert sizes[1] == 4 + 8 + 4 + 3  # Header: Time with its DHEADER, frame_id 'ab'
    assert np.frombuffer(body[-4 - 8 - 4 - 8:-4 - 8 - 4], '<f8').tolist() == [-1.5]
