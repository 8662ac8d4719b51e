"""The bytes the package writes are the CDR of the message, byte for byte (ROS-free).

The oracle is rosbags' serializer, an implementation of CDR of its own that leaves padding
zero, as the package's writer does: every byte must be the same, padding included. So what
the node publishes and what the bag command writes are the same bytes on every machine.
"""

from __future__ import annotations

import numpy as np
import pytest
from rosbags.typesys import get_typestore, Stores

from urdf_state_publisher.kinematics.resolved import ResolvedFields
from urdf_state_publisher.wire.cdr import MalformedMessage, read_string_message, string_message
from urdf_state_publisher.wire.diagnostics import diagnostic_array
from urdf_state_publisher.wire.joint_state import read_multi_dof_joint_state
from urdf_state_publisher.wire.resolved import ResolvedWriter
from urdf_state_publisher.wire.tf import (
    read_tf_message,
    RecordedTransform,
    tf_message,
    TransformTemplate,
)

pytestmark = pytest.mark.ros_free

STORE = get_typestore(Stores.ROS2_JAZZY)
T = STORE.types
FRAME_SETS = [
    [],
    [('base', 'a')],
    [(f'link_{i}', f'link_{i + 1}') for i in range(60)],
    # names of every length modulo 8, so the doubles sit at every alignment; UTF-8 names
    [('p' * k, 'ü' * k + 'ZZ\x7f') for k in range(1, 17)],
]


def stamp(sec: int, nanosec: int):
    return T['builtin_interfaces/msg/Time'](sec=sec, nanosec=nanosec)


def header(sec: int, nanosec: int, frame_id: str = ''):
    return T['std_msgs/msg/Header'](stamp=stamp(sec, nanosec), frame_id=frame_id)


def transform(row) -> object:
    x, y, z, qx, qy, qz, qw = (float(v) for v in row)
    return T['geometry_msgs/msg/Transform'](
        translation=T['geometry_msgs/msg/Vector3'](x=x, y=y, z=z),
        rotation=T['geometry_msgs/msg/Quaternion'](x=qx, y=qy, z=qz, w=qw))


def tf_bytes(entries) -> bytes:
    """rosbags' TFMessage of (sec, nanosec, parent, child, row) entries."""
    message = T['tf2_msgs/msg/TFMessage'](transforms=[
        T['geometry_msgs/msg/TransformStamped'](header=header(sec, nanosec, parent),
                                                child_frame_id=child, transform=transform(row))
        for sec, nanosec, parent, child, row in entries])
    return bytes(STORE.serialize_cdr(message, 'tf2_msgs/msg/TFMessage'))


@pytest.mark.parametrize('frames', FRAME_SETS)
def test_a_tf_template_writes_the_cdr_of_its_message(frames):
    template = TransformTemplate(frames)
    rng = np.random.default_rng(len(frames))
    for sec, nanosec in ((0, 0), (1_700_000_000, 999_999_999), (-5, 3)):
        rows = rng.normal(size=(len(frames), 7)) * 10
        expected = tf_bytes([(sec, nanosec, p, c, row) for (p, c), row in zip(frames, rows)])
        assert template.serialize(sec, nanosec, rows) == expected


@pytest.mark.parametrize('frames', FRAME_SETS)
def test_a_tf_message_of_its_own_stamps_is_written_and_read_back(frames):
    rng = np.random.default_rng(7)
    entries = [RecordedTransform(k, 2 * k, parent, child, tuple(rng.normal(size=7).tolist()))
               for k, (parent, child) in enumerate(frames)]
    data = tf_message(entries)
    assert data == tf_bytes([(t.sec, t.nanosec, t.parent, t.child, t.values)
                             for t in entries])
    assert read_tf_message(data) == entries


def test_a_big_endian_tf_message_is_read():
    data = bytes(STORE.serialize_cdr(STORE.deserialize_cdr(
        tf_bytes([(3, 4, 'odom', 'base_link', range(7))]), 'tf2_msgs/msg/TFMessage'),
        'tf2_msgs/msg/TFMessage', little_endian=False))
    assert read_tf_message(data) == [RecordedTransform(3, 4, 'odom', 'base_link',
                                                       tuple(map(float, range(7))))]


@pytest.mark.parametrize('cut', [1, 5, 13, 40])
def test_a_cut_tf_message_is_malformed(cut):
    data = tf_bytes([(3, 4, 'odom', 'base_link', range(7))])
    with pytest.raises(MalformedMessage):
        read_tf_message(data[:len(data) - cut])


@pytest.mark.parametrize('velocities, efforts', [(True, True), (False, False), (True, False),
                                                 (False, True)])
@pytest.mark.parametrize('names', [(), ('a',), ('torso', 'ü_elbow', 'x' * 13)])
def test_the_resolved_joint_state_is_the_cdr_of_its_message(names, velocities, efforts):
    count = len(names)
    positions = np.arange(count) * 0.5 - 1
    velocity = np.arange(count) * 2.0 if velocities else None
    effort = np.full(count, np.nan) if efforts else None
    writer = ResolvedWriter(names)
    data = writer.serialize(ResolvedFields(12, 34, names, positions, velocity, effort))
    expected = STORE.serialize_cdr(T['sensor_msgs/msg/JointState'](
        header=header(12, 34), name=list(names), position=positions,
        velocity=np.array([]) if velocity is None else velocity,
        effort=np.array([]) if effort is None else effort), 'sensor_msgs/msg/JointState')
    assert data == bytes(expected)


@pytest.mark.parametrize('text', ['', 'a', '<robot name="r"/>\n' * 50, 'ü' * 7])
def test_a_string_message_is_written_and_read_back(text):
    data = string_message(text)
    assert data == bytes(STORE.serialize_cdr(T['std_msgs/msg/String'](data=text),
                                             'std_msgs/msg/String'))
    assert read_string_message(data) == text


@pytest.mark.parametrize('values', [(), (('sources', '2'), ('joints never received', 'a, b'))])
def test_the_diagnostic_array_is_the_cdr_of_its_message(values):
    data = diagnostic_array((5, 6), level=1, name='rsp: joint_states', message='stale: a',
                            hardware_id='sample_arm', values=values)
    status = T['diagnostic_msgs/msg/DiagnosticStatus'](
        level=1, name='rsp: joint_states', message='stale: a', hardware_id='sample_arm',
        values=[T['diagnostic_msgs/msg/KeyValue'](key=k, value=v) for k, v in values])
    expected = STORE.serialize_cdr(T['diagnostic_msgs/msg/DiagnosticArray'](
        header=header(5, 6), status=[status]), 'diagnostic_msgs/msg/DiagnosticArray')
    assert data == bytes(expected)


@pytest.mark.parametrize('little_endian', [True, False])
@pytest.mark.parametrize('names', [(), ('world_joint',), ('a', 'planar_joint_ü', 'c')])
def test_a_multi_dof_joint_state_is_read(names, little_endian):
    rows = np.arange(7 * len(names), dtype=float).reshape(-1, 7) / 7
    message = T['sensor_msgs/msg/MultiDOFJointState'](
        header=header(9, 10, 'odom'), joint_names=list(names),
        transforms=[transform(row) for row in rows],
        twist=[T['geometry_msgs/msg/Twist'](
            linear=T['geometry_msgs/msg/Vector3'](x=1.0, y=2.0, z=3.0),
            angular=T['geometry_msgs/msg/Vector3'](x=4.0, y=5.0, z=6.0))] * len(names),
        wrench=[])
    data = bytes(STORE.serialize_cdr(message, 'sensor_msgs/msg/MultiDOFJointState',
                                     little_endian=little_endian))
    read_stamp, read_names, poses = read_multi_dof_joint_state(data)
    assert (read_stamp, read_names) == ((9, 10), names)
    assert poses.tolist() == rows.tolist()
