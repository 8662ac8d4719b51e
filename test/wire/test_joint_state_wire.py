"""JointStates read from their bytes: the same stamp, names and positions as rclpy's own reader.

rclpy serializes (the middleware's CDR); our reader must agree with rclpy's deserializer on
every message, whatever the lengths that move the alignment, and refuse damaged bytes with
MalformedJointState, or cdr.UnsupportedEncapsulation for another encoding, only.
"""

import math
import struct

from hypothesis import example, given, settings
from hypothesis import strategies as st
import numpy as np
import pytest
from rclpy.serialization import deserialize_message, serialize_message
from sensor_msgs.msg import JointState
from xcdr import joint_state_bytes

from urdf_state_publisher.wire.cdr import MalformedMessage, UnsupportedEncapsulation
from urdf_state_publisher.wire.joint_state import JointStateReader, MalformedJointState

names = st.lists(st.text(max_size=12), max_size=20)
numbers = st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=20)


def joint_state(frame_id, joint_names, position, velocity=(), effort=(), sec=0, nanosec=0):
    message = JointState(name=list(joint_names), position=list(position),
                         velocity=list(velocity), effort=list(effort))
    message.header.frame_id = frame_id
    message.header.stamp.sec, message.header.stamp.nanosec = sec, nanosec
    return message


def same_numbers(a, b):
    return len(a) == len(b) and all(x == y or (math.isnan(x) and math.isnan(y))
                                    for x, y in zip(a, b))


@settings(max_examples=300, deadline=None)
@given(frame_id=st.text(max_size=9), joint_names=names, position=numbers, velocity=numbers,
       effort=numbers, sec=st.integers(-2**31, 2**31 - 1), nanosec=st.integers(0, 999_999_999))
@example(frame_id='', joint_names=[], position=[], velocity=[], effort=[], sec=0, nanosec=0)
@example(frame_id='abc', joint_names=['ü' * 3, ''], position=[1.5], velocity=[], effort=[2.0],
         sec=7, nanosec=8)
def test_reads_what_rclpy_reads(frame_id, joint_names, position, velocity, effort, sec,
                                nanosec):
    data = serialize_message(joint_state(frame_id, joint_names, position, velocity, effort,
                                         sec, nanosec))
    expected = deserialize_message(data, JointState)

    stamp, read_names, read_positions = JointStateReader().read(data)

    assert stamp == (expected.header.stamp.sec, expected.header.stamp.nanosec)
    assert read_names == tuple(expected.name)
    assert same_numbers(read_positions.tolist(), list(expected.position))


def test_a_repeated_names_block_is_reused_and_a_changed_one_read_again():
    reader = JointStateReader()
    first = reader.read(serialize_message(joint_state('', ['a', 'b'], [1.0, 2.0])))
    again = reader.read(serialize_message(joint_state('longer frame', ['a', 'b'], [3.0, 4.0])))
    other = reader.read(serialize_message(joint_state('', ['a', 'c'], [5.0])))

    assert again[1] is first[1]
    assert again[2].tolist() == [3.0, 4.0]
    assert other[1] == ('a', 'c') and other[2].tolist() == [5.0]


def test_other_padding_bytes_keep_the_names_block_and_another_name_does_not():
    # Middlewares leave the alignment padding between strings uninitialised.
    reader = JointStateReader()
    data = serialize_message(joint_state('', ['ab', 'c'], [1.0, 2.0]))
    block = data.index(struct.pack('<II', 2, 3) + b'ab\x00')
    padding = block + 11  # count, size, 'ab', NUL: then one byte to the next 4-byte boundary
    first = reader.read(data)[1]

    other_padding = data[:padding] + b'\x7f' + data[padding + 1:]
    renamed = data[:block + 8] + b'ax' + data[block + 10:]

    assert reader.read(other_padding)[1] is first
    assert reader.read(renamed)[1] == ('ax', 'c')
    assert reader.read(data)[1] is first


def test_two_sources_taking_turns_keep_their_names():
    reader = JointStateReader()
    arm = serialize_message(joint_state('', ['shoulder', 'elbow'], [1.0, 2.0]))
    gripper = serialize_message(joint_state('', ['finger'], [0.01]))
    first_arm, first_gripper = reader.read(arm)[1], reader.read(gripper)[1]
    for _ in range(3):
        assert reader.read(arm)[1] is first_arm
        assert reader.read(gripper)[1] is first_gripper


def big_endian_joint_state(sec, nanosec, frame_id, joint_names, position):
    """Plain CDR, big-endian, written out by hand (rclpy only writes little-endian)."""
    out = bytearray(b'\x00\x00\x00\x00')

    def align(size):
        out.extend(b'\x00' * ((-(len(out) - 4)) % size))

    def string(text):
        align(4)
        raw = text.encode() + b'\x00'
        out.extend(struct.pack('>I', len(raw)) + raw)

    out.extend(struct.pack('>iI', sec, nanosec))
    string(frame_id)
    align(4)
    out.extend(struct.pack('>I', len(joint_names)))
    for name in joint_names:
        string(name)
    align(4)
    out.extend(struct.pack('>I', len(position)))
    align(8)
    out.extend(struct.pack(f'>{len(position)}d', *position))
    align(4)
    out.extend(struct.pack('>II', 0, 0))  # velocity, effort
    return bytes(out)


def test_reads_big_endian_cdr():
    data = big_endian_joint_state(5, 6, 'f', ['joint_a', 'b'], [0.25, -3.0])
    stamp, read_names, positions = JointStateReader().read(data)
    assert (stamp, read_names, positions.tolist()) == ((5, 6), ('joint_a', 'b'), [0.25, -3.0])


def test_every_truncation_is_refused_as_malformed():
    data = serialize_message(joint_state('frame', ['shoulder', 'elbow'], [0.5, 1.5], [1.0]))
    reader = JointStateReader()
    # Up to the end of the positions: velocity and effort are never read.
    end = data.index(struct.pack('<d', 1.5)) + 8
    for size in range(end):
        with pytest.raises(MalformedJointState):
            reader.read(data[:size])


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
def test_random_bytes_are_read_or_refused_never_crash(data):
    try:
        stamp, read_names, positions = JointStateReader().read(data)
    except MalformedMessage:  # MalformedJointState, or UnsupportedEncapsulation
        return
    assert isinstance(read_names, tuple) and isinstance(positions, np.ndarray)


def test_counts_larger_than_the_message_are_refused_quickly():
    data = bytearray(serialize_message(joint_state('', ['a'], [1.0])))
    # The name sequence: count 1, then the string 'a' (size 2 with its NUL).
    names_count = data.index(struct.pack('<II', 1, 2) + b'a\x00')
    data[names_count:names_count + 4] = struct.pack('<I', 2**32 - 1)
    with pytest.raises(MalformedJointState, match='do not fit'):
        JointStateReader().read(bytes(data))


def test_an_unknown_encapsulation_is_left_to_the_middleware():
    data = bytearray(serialize_message(joint_state('', ['a'], [1.0])))
    data[1] = 0x07  # an XCDR2 encapsulation
    with pytest.raises(UnsupportedEncapsulation, match='encapsulation 0007'):
        JointStateReader().read(bytes(data))


@pytest.mark.parametrize('big_endian', [False, True], ids=['little-endian', 'big-endian'])
def test_the_hand_written_plain_cdr_of_the_encoding_tests_is_what_rclpy_reads(big_endian):
    # test/xcdr.py writes the XCDR2 forms with the same code: its plain CDR checked here.
    data = joint_state_bytes(3, 4, 'frame', ['a', 'bcd'], [0.5, -2.0], [1.0], [7.0],
                             big_endian=big_endian)
    message = deserialize_message(data, JointState)

    assert (message.header.stamp.sec, message.header.stamp.nanosec) == (3, 4)
    assert message.header.frame_id == 'frame' and list(message.name) == ['a', 'bcd']
    assert list(message.position) == [0.5, -2.0]
    assert (list(message.velocity), list(message.effort)) == ([1.0], [7.0])
