"""urdf_state_publisher_bag on ROS 1 bags written here with rosbags, and the distro it writes for.

Expected values come from elsewhere: the computed /tf from the same JointStates in a rosbag2
bag (whose /tf test_bag.py holds to the live node's, byte for byte); the copied messages from
rosbags-convert's own conversion; the Humble output from a reading of metadata.yaml by
Humble's rules (humble_rules.py, after rosbag2's humble branch).
"""

from __future__ import annotations

from pathlib import Path
import sqlite3
import struct
import subprocess
import sys

from bag_fixtures import error_line
from conftest import SAMPLE_URDF
import humble_rules
from hypothesis import given, settings
from hypothesis import strategies as st
import numpy as np
import pytest
from rosbags.convert.converter import convert
from rosbags.rosbag1 import Writer as Writer1
from rosbags.rosbag2 import CompressionFormat, CompressionMode, Reader, StoragePlugin, Writer
from rosbags.typesys import get_types_from_msg, get_typestore, Stores
import yaml

if sys.version_info >= (3, 14):
    from compression import zstd
else:
    from backports import zstd

from urdf_state_publisher.recorded.plan import plan_run, RunOptions
from urdf_state_publisher.wire.ros1 import JointStateConverter
from urdf_state_publisher.wire.tf import read_tf_message

pytestmark = pytest.mark.ros_free  # also runs where no ROS 2 is installed

ROS1 = get_typestore(Stores.ROS1_NOETIC)
ROS2 = get_typestore(Stores.ROS2_JAZZY)
# tf's message as ROS 1 defined it (rosbags' Noetic store has no tf2_msgs), and its MD5.
TF_DEFINITION = ('geometry_msgs/TransformStamped[] transforms\n' + '=' * 80 + '\nMSG: '
                 'geometry_msgs/TransformStamped\n'
                 + ROS1.generate_msgdef('geometry_msgs/msg/TransformStamped', ros_version=1)[0])
TF_MD5 = '94810edda583a504dfda3829e70d7eec'
ROS1.register(get_types_from_msg(TF_DEFINITION, 'tf2_msgs/msg/TFMessage'))
BILLION = 1_000_000_000
START_NS = 1_600_000_000 * BILLION
# Every independent moving joint of the sample robot: a recording that fits it.
JOINTS = ('torso_lift_joint', 'shoulder_pan_joint', 'shoulder_lift_joint', 'elbow_joint',
          'wrist_roll_joint', 'left_finger_joint')
# A type only the bag defines: rosbags' stores do not know it.
GRIPPER_TYPE = 'my_gripper_msgs/msg/Opening'
GRIPPER_DEFINITION = 'Header header\nfloat64 width\nstring[] fingers\n'


def ros1_definition(msgtype: str, old_header: bool = False) -> tuple[str, str]:
    """The definition and MD5 a ROS 1 recorder stores for `msgtype`; roslib/Header if old."""
    text, md5 = ROS1.generate_msgdef(msgtype, ros_version=1)
    if old_header:  # the bytes are the same: only the name of the header type differs
        text = text.replace('MSG: std_msgs/Header', 'MSG: roslib/Header')
    return text, md5


def stamp(ns: int, store=ROS1):
    time = store.types['builtin_interfaces/msg/Time'](sec=ns // BILLION, nanosec=ns % BILLION)
    fields = {'seq': 7} if store is ROS1 else {}
    return store.types['std_msgs/msg/Header'](stamp=time, frame_id='', **fields)


def joint_state(ns: int, k: int, store=ROS1):
    return store.types['sensor_msgs/msg/JointState'](
        header=stamp(ns, store), name=list(JOINTS),
        position=0.02 + 0.0001 * k * np.arange(1, 7), velocity=np.array([]),
        effort=np.array([]))


def transform(parent: str, child: str, ns: int):
    t = ROS1.types
    return t['geometry_msgs/msg/TransformStamped'](
        header=t['std_msgs/msg/Header'](seq=0, stamp=t['builtin_interfaces/msg/Time'](
            sec=ns // BILLION, nanosec=ns % BILLION), frame_id=parent),
        child_frame_id=child, transform=t['geometry_msgs/msg/Transform'](
            translation=t['geometry_msgs/msg/Vector3'](x=1.0, y=2.0, z=3.0),
            rotation=t['geometry_msgs/msg/Quaternion'](x=0.0, y=0.0, z=0.0, w=1.0)))


def gripper_store():
    store = get_typestore(Stores.ROS1_NOETIC)
    store.register(get_types_from_msg(GRIPPER_DEFINITION, GRIPPER_TYPE))
    return store


def write_ros1(path: Path, k_range: range, *, old_header: bool = False,
               joint_topic: str = '/joint_states', extra: bool = True) -> None:
    """JointStates at 50 Hz (k in k_range); with `extra`, /tf and a type only the bag knows."""
    writer = Writer1(path)
    writer.open()
    text, md5 = ros1_definition('sensor_msgs/msg/JointState', old_header)
    joints = writer.add_connection(joint_topic, 'sensor_msgs/msg/JointState', msgdef=text,
                                   md5sum=md5)
    if extra:
        # The old tf's type name; robot_state_publisher's leading slashes.
        tf = writer.add_connection('/tf', 'tf/msg/tfMessage', msgdef=TF_DEFINITION,
                                   md5sum=TF_MD5)
        store = gripper_store()
        text, md5 = store.generate_msgdef(GRIPPER_TYPE, ros_version=1)
        gripper = writer.add_connection('/gripper/opening', GRIPPER_TYPE, msgdef=text,
                                        md5sum=md5, latching=1)
    for k in k_range:
        ns = START_NS + k * 20_000_000
        writer.write(joints, ns + 100_000,
                     bytes(ROS1.serialize_ros1(joint_state(ns, k), 'sensor_msgs/msg/JointState')))
        if extra and k % 5 == 0:
            message = ROS1.types['tf2_msgs/msg/TFMessage'](transforms=[
                transform('/odom', '/base_footprint', ns),      # not the robot's: kept
                transform('/base_footprint', '/base_link', ns),  # the robot's: replaced
                transform('/torso_link', '/shoulder_pan_link', ns)])  # the robot's too
            writer.write(tf, ns + 200_000,
                         bytes(ROS1.serialize_ros1(message, 'tf2_msgs/msg/TFMessage')))
            opening = store.types[GRIPPER_TYPE](header=stamp(ns), width=0.01 * k,
                                                 fingers=['left', 'right'])
            writer.write(gripper, ns + 300_000, bytes(store.serialize_ros1(opening,
                                                                           GRIPPER_TYPE)))
    writer.close()


def write_ros2(path: Path, k_range: range, storage: str = 'mcap',
               compression: str = 'none') -> None:
    """The same JointStates as write_ros1's, in a rosbag2 bag, as ROS 2 serializes them.

    `compression`: zstd, as `ros2 bag record --compression-mode` (rosbags writes it alike).
    """
    writer = Writer(path, version=9, storage_plugin=StoragePlugin[storage.upper()])
    if compression != 'none':
        writer.set_compression(CompressionMode[compression.upper()], CompressionFormat.ZSTD)
    writer.open()
    joints = writer.add_connection('/joint_states', 'sensor_msgs/msg/JointState',
                                   typestore=ROS2)
    for k in k_range:
        ns = START_NS + k * 20_000_000
        writer.write(joints, ns + 100_000, bytes(ROS2.serialize_cdr(
            joint_state(ns, k, ROS2), 'sensor_msgs/msg/JointState')))
    writer.close()


def run(*arguments: str) -> subprocess.CompletedProcess:
    result = subprocess.run(
        [sys.executable, '-m', 'urdf_state_publisher.recorded.command', *map(str, arguments),
         '--description', str(SAMPLE_URDF)], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    return result


def messages(path: Path, topic: str) -> list[tuple[int, bytes]]:
    with Reader(path) as reader:
        chosen = [c for c in reader.connections if c.topic == topic]
        return [(log_ns, bytes(data)) for _, log_ns, data in reader.messages(chosen)]


def metadata(path: Path) -> dict:
    return yaml.safe_load((path / 'metadata.yaml').read_text())['rosbag2_bagfile_information']


@pytest.mark.parametrize('old_header', [False, True], ids=['std_msgs-header', 'roslib-header'])
def test_the_tf_of_a_ros1_bag_is_the_tf_of_the_same_states_in_ros2(tmp_path, old_header):
    write_ros1(tmp_path / 'run.bag', range(100), old_header=old_header, extra=False)
    write_ros2(tmp_path / 'ros2', range(100))
    run(tmp_path / 'run.bag', tmp_path / 'from_ros1')
    run(tmp_path / 'ros2', tmp_path / 'from_ros2')
    computed = messages(tmp_path / 'from_ros1', '/tf')
    assert len(computed) > 30  # at most 20 Hz of the 50 Hz states: publish_frequency
    assert computed == messages(tmp_path / 'from_ros2', '/tf')


def test_a_topic_named_without_a_leading_slash_is_read_as_ros_2_names_it(tmp_path):
    """The ROS 1 robot_state_publisher's own test bag names its topic `joint_states`."""
    write_ros1(tmp_path / 'run.bag', range(50), joint_topic='joint_states', extra=False)
    result = run(tmp_path / 'run.bag', tmp_path / 'out')
    assert len(messages(tmp_path / 'out', '/tf')) > 15
    assert len(messages(tmp_path / 'out', '/joint_states')) == 50
    assert 'does not have' not in result.stdout  # every name read as the robot's joint


def test_recorded_frames_with_a_leading_slash_are_replaced_or_kept_as_tf2_reads_them(tmp_path):
    write_ros1(tmp_path / 'run.bag', range(50))
    result = run(tmp_path / 'run.bag', tmp_path / 'out')
    recorded = [t for _, data in messages(tmp_path / 'out', '/tf')
                for t in read_tf_message(data) if t.values == (1.0, 2.0, 3.0, 0.0, 0.0, 0.0, 1.0)]
    # Of each recorded message, /base_link and /shoulder_pan_link went (the robot's frames,
    # computed), /odom -> /base_footprint stayed, without its slashes.
    assert [(t.parent, t.child) for t in recorded] == [('odom', 'base_footprint')] * 10
    assert 'recorded transforms: 20 replaced' in result.stdout
    assert ', 10 kept' in result.stdout


def test_every_message_is_converted_as_rosbags_convert_converts_it(tmp_path):
    """The type only the bag defines included, and a latched topic offered transient local."""
    write_ros1(tmp_path / 'run.bag', range(50))
    run(tmp_path / 'run.bag', tmp_path / 'out')
    convert([tmp_path / 'run.bag'], tmp_path / 'converted', 'mcap', 9, None, 'file', None,
            None, [], [], [], [])
    for topic, count in (('/joint_states', 50), ('/gripper/opening', 10)):
        copied = messages(tmp_path / 'out', topic)
        assert len(copied) == count
        assert copied == messages(tmp_path / 'converted', topic)
    with Reader(tmp_path / 'out') as reader:
        (gripper,) = [c for c in reader.connections if c.topic == '/gripper/opening']
        assert gripper.msgtype == GRIPPER_TYPE
        assert [q.durability.name for q in gripper.ext.offered_qos_profiles] == \
            ['TRANSIENT_LOCAL']
        (_, _, data), *_ = reader.messages([gripper])
        # The output's own definition reads it back.
        store = get_typestore(Stores.EMPTY)
        store.register(get_types_from_msg(gripper.msgdef.data, GRIPPER_TYPE))
        opening = store.deserialize_cdr(data, GRIPPER_TYPE)
        assert (opening.width, opening.fingers) == (0.0, ['left', 'right'])


@pytest.mark.parametrize('second_process', [False, True], ids=['one-process', 'writer-process'])
def test_a_message_that_cannot_be_converted_is_named_and_nothing_is_written(tmp_path,
                                                                          second_process):
    # On a topic only copied: with a writer process, that process reads it, not the run.
    writer = Writer1(tmp_path / 'run.bag')
    writer.open()
    text, md5 = ros1_definition('sensor_msgs/msg/JointState')
    joints = writer.add_connection('/joint_states', 'sensor_msgs/msg/JointState', msgdef=text,
                                   md5sum=md5)
    text, md5 = ros1_definition('std_msgs/msg/String')
    notes = writer.add_connection('/notes', 'std_msgs/msg/String', msgdef=text, md5sum=md5)
    for k in range(50):
        ns = START_NS + k * 20_000_000
        writer.write(joints, ns, bytes(ROS1.serialize_ros1(joint_state(ns, k),
                                                           'sensor_msgs/msg/JointState')))
    writer.write(notes, START_NS + 500_000_000, b'\x01')  # not even a string's length
    writer.close()
    script = ('import sys\n'
              'from urdf_state_publisher.recorded.run import run_bag, RunOptions\n'
              'bag, out, description, second_process = sys.argv[1:]\n'
              'summary = run_bag(bag, out, RunOptions(description=(description,), live=False,\n'
              '                  writer_process=second_process == "True"))\n'
              'print(summary.status, summary.error)\n')
    result = subprocess.run([sys.executable, '-c', script, str(tmp_path / 'run.bag'),
                             str(tmp_path / 'out'), str(SAMPLE_URDF), str(second_process)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    [line] = result.stdout.splitlines()
    assert line.startswith(f'1 {tmp_path / "run.bag"}: the message on /notes at log time '
                           f'{START_NS + 500_000_000} ns is not a std_msgs/msg/String')
    assert sorted(p.name for p in tmp_path.iterdir()) == ['run.bag']


def ros1_records(data: bytes | bytearray, offset: int, end: int):
    """(offset, header fields, data offset, data length) of each record in data[offset:end].

    Read by the ROS bag format 2.0: a record is its header's length (u32), its fields (each a
    u32 length and `name=value`), its data's length (u32) and its data.
    """
    while offset < end:
        header_length = struct.unpack_from('<I', data, offset)[0]
        fields, at = {}, offset + 4
        while at < offset + 4 + header_length:
            length = struct.unpack_from('<I', data, at)[0]
            name, _, value = bytes(data[at + 4:at + 4 + length]).partition(b'=')
            fields[name.decode()] = value
            at += 4 + length
        data_length = struct.unpack_from('<I', data, at)[0]
        yield offset, fields, at + 4, data_length
        offset = at + 4 + data_length


@pytest.mark.parametrize('jobs', ['1', '2'], ids=['one-process', 'writer-process'])
def test_a_recording_damaged_inside_is_one_line_and_nothing_written(tmp_path, jobs):
    # The header length of a message record in the first chunk set past the file's end: the
    # bag opens (its index is whole), and the damage is met while its messages are read.
    bag = tmp_path / 'run.bag'
    write_ros1(bag, range(100), extra=False)
    data = bytearray(bag.read_bytes())
    start = data.index(b'\n') + 1  # past '#ROSBAG V2.0'
    _, chunk, inside, length = next(record for record in ros1_records(data, start, len(data))
                                    if record[1]['op'] == b'\x05')
    assert chunk['compression'] == b'none'
    messages = [offset for offset, fields, _, _ in ros1_records(data, inside, inside + length)
                if fields['op'] == b'\x02']
    struct.pack_into('<I', data, messages[40], 0x7fff_ffff)
    bag.write_bytes(bytes(data))
    line = error_line(subprocess.run(
        [sys.executable, '-m', 'urdf_state_publisher.recorded.command', str(bag),
         str(tmp_path / 'out'),
         '--description', str(SAMPLE_URDF), '--jobs', jobs],
        capture_output=True, text=True, timeout=300))
    assert line.startswith(f'urdf_state_publisher_bag: {bag}: damaged: cannot read ')
    assert line.endswith('nothing is written from a recording that cannot be read whole')
    assert sorted(p.name for p in tmp_path.iterdir()) == ['run.bag']


def test_a_split_recording_is_read_as_one(tmp_path):
    folder = tmp_path / 'split'
    folder.mkdir()
    write_ros1(folder / 'run_0.bag', range(0, 40))
    write_ros1(folder / 'run_1.bag', range(40, 100))
    write_ros2(tmp_path / 'ros2', range(100))
    run(folder, tmp_path / 'out')
    run(tmp_path / 'ros2', tmp_path / 'from_ros2')
    computed = [(log_ns, data) for log_ns, data in messages(tmp_path / 'out', '/tf')
                if read_tf_message(data)[0].child != 'base_footprint']  # not the recorded
    assert len(computed) > 30  # at most 20 Hz of 2 s of 50 Hz states
    assert computed == messages(tmp_path / 'from_ros2', '/tf')
    assert len(messages(tmp_path / 'out', '/joint_states')) == 100
    assert len(messages(tmp_path / 'out', '/gripper/opening')) == 20
    log_times = [log_ns for log_ns, _ in messages(tmp_path / 'out', '/joint_states')]
    assert log_times == sorted(log_times)


def test_a_ros1_input_is_written_for_humble_by_default_and_humble_reads_it(tmp_path):
    write_ros1(tmp_path / 'run.bag', range(50))
    run(tmp_path / 'run.bag', tmp_path / 'out')
    information = metadata(tmp_path / 'out')
    assert (information['version'], information['storage_identifier']) == (5, 'sqlite3')
    assert information['compression_mode'] == ''  # ROS 1's chunk compression: none in rosbag2
    read = humble_rules.read_metadata(tmp_path / 'out')
    assert read.message_count > 50  # the 50 states, and their /tf, the openings, ...
    assert read.topics['/gripper/opening'].qos[0]['durability'] == 1  # transient local
    assert read.topics['/tf_static'].qos[0]['durability'] == 1
    assert humble_rules.read_messages(tmp_path / 'out', read) == read.message_count
    # Newer distros read it too: rosbags, which follows them, reads every message.
    with Reader(tmp_path / 'out') as reader:
        assert sum(1 for _ in reader.messages()) == read.message_count


@pytest.mark.parametrize('distro', ['jazzy', 'kilted', 'lyrical'])
def test_an_output_for_a_newer_distro_is_its_version(tmp_path, distro):
    write_ros1(tmp_path / 'run.bag', range(10))
    run(tmp_path / 'run.bag', tmp_path / 'out', '--distro', distro)
    information = metadata(tmp_path / 'out')
    assert (information['version'], information['ros_distro']) == (9, distro)
    with pytest.raises(humble_rules.HumbleCannotRead):
        humble_rules.read_metadata(tmp_path / 'out')


def test_a_rosbag2_input_is_written_for_its_distro_by_default(tmp_path):
    write_ros2(tmp_path / 'ros2', range(10))  # version 9: Jazzy's
    run(tmp_path / 'ros2', tmp_path / 'out')
    assert metadata(tmp_path / 'out')['version'] == 9
    run(tmp_path / 'out', tmp_path / 'again', '--distro', 'humble')
    run(tmp_path / 'again', tmp_path / 'third')  # a Humble bag in: a Humble bag out
    assert metadata(tmp_path / 'third')['version'] == 5
    humble_rules.read_metadata(tmp_path / 'third')


def type_hashes(bag: Path) -> dict[str, str]:
    """Each type's RIHS01 hash, as the sqlite3 file keeps it (Humble's metadata does not)."""
    [database] = bag.glob('*.db3')
    with sqlite3.connect(database) as db:
        found = dict(db.execute('SELECT topic_type, type_description_hash '
                                'FROM message_definitions'))
    db.close()
    return found


def test_a_humble_output_of_a_ros1_bag_is_itself_an_input(tmp_path):
    # Processed again (a calibration fixed): Humble's metadata has no type hashes, and the
    # gripper's type is no ROS 2 type; its definition, written with it, is what is copied.
    write_ros1(tmp_path / 'run.bag', range(20))
    run(tmp_path / 'run.bag', tmp_path / 'out')
    run(tmp_path / 'out', tmp_path / 'again')
    with Reader(tmp_path / 'out') as first, Reader(tmp_path / 'again') as second:
        [before] = [c for c in first.connections if c.topic == '/gripper/opening']
        [after] = [c for c in second.connections if c.topic == '/gripper/opening']
    assert after.msgdef.data == before.msgdef.data != ''
    # The hash made from the text is the one rosbags made from the types the first time.
    written = type_hashes(tmp_path / 'out')[GRIPPER_TYPE]
    assert type_hashes(tmp_path / 'again')[GRIPPER_TYPE] == written
    assert written.startswith('RIHS01_')
    assert messages(tmp_path / 'again', '/gripper/opening') == messages(
        tmp_path / 'out', '/gripper/opening') != []


ZSTD_FRAME = b'\x28\xb5\x2f\xfd'  # RFC 8878: the magic number every zstd frame starts with


def stored_bytes(bag: Path, information: dict) -> list[bytes]:
    """What the storage holds: each file's first bytes, each stored message's for sqlite3."""
    files = [bag / name for name in information['relative_file_paths']]
    held = [file.read_bytes()[:4] for file in files]
    if information['storage_identifier'] == 'sqlite3' and not files[0].name.endswith('.zstd'):
        with sqlite3.connect(files[0]) as database:
            held += [row[0][:4] for row in database.execute('SELECT data FROM messages')]
        database.close()
    return held


def size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.iterdir() if p.name != 'metadata.yaml')


def all_messages(path: Path) -> dict[str, list[tuple[int, bytes]]]:
    with Reader(path) as reader:
        found: dict[str, list] = {}
        for connection, log_ns, data in reader.messages():
            found.setdefault(connection.topic, []).append((log_ns, bytes(data)))
        return found


@pytest.mark.parametrize('storage', ['mcap', 'sqlite3'])
@pytest.mark.parametrize('compression', ['message', 'file'])
def test_a_compressed_input_is_written_compressed_as_it_was(tmp_path, compression, storage):
    write_ros2(tmp_path / 'in', range(20), storage, compression)
    run(tmp_path / 'in', tmp_path / 'out')
    run(tmp_path / 'in', tmp_path / 'plain', '--compression', 'none')
    out, plain = metadata(tmp_path / 'out'), metadata(tmp_path / 'plain')
    assert (out['compression_mode'], out['compression_format']) == (compression, 'zstd')
    assert (plain['compression_mode'], plain['compression_format']) == ('', '')
    # Compressed indeed, where rosbag2 looks for it: each file (file), each message (message).
    if compression == 'file':
        extension = 'mcap' if storage == 'mcap' else 'db3'
        assert out['relative_file_paths'] == [f'out.{extension}.zstd']
        assert [f['path'] for f in out['files']] == out['relative_file_paths']
        assert stored_bytes(tmp_path / 'out', out) == [ZSTD_FRAME]
    elif storage == 'sqlite3':
        held = stored_bytes(tmp_path / 'out', out)[1:]
        assert len(held) == out['message_count'] and set(held) == {ZSTD_FRAME}
    assert ZSTD_FRAME not in stored_bytes(tmp_path / 'plain', plain)
    # (An MCAP's messages are inside its records: there, smaller; the description compresses.)
    assert size(tmp_path / 'out') < size(tmp_path / 'plain')
    # The same messages either way, and the recorded ones as recorded.
    found = all_messages(tmp_path / 'out')
    assert found == all_messages(tmp_path / 'plain')
    assert found['/tf'] and len(found['/joint_states']) == 20
    assert found['/joint_states'] == messages(tmp_path / 'in', '/joint_states')


def test_a_file_compressed_output_for_humble_is_humbles_once_decompressed(tmp_path):
    write_ros2(tmp_path / 'in', range(20), 'sqlite3', 'file')
    run(tmp_path / 'in', tmp_path / 'out', '--distro', 'humble')
    read = humble_rules.read_metadata(tmp_path / 'out')
    [name] = read.files
    # rosbag2's compression reader decompresses each file beside it and reads that.
    (tmp_path / 'out' / name.removesuffix('.zstd')).write_bytes(
        zstd.decompress((tmp_path / 'out' / name).read_bytes()))
    read.files = [name.removesuffix('.zstd')]
    assert humble_rules.read_messages(tmp_path / 'out', read) == read.message_count > 20


@pytest.mark.parametrize('compression', ['message', 'file'])
def test_a_recording_compressed_by_file_is_read_by_one_process(tmp_path, compression):
    write_ros2(tmp_path / 'in', range(5), 'sqlite3', compression)
    plan = plan_run(tmp_path / 'in', tmp_path / 'out', RunOptions(
        description=(str(SAMPLE_URDF),), writer_process=True))
    try:
        # Decompressed whole as it is opened: a second reader would do it again.
        assert plan.options.writer_process is (compression != 'file')
    finally:
        plan.input.close()


JOINT_STATE_STORE = get_typestore(Stores.EMPTY)
JOINT_STATE_STORE.register({**{k: v for k, v in ROS1.fielddefs.items()
                               if k in ('sensor_msgs/msg/JointState',
                                        'builtin_interfaces/msg/Time')},
                            'std_msgs/msg/Header': ROS2.fielddefs['std_msgs/msg/Header']})
NAMES = st.lists(st.text(max_size=7), max_size=5)
NUMBERS = st.lists(st.floats(allow_nan=False), max_size=5)


@settings(max_examples=300, deadline=None, database=None)
@given(st.lists(st.tuples(st.text(max_size=5), NAMES, NUMBERS, NUMBERS, NUMBERS),
                min_size=1, max_size=6), st.data())
def test_joint_states_convert_to_the_bytes_rosbags_writes(states, data):
    """Names repeated and changed from message to message, as the converter keeps them."""
    converter = JointStateConverter()
    for k, (frame, names, position, velocity, effort) in enumerate(states):
        if k and data.draw(st.booleans()):
            names = states[k - 1][1]  # the same names as the last message: kept ones reused
        message = ROS1.types['sensor_msgs/msg/JointState'](
            header=ROS1.types['std_msgs/msg/Header'](
                seq=k, stamp=stamp(START_NS + k * 12_345_678).stamp, frame_id=frame),
            name=names, position=np.array(position), velocity=np.array(velocity),
            effort=np.array(effort))
        raw = bytes(ROS1.serialize_ros1(message, 'sensor_msgs/msg/JointState'))
        expected = bytes(JOINT_STATE_STORE.ros1_to_cdr(raw, 'sensor_msgs/msg/JointState'))
        assert converter(raw) == expected
