"""urdf_state_publisher_bag on bags written here with rosbags, against the node running live.

Each scenario is a stream of serialized JointStates (and robot descriptions) written into a bag.
The command computes the bag's /tf; the same bytes are then published, in the bag's order, to
the node in its own process over DDS, and its /tf is recorded. The two must be the same
messages, byte for byte, in the same order. The live node reads its joint-state topics
reliably (qos_overrides) so that it receives every message; after a message that the bag's
output says made a /tf (written at that message's log time), the next one is sent only once
that /tf is back, so the node receives whatever decides what it publishes in the bag's order.
"""

from __future__ import annotations

import os
from pathlib import Path
import re
import shutil
import signal
import struct
import subprocess
import sys
import time

from bag_fixtures import error_line, full_pipe
from conftest import SAMPLE_URDF
from node_fixtures import assert_pose, SAMPLE_CHILD, sample_pose, stamp_of, wait_until
import numpy as np
import pytest
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rclpy.serialization import deserialize_message
from rosbags.rosbag2 import Reader, StoragePlugin, Writer
from rosbags.typesys import get_typestore, Stores
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from tf2_msgs.msg import TFMessage
import yaml

from urdf_state_publisher.ros.qos import LATCHED_QOS, TF_QOS

STORE = get_typestore(Stores.ROS2_JAZZY)
T = STORE.types
BILLION = 1_000_000_000
START_NS = 1_700_000_000 * BILLION
ARM = ('torso_lift_joint', 'shoulder_pan_joint', 'shoulder_lift_joint', 'elbow_joint',
       'wrist_roll_joint')
GRIPPER = ('left_finger_joint',)
RELIABLE_DEEP = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)
def moved_camera() -> str:
    """The sample robot with its camera mount moved: a reload that changes /tf_static."""
    text = SAMPLE_URDF.read_text()
    start = text.index('<joint name="camera_joint"')
    origin = text.index('<origin', start)
    end = text.index('/>', origin) + 2
    return text[:origin] + '<origin xyz="0.05 0.01 0.02" rpy="0 0.1 0"/>' + text[end:]


def joint_state(stamp_ns: int, names, positions, velocities=()) -> bytes:
    message = T['sensor_msgs/msg/JointState'](
        header=T['std_msgs/msg/Header'](
            stamp=T['builtin_interfaces/msg/Time'](sec=stamp_ns // BILLION,
                                                   nanosec=stamp_ns % BILLION), frame_id=''),
        name=list(names), position=np.asarray(positions, dtype=float),
        velocity=np.asarray(velocities, dtype=float), effort=np.array([]))
    return bytes(STORE.serialize_cdr(message, 'sensor_msgs/msg/JointState'))


def description(text: str) -> bytes:
    return bytes(STORE.serialize_cdr(T['std_msgs/msg/String'](data=text),
                                     'std_msgs/msg/String'))


class Message:
    """A recorded message: topic, type, log time and bytes."""

    def __init__(self, topic: str, msgtype: str, log_ns: int, data: bytes):
        self.topic, self.msgtype, self.log_ns, self.data = topic, msgtype, log_ns, data


def source(topic: str, names, rate_hz: float, seconds: float, start_s: float = 0.0,
           phase: float = 0.0) -> list[Message]:
    """JointStates of `names` at `rate_hz`, logged 0.3 ms after their stamp.

    The values stay within 0.01 to 0.03: inside every limit of the sample robot.
    """
    period = round(BILLION / rate_hz)
    messages = []
    for k in range(int(seconds * rate_hz)):
        stamp = START_NS + round(start_s * BILLION) + k * period
        values = [0.02 + 0.01 * np.sin(phase + 0.05 * k + j) for j in range(len(names))]
        messages.append(Message(topic, 'sensor_msgs/msg/JointState', stamp + 300_000,
                                joint_state(stamp, names, values, [0.1] * len(names))))
    return messages


def in_order(*streams: list[Message]) -> list[Message]:
    return sorted((m for s in streams for m in s), key=lambda m: m.log_ns)


def write_bag(path: Path, messages: list[Message], storage: str = 'mcap') -> Path:
    plugin = StoragePlugin.MCAP if storage == 'mcap' else StoragePlugin.SQLITE3
    writer = Writer(path, version=9, storage_plugin=plugin)
    writer.open()
    connections = {}
    for message in messages:
        if message.topic not in connections:
            if message.msgtype in STORE.types:
                connections[message.topic] = writer.add_connection(
                    message.topic, message.msgtype, typestore=STORE)
            else:  # a type of the user's own, with its definition
                connections[message.topic] = writer.add_connection(
                    message.topic, message.msgtype, msgdef='int32 x\n',
                    rihs01='RIHS01_' + '1' * 64)
        writer.write(connections[message.topic], message.log_ns, message.data)
    writer.close()
    return path


def run_bag(*arguments, check: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run([sys.executable, '-m', 'urdf_state_publisher.recorded.command',
                             *map(str, arguments)], capture_output=True, text=True, timeout=300)
    if check:
        assert result.returncode == 0, result.stdout + result.stderr
    return result


def read_bag(path: Path) -> tuple[list[tuple[str, int, bytes]], dict]:
    """The messages of a bag (topic, log time, bytes) and its connections by topic."""
    reader = Reader(path)
    reader.open()
    try:
        messages = [(c.topic, t, bytes(raw)) for c, t, raw in reader.messages()]
        return messages, {c.topic: c for c in reader.connections}
    finally:
        reader.close()


def live_output(probe, start_node, tmp_path: Path, parameters: dict, messages: list[Message],
                output: list[tuple[str, int, bytes]]) -> tuple[list[bytes], list[TFMessage]]:
    """The node's raw /tf and its /tf_static when sent `messages` as the bag's output paces."""
    topics = sorted({m.topic for m in messages if m.msgtype == 'sensor_msgs/msg/JointState'})
    overrides = {f'qos_overrides.{topic}.subscription': {'reliability': 'reliable',
                                                         'depth': 1000} for topic in topics}
    node = start_node({**parameters, **overrides, 'use_robot_description_topic': True},
                      node_name='live')
    tf: list[bytes] = []
    static: list[TFMessage] = []
    probe.node.create_subscription(TFMessage, '/tf', tf.append, TF_QOS, raw=True)
    probe.node.create_subscription(TFMessage, '/tf_static', static.append, LATCHED_QOS)
    publishers = {topic: probe.node.create_publisher(JointState, topic, RELIABLE_DEEP)
                  for topic in topics}
    descriptions = probe.node.create_publisher(String, '/robot_description', LATCHED_QOS)
    wait_until(lambda: all(p.get_subscription_count() for p in publishers.values())
               and descriptions.get_subscription_count(), 30.0, probe.spin,
               f'the node to subscribe ({node.output()[-500:]})')
    for message in messages:
        if message.topic == '/robot_description':
            descriptions.publish(message.data)
        else:
            publishers[message.topic].publish(message.data)
        tf_due = sum(1 for topic, log_ns, _ in output if topic == '/tf'
                     and log_ns <= message.log_ns)
        static_due = sum(1 for topic, log_ns, _ in output if topic == '/tf_static'
                         and log_ns <= message.log_ns)
        wait_until(lambda tf_due=tf_due, static_due=static_due: len(tf) >= tf_due
                   and len(static) >= static_due, 20.0,
                   lambda: probe.spin(0.01),
                   f'{tf_due} /tf and {static_due} /tf_static from the live node')
    probe.spin_for(0.3)  # and nothing more
    return tf, static


def static_content(message: TFMessage) -> list[tuple]:
    """A /tf_static message without its stamps (the node's clock at publishing)."""
    return sorted((t.header.frame_id, t.child_frame_id, t.transform.translation.x,
                   t.transform.translation.y, t.transform.translation.z,
                   t.transform.rotation.x, t.transform.rotation.y, t.transform.rotation.z,
                   t.transform.rotation.w) for t in message.transforms)


def outputs(output, topic: str) -> list[bytes]:
    return [data for t, _, data in output if t == topic]


@pytest.mark.parametrize('storage', ['mcap', 'sqlite3'])
def test_default_configuration_the_bags_tf_is_the_live_nodes(tmp_path, probe, start_node,
                                                              storage):
    messages = [Message('/robot_description', 'std_msgs/msg/String', START_NS,
                        description(SAMPLE_URDF.read_text())),
                *source('/joint_states', ARM + GRIPPER, 500, 1.0, start_s=0.001)]
    bag = write_bag(tmp_path / 'input', messages, storage)
    result = run_bag(bag, tmp_path / 'output')
    output, connections = read_bag(tmp_path / 'output')
    computed = outputs(output, '/tf')
    # The default 20 Hz on the stamps of a 500 Hz source: one in 25.
    assert len(computed) == 20, result.stdout
    tf, static = live_output(probe, start_node, tmp_path, {}, messages, output)
    assert tf == computed
    assert [static_content(m) for m in static] == [
        static_content(deserialize_message(data, TFMessage))
        for data in outputs(output, '/tf_static')]
    assert 'wrote /tf 20, /tf_static 1\n' in result.stdout
    assert 'findings: none' in result.stdout
    # The poses themselves, against the sample robot's joint table (node_fixtures), for the
    # JointState of the last /tf's stamp.
    last = deserialize_message(computed[-1], TFMessage).transforms
    [sent] = [state for state in (deserialize_message(m.data, JointState) for m in messages
                                  if m.topic == '/joint_states')
              if stamp_of(state) == stamp_of(last[0])]
    values = dict(zip(sent.name, sent.position))
    by_child = {t.child_frame_id: t for t in last}
    for joint in ARM + GRIPPER:
        assert_pose(by_child[SAMPLE_CHILD[joint]], sample_pose(joint, values[joint]))


@pytest.mark.parametrize('every_message', [False, True], ids=['default', 'every message'])
def test_two_sources_a_frame_prefix_and_a_reload_the_bags_tf_is_the_live_nodes(
        tmp_path, probe, start_node, every_message):
    parameters = {'source_list': ['arm/joint_states', 'gripper/joint_states'],
                  'frame_prefix': 'left/', 'ignore_timestamp': every_message}
    messages = in_order(
        [Message('/robot_description', 'std_msgs/msg/String', START_NS,
                 description(SAMPLE_URDF.read_text())),
         # The camera recalibrated half-way: a reload.
         Message('/robot_description', 'std_msgs/msg/String', START_NS + BILLION // 2,
                 description(moved_camera()))],
        source('/arm/joint_states', ARM, 100, 1.0, start_s=0.002),
        source('/gripper/joint_states', GRIPPER, 30, 1.0, start_s=0.0051, phase=1.0))
    bag = write_bag(tmp_path / 'input', messages)
    params_file = tmp_path / 'bringup.yaml'
    params_file.write_text(yaml.safe_dump({'/**': {'ros__parameters': parameters}}))
    run_bag(bag, tmp_path / 'output', '--ros-args', '--params-file', params_file)
    output, _ = read_bag(tmp_path / 'output')
    computed = outputs(output, '/tf')
    # Every message (100 + 30), or each joint at most every 50 ms of stamps: the arm at 100 Hz
    # every 5th (20); the gripper at 30 Hz every 2nd (8 of the 15 before the reload), and
    # after the reload, which forgets what was published, its first one and every 2nd after
    # (8 of 15). The prefix on every frame.
    assert len(computed) == (130 if every_message else 36)
    assert all(t.child_frame_id.startswith('left/') for data in computed
               for t in deserialize_message(data, TFMessage).transforms)
    tf, static = live_output(probe, start_node, tmp_path, parameters, messages, output)
    assert tf == computed
    computed_static = [static_content(deserialize_message(data, TFMessage))
                       for data in outputs(output, '/tf_static')]
    assert len(computed_static) == 2 and computed_static[0] != computed_static[1]
    assert [static_content(m) for m in static] == computed_static


def metadata_topics(bag: Path) -> dict[str, dict]:
    """Each topic's entry in the bag's metadata.yaml, read as YAML."""
    info = yaml.safe_load((bag / 'metadata.yaml').read_text())['rosbag2_bagfile_information']
    return {entry['topic_metadata']['name']: entry['topic_metadata']
            for entry in info['topics_with_message_count']}


def offered(entry: dict) -> list[dict]:
    profiles = entry['offered_qos_profiles']
    return yaml.safe_load(profiles) if isinstance(profiles, str) else profiles


def test_tf_static_is_stored_transient_local_so_that_playback_latches_it(tmp_path):
    bag = write_bag(tmp_path / 'input', source('/joint_states', ARM + GRIPPER, 100, 0.2))
    run_bag(bag, tmp_path / 'output', '--description', SAMPLE_URDF)
    # A version 9 input (Jazzy's): a version 9 output, whose QoS policies are named.
    topics = metadata_topics(tmp_path / 'output')
    [static] = offered(topics['/tf_static'])
    assert (static['durability'], static['reliability'], static['depth']) == (
        'transient_local', 'reliable', 1)
    [description_qos] = offered(topics['/robot_description'])
    assert description_qos['durability'] == 'transient_local'
    [tf] = offered(topics['/tf'])
    assert (tf['durability'], tf['reliability'], tf['depth']) == ('volatile', 'reliable', 100)
    # For Humble, version 5: rosbag2's numbers (durability 1 transient local, 2 volatile;
    # reliability 1 reliable), as Humble reads them.
    run_bag(bag, tmp_path / 'humble', '--description', SAMPLE_URDF, '--distro', 'humble')
    topics = metadata_topics(tmp_path / 'humble')
    [static] = offered(topics['/tf_static'])
    assert (static['durability'], static['reliability'], static['depth']) == (1, 1, 1)
    [tf] = offered(topics['/tf'])
    assert (tf['durability'], tf['reliability'], tf['depth']) == (2, 1, 100)


def recorded_tf(stamp_ns: int, *pairs: tuple[str, str]) -> bytes:
    message = T['tf2_msgs/msg/TFMessage'](transforms=[
        T['geometry_msgs/msg/TransformStamped'](
            header=T['std_msgs/msg/Header'](
                stamp=T['builtin_interfaces/msg/Time'](sec=stamp_ns // BILLION,
                                                       nanosec=stamp_ns % BILLION),
                frame_id=parent),
            child_frame_id=child,
            transform=T['geometry_msgs/msg/Transform'](
                translation=T['geometry_msgs/msg/Vector3'](x=1.0, y=2.0, z=3.0),
                rotation=T['geometry_msgs/msg/Quaternion'](x=0.0, y=0.0, z=0.0, w=1.0)))
        for parent, child in pairs])
    return bytes(STORE.serialize_cdr(message, 'tf2_msgs/msg/TFMessage'))


def test_recorded_transforms_of_the_robots_frames_are_replaced_and_the_others_kept(tmp_path):
    odom = recorded_tf(START_NS, ('odom', 'base_footprint'))
    ours = recorded_tf(START_NS, ('base_link', 'torso_link'))
    mixed = recorded_tf(START_NS, ('map', 'odom'), ('torso_link', 'shoulder_pan_link'))
    calibration = recorded_tf(START_NS, ('camera_link', 'camera_optical_frame'),
                              ('base_footprint', 'base_link'))
    at = START_NS + 50_000_000  # after the first joint state, which starts the bag
    messages = [*source('/joint_states', ARM + GRIPPER, 100, 0.2, start_s=0.01),
                Message('/tf', 'tf2_msgs/msg/TFMessage', at + 1, odom),
                Message('/tf', 'tf2_msgs/msg/TFMessage', at + 2, ours),
                Message('/tf', 'tf2_msgs/msg/TFMessage', at + 3, mixed),
                Message('/tf_static', 'tf2_msgs/msg/TFMessage', at + 4, calibration)]
    bag = write_bag(tmp_path / 'input', in_order(messages))
    result = run_bag(bag, tmp_path / 'output', '--description', SAMPLE_URDF)
    output, _ = read_bag(tmp_path / 'output')
    recorded = [(topic, log_ns, data) for topic, log_ns, data in output
                if log_ns in (at + 1, at + 2, at + 3, at + 4)]
    kept = [(topic, [(t.header.frame_id, t.child_frame_id)
                     for t in deserialize_message(data, TFMessage).transforms])
            for topic, _, data in recorded]
    assert kept == [('/tf', [('odom', 'base_footprint')]), ('/tf', [('map', 'odom')]),
                    ('/tf_static', [('camera_link', 'camera_optical_frame')])]
    assert recorded[0][2] == odom  # untouched: the recorded bytes
    assert 'recorded transforms: 3 replaced' in result.stdout
    assert '3 kept' in result.stdout


def test_other_nodes_diagnostics_are_kept_beside_the_nodes(tmp_path):
    theirs = bytes(STORE.serialize_cdr(T['diagnostic_msgs/msg/DiagnosticArray'](
        header=T['std_msgs/msg/Header'](stamp=T['builtin_interfaces/msg/Time'](sec=1, nanosec=0),
                                        frame_id=''),
        status=[T['diagnostic_msgs/msg/DiagnosticStatus'](
            level=0, name='camera_driver: status', message='ok', hardware_id='camera',
            values=[])]), 'diagnostic_msgs/msg/DiagnosticArray'))
    at = START_NS + 50_000_000
    messages = [*source('/joint_states', ARM + GRIPPER, 100, 2.5, start_s=0.01),
                Message('/diagnostics', 'diagnostic_msgs/msg/DiagnosticArray', at, theirs)]
    bag = write_bag(tmp_path / 'input', in_order(messages))
    run_bag(bag, tmp_path / 'output', '--description', SAMPLE_URDF)
    output, _ = read_bag(tmp_path / 'output')
    diagnostics = [(log_ns, data) for topic, log_ns, data in output if topic == '/diagnostics']
    assert (at, theirs) in diagnostics
    # And the node's own, once a second of the bag's 2.5 s.
    assert len(diagnostics) == 3


def test_the_topics_the_node_publishes_on_are_remapped_as_live(tmp_path):
    recorded = recorded_tf(START_NS, ('base_link', 'torso_link'))
    messages = [*source('/joint_states', ARM + GRIPPER, 100, 0.3, start_s=0.01),
                Message('/tf', 'tf2_msgs/msg/TFMessage', START_NS + 50_000_000, recorded)]
    bag = write_bag(tmp_path / 'input', in_order(messages))
    run_bag(bag, tmp_path / 'output', '--description', SAMPLE_URDF, '--ros-args',
            '-r', '/tf:=/robot1/tf', '-r', '/tf_static:=/robot1/tf_static')
    output, connections = read_bag(tmp_path / 'output')
    assert outputs(output, '/robot1/tf') and outputs(output, '/robot1/tf_static')
    # The recorded /tf is another topic now: copied as it is, none of it replaced.
    assert outputs(output, '/tf') == [recorded]
    assert '/tf_static' not in connections


def test_types_the_command_does_not_know_are_copied_as_they_are(tmp_path):
    thing = b'\x00\x01\x00\x00\x07\x00\x00\x00'
    messages = [*source('/joint_states', ARM + GRIPPER, 100, 0.1),
                Message('/camera/thing', 'my_msgs/msg/Thing', START_NS + 5, thing)]
    bag = write_bag(tmp_path / 'input', in_order(messages))
    run_bag(bag, tmp_path / 'output', '--description', SAMPLE_URDF)
    output, connections = read_bag(tmp_path / 'output')
    assert [(t, log_ns, data) for t, log_ns, data in output if t == '/camera/thing'] == [
        ('/camera/thing', START_NS + 5, thing)]
    assert connections['/camera/thing'].msgtype == 'my_msgs/msg/Thing'
    assert connections['/camera/thing'].msgdef.data == 'int32 x\n'
    # And every input message is in the output, at its log time.
    assert sorted((m.topic, m.log_ns, m.data) for m in messages) == sorted(
        (t, log_ns, data) for t, log_ns, data in output if t in ('/joint_states',
                                                                   '/camera/thing'))


def test_a_lone_mcap_file_is_read_and_the_given_description_replaces_the_recorded_one(
        tmp_path):
    messages = [Message('/robot_description', 'std_msgs/msg/String', START_NS,
                        description('<robot name="old"><link name="a"/></robot>')),
                *source('/joint_states', ARM + GRIPPER, 100, 0.2, start_s=0.001)]
    write_bag(tmp_path / 'input', messages)
    [mcap] = (tmp_path / 'input').glob('*.mcap')
    xacro = SAMPLE_URDF.with_suffix('.urdf.xacro')
    result = run_bag(mcap, tmp_path / 'output', '--description', xacro, 'prefix:=')
    output, _ = read_bag(tmp_path / 'output')
    [text] = outputs(output, '/robot_description')
    assert 'robot name="old"' not in deserialize_message(text, String).data
    assert 'sample_arm' in deserialize_message(text, String).data
    assert ('recorded messages replaced by what the run wrote: /robot_description 1'
            in result.stdout.splitlines())


def test_the_resolved_joint_states_are_written_when_asked(tmp_path):
    messages = source('/arm/joint_states', ARM + GRIPPER, 100, 0.3, start_s=0.001)
    bag = write_bag(tmp_path / 'input', messages)
    run_bag(bag, tmp_path / 'output', '--description', SAMPLE_URDF, '--ros-args',
            '-p', 'publish_joint_states:=true', '-p', "source_list:=['arm/joint_states']")
    output, _ = read_bag(tmp_path / 'output')
    resolved = [deserialize_message(data, JointState) for data in outputs(output,
                                                                          '/joint_states')]
    # At publish_frequency on the stamps: one every 50 ms of 0.3 s; every moving joint.
    assert len(resolved) == 6
    assert set(resolved[0].name) >= set(ARM + GRIPPER)


def test_a_source_that_stops_while_another_goes_on_is_a_finding_in_bag_time(tmp_path):
    # The arm for 4 s, the gripper for 1 s only: judged on the bag's clock, as the node would.
    messages = in_order(source('/arm/joint_states', ARM, 100, 4.0),
                        source('/gripper/joint_states', GRIPPER, 50, 1.0, start_s=0.001))
    bag = write_bag(tmp_path / 'input', messages)
    result = run_bag(bag, tmp_path / 'output', '--description', SAMPLE_URDF, '--ros-args',
                     '-p', "source_list:=['arm/joint_states', 'gripper/joint_states']")
    [line] = [line for line in result.stdout.splitlines() if 'sources stopped' in line]
    assert 'joint-state sources stopped while others go on' in line
    assert '/gripper/joint_states' in line
    # Reported after its 1 s without a message, at one of the once-a-second assessments.
    first_at = float(line.split('first at ')[1].split(' s')[0])
    assert 2.0 <= first_at <= 3.0, line


def test_findings_are_summed_up_at_the_end(tmp_path):
    messages = source('/joint_states', ARM + GRIPPER + ('not_a_joint',), 100, 0.3)
    bag = write_bag(tmp_path / 'input', messages)
    result = run_bag(bag, tmp_path / 'output', '--description', SAMPLE_URDF)
    assert 'findings (what the node would have reported), at the bag time of the message ' \
           'that caused them:' in result.stdout
    assert "JointState names joints that robot 'sample_arm' does not have (ignored): " \
           'not_a_joint' in result.stdout
    # Counted per name, at the times of its messages (the first at 0, the last at 0.29 s).
    assert '      not_a_joint: 30 messages, first at 0.000 s, last at 0.290 s' in result.stdout


# Bad input: one line each, nothing left behind -------------------------------------------

def nothing_left(tmp_path: Path) -> bool:
    return not (tmp_path / 'output').exists() and not list(tmp_path.glob('.output.partial*'))


def test_a_missing_input_is_named(tmp_path):
    line = error_line(run_bag(tmp_path / 'nowhere', tmp_path / 'output', check=False))
    assert f'{tmp_path / "nowhere"}: no such bag' in line
    assert nothing_left(tmp_path)


# After the MCAP magic: no header record; a header record whose length is past what a 64-bit
# size holds; one past any memory (2**44 bytes: the reader's allocation fails, or the read is
# short).
DAMAGED_MCAP = {'mcap file': b'\x89MCAP0\r\n' + bytes(range(256)),
                'mcap header length': b'\x89MCAP0\r\n\x01' + struct.pack('<Q', 2**64 - 1),
                'mcap header length past memory': b'\x89MCAP0\r\n\x01' + struct.pack('<Q', 2**44)}


@pytest.mark.parametrize('what', [*DAMAGED_MCAP, 'bag directory'])
def test_a_corrupt_input_is_named(tmp_path, what):
    if what in DAMAGED_MCAP:
        corrupt = tmp_path / 'input.mcap'
        corrupt.write_bytes(DAMAGED_MCAP[what] + bytes(300))
    else:
        corrupt = write_bag(tmp_path / 'input', source('/joint_states', ARM + GRIPPER, 100, 0.1))
        (corrupt / 'metadata.yaml').write_text('rosbag2_bagfile_information: [1, 2\n')
    line = error_line(run_bag(corrupt, tmp_path / 'output', check=False))
    assert f'{corrupt}: cannot read it as a rosbag2 bag' in line
    assert nothing_left(tmp_path)


def test_a_folder_that_is_no_bag_is_named(tmp_path):
    (tmp_path / 'input').mkdir()
    (tmp_path / 'input' / 'notes.txt').write_text('not a bag')
    line = error_line(run_bag(tmp_path / 'input', tmp_path / 'output', check=False))
    assert line == (f'urdf_state_publisher_bag: {tmp_path / "input"}: not a recording, nor a '
                    'folder of recordings: no metadata.yaml, .mcap, .db3 or .bag file in it, '
                    'nor in its folders')
    assert nothing_left(tmp_path)


def test_a_recording_left_without_its_metadata_is_named_with_what_to_do(tmp_path):
    # What `ros2 bag record` leaves when it is killed before it closes: its files alone.
    bag = write_bag(tmp_path / 'input', source('/joint_states', ARM + GRIPPER, 100, 0.1),
                    storage='sqlite3')
    (bag / 'metadata.yaml').unlink()
    [database] = bag.glob('*.db3')
    line = error_line(run_bag(bag, tmp_path / 'output', check=False))
    assert line == (f'urdf_state_publisher_bag: {bag}: sqlite3 files ({database.name}) without '
                    f'the metadata.yaml of their bag: write it with `ros2 bag reindex {bag}`, or '
                    'give each .db3 file itself as an input')
    assert nothing_left(tmp_path)
    # As it says: the file itself is read.
    run_bag(database, tmp_path / 'output', '--description', SAMPLE_URDF)
    assert read_bag(tmp_path / 'output')[0]


def test_an_empty_folder_is_named(tmp_path):
    (tmp_path / 'input').mkdir()
    line = error_line(run_bag(tmp_path / 'input', tmp_path / 'output', check=False))
    assert f'{tmp_path / "input"}: not a recording' in line


def test_folders_made_for_the_output_go_again_when_it_fails(tmp_path):
    bag = write_bag(tmp_path / 'input', source('/joint_states', ARM + GRIPPER, 100, 0.1))
    nested = tmp_path / 'runs' / 'today' / 'output'
    error_line(run_bag(bag, nested, check=False))  # no description
    assert not (tmp_path / 'runs').exists()
    run_bag(bag, nested, '--description', SAMPLE_URDF)
    assert read_bag(nested)[0]


def test_a_bag_without_the_joint_state_topic_names_the_topics_it_has(tmp_path):
    bag = write_bag(tmp_path / 'input', source('/robot1/joint_states', ARM + GRIPPER, 100, 0.1))
    line = error_line(run_bag(bag, tmp_path / 'output', '--description', SAMPLE_URDF,
                              check=False))
    # The JointState topics it has are named, with the arguments that read them.
    assert line.endswith(
        'has no joint-state topic /joint_states; its JointState topics are '
        '/robot1/joint_states: read them with --ros-args -p '
        'source_list:=[/robot1/joint_states] (or -r joint_states:=/robot1/joint_states)')
    assert nothing_left(tmp_path)
    # Named as the node names it, it is read; the --ros-args may also come first, up to a --.
    run_bag(bag, tmp_path / 'output', '--description', SAMPLE_URDF, '--ros-args', '-r',
            '__ns:=/robot1')
    run_bag('--ros-args', '-r', '__ns:=/robot1', '--', bag, tmp_path / 'output2',
            '--description', SAMPLE_URDF)
    assert read_bag(tmp_path / 'output2')[0]


def test_without_a_description_it_says_where_one_can_come_from(tmp_path):
    bag = write_bag(tmp_path / 'input', source('/joint_states', ARM + GRIPPER, 100, 0.1))
    line = error_line(run_bag(bag, tmp_path / 'output', check=False))
    assert 'no robot description' in line and '--description FILE' in line
    assert nothing_left(tmp_path)


def test_an_existing_output_is_kept_unless_overwrite_is_given(tmp_path):
    bag = write_bag(tmp_path / 'input', source('/joint_states', ARM + GRIPPER, 100, 0.1))
    (tmp_path / 'output').mkdir()
    (tmp_path / 'output' / 'mine.txt').write_text('keep me')
    line = error_line(run_bag(bag, tmp_path / 'output', '--description', SAMPLE_URDF,
                              check=False))
    assert f'{tmp_path / "output"} exists: give --overwrite to replace it' in line
    assert (tmp_path / 'output' / 'mine.txt').read_text() == 'keep me'
    run_bag(bag, tmp_path / 'output', '--description', SAMPLE_URDF, '--overwrite')
    assert not (tmp_path / 'output' / 'mine.txt').exists()
    assert read_bag(tmp_path / 'output')[0]


@pytest.fixture(scope='module')
def long_bag(tmp_path_factory) -> Path:
    """A minute of 1 kHz joint states: long enough to be interrupted, and to show progress."""
    return write_bag(tmp_path_factory.mktemp('long') / 'input',
                     source('/joint_states', ARM + GRIPPER, 1000, 60.0))


def test_on_a_terminal_a_progress_line_says_how_far_and_how_fast(tmp_path, long_bag):
    import pty

    controller, terminal = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, '-m', 'urdf_state_publisher.recorded.command', str(long_bag),
         str(tmp_path / 'output'), '--description', str(SAMPLE_URDF)],
        stdout=subprocess.PIPE, stderr=terminal, text=True)
    os.close(terminal)
    written = b''
    while True:
        try:
            chunk = os.read(controller, 4096)
        except OSError:  # the process closed its end
            break
        if not chunk:
            break
        written += chunk
    os.close(controller)
    assert process.wait(timeout=300) == 0
    progress = [line for line in written.decode().split('\r') if 'messages, ' in line]
    assert progress, written.decode()[-2000:]
    assert re.search(r'[\d,]+ messages, [\d.]+ of 60.0 s of bag \(\d+ %\), \d+x real time, '
                     r'\d+ s left', progress[0]), progress[0]


def signal_at_default(number: int):
    """For a child process: `number` at its default, as in a terminal. A shell without job
    control (a script's `make test &`) starts its background commands with SIGINT ignored, and
    an ignored signal stays ignored across exec."""
    return lambda: signal.signal(number, signal.SIG_DFL)


@pytest.mark.parametrize('sig', [signal.SIGINT, signal.SIGTERM], ids=['Ctrl-C', 'SIGTERM'])
def test_a_stop_leaves_no_output_that_looks_complete(tmp_path, long_bag, sig):
    # Its stderr a full pipe: the run writes its output, then waits at its first log line (the
    # description loaded) until the pipe is read, so it is stopped mid-run however slow this
    # test is to send the signal.
    read_end, write_end = full_pipe()
    process = subprocess.Popen(
        [sys.executable, '-m', 'urdf_state_publisher.recorded.command', str(long_bag),
         str(tmp_path / 'output'),
         '--description', str(SAMPLE_URDF)], stdout=subprocess.PIPE, stderr=write_end,
        preexec_fn=signal_at_default(sig))
    os.close(write_end)
    wait_until(lambda: list(tmp_path.glob('.output.partial*/output/*')) or
               process.poll() is not None, 60.0, lambda: time.sleep(0.01), 'the output')
    process.send_signal(sig)
    with os.fdopen(read_end, 'rb') as pipe:
        stderr = pipe.read().lstrip(b'\0').decode()
    stdout = process.communicate(timeout=60)[0].decode()
    # Killed by the signal after its clean-up, as a stopped program ends (a shell shows 130 for
    # Ctrl-C, 143 for SIGTERM), so that a script running it stops too.
    assert process.returncode == -sig, stdout + stderr
    said = 'interrupted' if sig == signal.SIGINT else 'stopped by SIGTERM'
    assert f'urdf_state_publisher_bag: {said}; no output written' in stderr.splitlines()
    assert 'Traceback' not in stderr
    assert nothing_left(tmp_path)


@pytest.mark.parametrize('sig', [signal.SIGTERM, signal.SIGINT], ids=['SIGTERM', 'SIGINT'])
def test_a_batch_stopped_keeps_the_runs_done_and_leaves_nothing_of_the_others(tmp_path,
                                                                              long_bag, sig):
    # Two recordings, then one whose file is a FIFO that nobody writes: its run waits in open()
    # until it is stopped, as on a stalled network mount. Two workers, the runs in order: when
    # the first two are done, one worker waits in that run, the other for a run to come.
    runs = tmp_path / 'runs'
    for k in range(3):
        shutil.copytree(long_bag, runs / f'run_{k}')
        if k >= 2:
            [mcap] = (runs / f'run_{k}').glob('*.mcap')
            mcap.unlink()
            os.mkfifo(mcap)
    out = tmp_path / 'out'
    process = subprocess.Popen(
        [sys.executable, '-m', 'urdf_state_publisher.recorded.command', str(runs), str(out),
         '--description',
         str(SAMPLE_URDF), '--jobs', '2'], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, preexec_fn=signal_at_default(sig))
    wait_until(lambda: ((out / 'run_0').exists() and (out / 'run_1').exists())
               or process.poll() is not None, 120.0, lambda: time.sleep(0.01), 'two outputs')
    # To this process alone, as a scheduler stops a job (or `kill -INT` does): it tells its
    # workers, the one whose run would otherwise wait for ever, and the one between runs (with
    # nothing to clean up).
    process.send_signal(sig)
    stdout, stderr = process.communicate(timeout=120)
    assert process.returncode == -sig, stdout + stderr
    said = 'interrupted' if sig == signal.SIGINT else 'stopped by SIGTERM'
    assert [line for line in stderr.splitlines() if not line.startswith('batch: ')] == [
        f'urdf_state_publisher_bag: {said}; 2 of 3 outputs written '
        'before it; the runs not done left nothing']  # after the progress lines
    # The outputs done are whole, in the table of runs; nothing else is there.
    assert sorted(p.name for p in out.iterdir()) == ['run_0', 'run_1', 'runs.csv']
    for name in ['run_0', 'run_1']:
        assert len(read_bag(out / name)[0]) > 60_000
    assert [line.split(',')[1] for line in (out / 'runs.csv').read_text().splitlines()[1:]
            ] == [str(out / 'run_0'), str(out / 'run_1')]
    assert not list(tmp_path.glob('**/.*partial*'))


def test_without_rosbags_it_says_how_to_install_it(tmp_path):
    result = subprocess.run(
        [sys.executable, '-c', 'import sys; sys.modules["rosbags"] = None; '
         'from urdf_state_publisher.recorded.command import main; sys.exit(main())', 'in', 'out'],
        capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    # The tests run in a virtual environment: its own pip.
    assert result.stderr.strip() == (
        'urdf_state_publisher_bag: needs the rosbags package, which ROS 2 packages do not '
        f'ship; for this Python: {sys.executable} -m pip install rosbags '
        '(doc/recorded-data.md, "Installing rosbags")')


@pytest.mark.parametrize('row, managed', [('a ROS 2 install on Ubuntu 24.04', True),
                                          ('a ROS 2 install on Ubuntu 22.04', False)])
def test_a_system_pythons_install_command_is_the_recorded_data_pages(row, managed):
    from urdf_state_publisher.recorded.extras import install_command

    # The page's table row for the platform: the command it gives for its python3, whose
    # Python is marked as managed by the distribution on 24.04 (PEP 668) and not on 22.04.
    [line] = [line for line in DOC.read_text(encoding='utf-8').splitlines()
              if line.startswith(f'| {row}')]
    assert install_command('python3', False, managed) == line.split('|')[2].split('`')[1]


# The Recorded data page's blocks --------------------------------------------------------------

DOC = Path(__file__).resolve().parents[2] / 'doc' / 'recorded-data.md'


def doc_block(first_line: str) -> str:
    """The fenced block of the page that starts with `first_line`."""
    blocks = DOC.read_text(encoding='utf-8').split('```')[1::2]
    [code] = [b.split('\n', 1)[1] for b in blocks if b.split('\n', 1)[1].startswith(first_line)]
    return code


def test_the_one_command_of_the_recorded_data_page_runs(tmp_path):
    command = [line for line in doc_block('# The replay way').splitlines()
               if line.startswith('urdf_state_publisher_bag ')]
    [words] = [line.split() for line in command]
    assert words[:3] == ['urdf_state_publisher_bag', 'run_42/', 'run_42_tf/']
    # Recorded on the robot the example's xacro argument describes: its joints prefixed.
    write_bag(tmp_path / 'run_42', source('/joint_states',
                                          tuple('left_' + n for n in ARM + GRIPPER), 100, 0.5))
    (tmp_path / 'robot.urdf.xacro').write_text(
        SAMPLE_URDF.with_suffix('.urdf.xacro').read_text())
    result = subprocess.run([sys.executable, '-m', 'urdf_state_publisher.recorded.command',
                             *words[1:]],
                            cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    output, _ = read_bag(tmp_path / 'run_42_tf')
    [text] = outputs(output, '/robot_description')
    # The xacro argument of the example reached xacro: its prefix is on every joint.
    assert 'name="left_torso_lift_joint"' in deserialize_message(text, String).data
    assert outputs(output, '/tf_static')


def test_the_usage_on_the_recorded_data_page_is_the_commands():
    usage = doc_block('urdf_state_publisher_bag INPUT [INPUT ...] OUTPUT')
    shown = {word.strip('[],') for word in usage.split() if word.strip('[],').startswith('-')}
    helped = subprocess.run([sys.executable, '-m', 'urdf_state_publisher.recorded.command',
                             '--help'],
                            capture_output=True, text=True, timeout=60)
    assert helped.returncode == 0
    options = {word.strip('[],') for word in helped.stdout.split()
               if word.strip('[],').startswith('--')}
    assert {o for o in shown if o.startswith('--')} == options - {'--help'}
    for flag in ('-p', '--params-file', '-r', '--ros-args', 'mcap|sqlite3'):
        assert flag in usage


def test_the_summary_on_the_recorded_data_page_is_what_the_command_prints(tmp_path):
    shown = doc_block('read 30,000 messages').splitlines()
    # The elbow beyond its limit (2.3) from 1 s on: clamped.
    messages = [Message('/joint_states', m.msgtype, m.log_ns, joint_state(
                    m.log_ns - 300_000, ARM + GRIPPER,
                    [0.02, 0.02, 0.02, 3.0 if k >= 100 else 0.02, 0.02, 0.02]))
                for k, m in enumerate(source('/joint_states', ARM + GRIPPER, 100, 2.0))]
    bag = write_bag(tmp_path / 'input', messages)
    result = run_bag(bag, tmp_path / 'output', '--description', SAMPLE_URDF)
    printed = result.stdout.splitlines()
    assert len(printed) == len(shown), result.stdout

    def shape(line: str) -> str:  # numbers and the output's path as placeholders
        line = line.split(': ', 1)[0] if line.startswith('output') else line
        return re.sub(r'[\d][\d,.]*', 'N', line).replace('N ms,', 'N s,')

    assert [shape(line) for line in printed] == [shape(line) for line in shown]


def test_a_batch_runs_every_input_and_its_table_is_the_pages(tmp_path):
    """Two good runs and a bad one: each good output written, the bad one named, status 1."""
    runs = tmp_path / 'runs'
    write_bag(runs / 'run_41', source('/joint_states', ARM + GRIPPER, 100, 0.3))
    # run_42's elbow beyond its limit (2.3): a finding, the run still ok.
    write_bag(runs / 'run_42', [Message('/joint_states', m.msgtype, m.log_ns, joint_state(
        m.log_ns - 300_000, ARM + GRIPPER, [0.02, 0.02, 0.02, 3.0, 0.02, 0.02]))
        for m in source('/joint_states', ARM + GRIPPER, 100, 0.3)])
    (runs / 'run_43').mkdir()
    (runs / 'run_43' / 'metadata.yaml').write_text('rosbag2_bagfile_information: [1, 2\n')
    result = run_bag(runs, tmp_path / 'out', '--description', SAMPLE_URDF, '--jobs', '2',
                     check=False)
    assert result.returncode == 1, result.stdout + result.stderr
    assert sorted(p.name for p in (tmp_path / 'out').iterdir()) == ['run_41', 'run_42',
                                                                  'runs.csv']
    for name in ('run_41', 'run_42'):
        assert len(outputs(read_bag(tmp_path / 'out' / name)[0], '/tf')) == 6
    shown = doc_block('run       messages').splitlines()
    printed = result.stdout.splitlines()

    def shape(line: str) -> str:  # numbers, run names and the reasons as placeholders
        line = re.sub(r'run_\d+', 'RUN', line.split(': ', 1)[0])
        return re.sub(r'\s+', ' ', re.sub(r'[\d][\d,.]*', 'N', line)).replace(' ms', ' s')

    assert [shape(line) for line in printed] == [shape(line) for line in shown]
    assert printed[5].startswith(f'run_43: {runs / "run_43"}: cannot read it as a rosbag2 bag')

