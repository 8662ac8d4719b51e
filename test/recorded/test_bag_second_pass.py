"""urdf_state_publisher_bag on its own output: a second pass replaces the first, never doubles it.

A recording with another node's /diagnostics and /tf is processed once, then its output again
with the same description. The second output must hold what the first holds: the same /tf and
/tf_static, one status of the node a second beside the other node's, the same resolved joint
states; and the summary names what was replaced, counted from the first output as rosbags
reads it.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
import subprocess
import sys

from conftest import SAMPLE_URDF
import numpy as np
import pytest
from rosbags.rosbag2 import Reader, StoragePlugin, Writer
from test_bag_runs import BILLION, JOINTS, START_NS, STORE, T  # the bag tests' recordings

from urdf_state_publisher.wire.diagnostics import (
    diagnostic_statuses,
    is_nodes_status,
    read_diagnostic_array,
)

pytestmark = pytest.mark.ros_free  # also runs where no ROS 2 is installed

ARGUMENTS = ('--description', SAMPLE_URDF, '--ros-args', '-p', 'publish_joint_states:=true',
             '-p', 'source_list:=[/joint_states]', '-r', '__ns:=/resolved')
OTHER_STATUS = 'motor_driver: temperatures'


def header(ns: int, frame: str = ''):
    return T['std_msgs/msg/Header'](stamp=T['builtin_interfaces/msg/Time'](
        sec=ns // BILLION, nanosec=ns % BILLION), frame_id=frame)


def write_recording(path: Path, seconds: int = 4) -> Path:
    """JointStates at 50 Hz; a driver's status and odom's /tf once a second."""
    writer = Writer(path, version=9, storage_plugin=StoragePlugin.MCAP)
    writer.open()
    states = writer.add_connection('/joint_states', 'sensor_msgs/msg/JointState',
                                   typestore=STORE)
    diagnostics = writer.add_connection('/diagnostics', 'diagnostic_msgs/msg/DiagnosticArray',
                                        typestore=STORE)
    tf = writer.add_connection('/tf', 'tf2_msgs/msg/TFMessage', typestore=STORE)
    for k in range(seconds * 50):
        ns = START_NS + k * 20_000_000
        message = T['sensor_msgs/msg/JointState'](
            header=header(ns), name=list(JOINTS), position=np.full(6, 0.02 + 0.0001 * k),
            velocity=np.array([]), effort=np.array([]))
        writer.write(states, ns, bytes(STORE.serialize_cdr(message, message.__msgtype__)))
        if k % 50 == 25:
            status = T['diagnostic_msgs/msg/DiagnosticStatus'](
                level=0, name=OTHER_STATUS, message='ok', hardware_id='motor_7',
                values=[T['diagnostic_msgs/msg/KeyValue'](key='winding (C)', value='41')])
            array = T['diagnostic_msgs/msg/DiagnosticArray'](header=header(ns), status=[status])
            writer.write(diagnostics, ns + 1000,
                         bytes(STORE.serialize_cdr(array, array.__msgtype__)))
            odom = T['geometry_msgs/msg/TransformStamped'](
                header=header(ns, 'odom'), child_frame_id='base_link',
                transform=T['geometry_msgs/msg/Transform'](
                    translation=T['geometry_msgs/msg/Vector3'](x=0.1 * k, y=0.0, z=0.0),
                    rotation=T['geometry_msgs/msg/Quaternion'](x=0.0, y=0.0, z=0.0, w=1.0)))
            message = T['tf2_msgs/msg/TFMessage'](transforms=[odom])
            writer.write(tf, ns + 2000, bytes(STORE.serialize_cdr(message, message.__msgtype__)))
    writer.close()
    return path


def run(*arguments) -> subprocess.CompletedProcess:
    result = subprocess.run([sys.executable, '-m', 'urdf_state_publisher.recorded.command',
                             *map(str, arguments)], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    return result


def read(bag: Path) -> dict[str, list[tuple[int, object]]]:
    """Each topic's messages, as rosbags deserializes them: (log time, message)."""
    found: dict[str, list] = {}
    with Reader(bag) as reader:
        for connection, log_ns, data in reader.messages():
            found.setdefault(connection.topic, []).append(
                (log_ns, STORE.deserialize_cdr(data, connection.msgtype)))
    return found


def transforms(messages) -> list[tuple]:
    return [(log_ns, [(t.header.stamp.sec, t.header.stamp.nanosec, t.header.frame_id,
                       t.child_frame_id, t.transform.translation.x, t.transform.translation.y,
                       t.transform.translation.z, t.transform.rotation.x,
                       t.transform.rotation.y, t.transform.rotation.z, t.transform.rotation.w)
                      for t in message.transforms]) for log_ns, message in messages]


def statuses_per_second(messages) -> Counter:
    """(second of bag, status name) -> how many statuses of that name in that second."""
    return Counter(((log_ns - START_NS) // BILLION, status.name)
                   for log_ns, message in messages for status in message.status)


def test_an_output_processed_again_equals_the_first(tmp_path):
    recording = write_recording(tmp_path / 'run')
    first = run(recording, tmp_path / 'once', *ARGUMENTS)
    second = run(tmp_path / 'once', tmp_path / 'twice', *ARGUMENTS)
    once, twice = read(tmp_path / 'once'), read(tmp_path / 'twice')
    assert transforms(twice['/tf']) == transforms(once['/tf'])
    assert transforms(twice['/tf_static']) == transforms(once['/tf_static'])
    per_second = statuses_per_second(once['/diagnostics'])
    assert statuses_per_second(twice['/diagnostics']) == per_second
    # The first pass: one status of the node and one of the driver each second.
    assert set(per_second.values()) == {1}
    assert {name for _, name in per_second} == {OTHER_STATUS, 'urdf_state_publisher: '
                                                'joint_states'}
    resolved = [(log_ns, list(m.name), m.position.tolist())
                for log_ns, m in once['/resolved/joint_states']]
    assert resolved and [(log_ns, list(m.name), m.position.tolist())
                         for log_ns, m in twice['/resolved/joint_states']] == resolved
    description = '/resolved/robot_description'  # under the namespace, as the node's
    assert len(twice[description]) == len(once[description]) == 1
    # What the second pass replaced, as the first output holds it.
    ours = sum(1 for _, m in once['/diagnostics']
               if m.status[0].name != OTHER_STATUS)
    assert (f'recorded messages replaced by what the run wrote: /diagnostics {ours}, '
            f'/resolved/joint_states {len(resolved)}, /resolved/robot_description 1'
            in second.stdout.splitlines()), second.stdout
    assert 'recorded messages replaced' not in first.stdout  # the first replaced nothing


def test_the_nodes_status_under_another_node_name_is_replaced_too(tmp_path):
    # The first pass ran as robot_state_publisher (a bringup's params file section): its status
    # is the node's, under the name it had, and goes as well.
    recording = write_recording(tmp_path / 'run', seconds=2)
    run(recording, tmp_path / 'once', *ARGUMENTS, '-r', '__node:=robot_state_publisher')
    run(tmp_path / 'once', tmp_path / 'twice', *ARGUMENTS)
    names = {status.name for _, m in read(tmp_path / 'twice')['/diagnostics']
             for status in m.status}
    assert names == {OTHER_STATUS, 'urdf_state_publisher: joint_states'}


def test_frames_the_corrected_description_renamed_are_not_left_from_the_first_pass(tmp_path):
    # The camera mount corrected and its link renamed: the second output holds the transforms
    # one pass with the corrected description computes, none of the first description's.
    corrected = tmp_path / 'corrected.urdf'
    corrected.write_text(SAMPLE_URDF.read_text().replace('camera_link', 'camera_mount'))
    recording = write_recording(tmp_path / 'run', seconds=2)
    run(recording, tmp_path / 'once', '--description', SAMPLE_URDF)
    run(tmp_path / 'once', tmp_path / 'twice', '--description', corrected)
    run(recording, tmp_path / 'direct', '--description', corrected)
    twice, direct = read(tmp_path / 'twice'), read(tmp_path / 'direct')
    assert 'camera_link' in {t.child_frame_id for _, m in read(tmp_path / 'once')['/tf_static']
                             for t in m.transforms}
    for topic in ('/tf', '/tf_static'):
        assert transforms(twice[topic]) == transforms(direct[topic]), topic


def test_an_array_holding_the_nodes_status_beside_others_keeps_the_others():
    # A relay that merges arrays: the node's status goes, the driver's stays, as rosbags reads
    # the bytes written.
    key_value = T['diagnostic_msgs/msg/KeyValue']
    statuses = [
        T['diagnostic_msgs/msg/DiagnosticStatus'](
            level=1, name='robot_state_publisher: joint_states', message='stale joints',
            hardware_id='sample_arm', values=[key_value(key='robot', value='sample_arm'),
                                              key_value(key='joint_states received',
                                                        value='7')]),
        T['diagnostic_msgs/msg/DiagnosticStatus'](
            level=0, name='arm_driver: joint_states', message='ok', hardware_id='arm',
            values=[key_value(key='rate (Hz)', value='500')])]
    array = T['diagnostic_msgs/msg/DiagnosticArray'](header=header(START_NS, 'base'),
                                                    status=statuses)
    stamp, frame_id, read = read_diagnostic_array(bytes(STORE.serialize_cdr(
        array, array.__msgtype__)))
    assert [is_nodes_status(status) for status in read] == [True, False]
    kept = STORE.deserialize_cdr(diagnostic_statuses(stamp, frame_id, read[1:]),
                                 array.__msgtype__)
    assert (kept.header.frame_id, kept.header.stamp.sec) == ('base', START_NS // BILLION)
    assert [(s.level, s.name, s.message, s.hardware_id, [(v.key, v.value) for v in s.values])
            for s in kept.status] == [(0, 'arm_driver: joint_states', 'ok', 'arm',
                                       [('rate (Hz)', '500')])]
