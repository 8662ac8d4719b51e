"""urdf_state_publisher_bag on recordings with types of their own, as Humble's rosbag2 writes them.

Humble's rosbag2 records no message definitions: its metadata is version 5 (rosbag2_storage's
bag_metadata.hpp on humble), its sqlite3 file schema 3 (sqlite_storage.hpp, kDBSchemaVersion_,
with no message_definitions table), and its MCAP storage writes, for a type whose definition
it cannot find, a schema of the type's name with an empty encoding and no data
(rosbag2_storage_mcap's MCAPStorage::create_topic on humble, on DefinitionNotFoundError). The
bags here are written by hand to those statements, not by rosbags nor by the command.

What the command must do with them: copy every topic it does not read byte for byte, whatever
its type; write a type without a definition as rosbag2 writes one it cannot find
(rosbag2_storage's MessageDefinition::empty_message_definition_for: encoding '', text '', hash
''); refuse, in one line, a topic it reads that is recorded as a type it cannot read.
"""

from __future__ import annotations

from io import BytesIO
from pathlib import Path
import sqlite3
import struct
import subprocess
import sys

from bag_fixtures import error_line
from conftest import SAMPLE_URDF
import numpy as np
import pytest
from rosbags.interfaces import MessageDefinitionFormat
from rosbags.rosbag2 import Reader
from rosbags.typesys import get_types_from_msg, get_typestore, Stores
from test_bag_runs import BILLION, JOINTS, START_NS, STORE, T  # the bag tests' recordings
import yaml

pytestmark = pytest.mark.ros_free  # also runs where no ROS 2 is installed

# A type of a simulator's that no typestore of rosbags knows, as a TurtleBot3 in Gazebo has it.
UNKNOWN = 'gazebo_msgs/msg/PerformanceMetrics'
# Humble's QoS string for a reliable volatile publisher (rosbag2_transport's qos.cpp: integers).
HUMBLE_QOS = ('- history: 3\n  depth: 0\n  reliability: 1\n  durability: 2\n  deadline:\n'
              '    sec: 2147483647\n    nsec: 4294967295\n  lifespan:\n    sec: 2147483647\n'
              '    nsec: 4294967295\n  liveliness: 1\n  liveliness_lease_duration:\n'
              '    sec: 2147483647\n    nsec: 4294967295\n  avoid_ros_namespace_conventions: '
              'false')
# A publisher's RIHS01 hash as an Iron recorder stores it (any SHA-256 in hex).
IRON_HASH = 'RIHS01_' + 'ab' * 32


def joint_state(ns: int) -> bytes:
    return bytes(STORE.serialize_cdr(T['sensor_msgs/msg/JointState'](
        header=T['std_msgs/msg/Header'](stamp=T['builtin_interfaces/msg/Time'](
            sec=ns // BILLION, nanosec=ns % BILLION), frame_id=''),
        name=list(JOINTS), position=np.full(len(JOINTS), 0.02), velocity=np.array([]),
        effort=np.array([])), 'sensor_msgs/msg/JointState'))


def recording(unknown_topic: str = '/gazebo/performance_metrics'
              ) -> list[tuple[str, str, int, bytes]]:
    """(topic, type, log time, bytes): JointStates at 100 Hz and a type nobody here knows."""
    messages = [('/joint_states', 'sensor_msgs/msg/JointState', START_NS + k * 10_000_000,
                 joint_state(START_NS + k * 10_000_000)) for k in range(100)]
    # CDR of no type known here: an encapsulation header, then bytes that differ per message.
    messages += [(unknown_topic, UNKNOWN, START_NS + k * 100_000_000 + 5,
                  b'\x00\x01\x00\x00' + bytes(range(k, k + 13))) for k in range(10)]
    return sorted(messages, key=lambda m: m[2])


def write_metadata(path: Path, storage: str, file: str, messages, version: int = 5) -> None:
    """metadata.yaml as Humble's rosbag2 writes it: version 5, QoS a string, no hash.

    Iron's (version 7, yaml.hpp on iron) adds each topic's type_description_hash: IRON_HASH,
    as its recorder has it from the publishers.
    """
    topics = list(dict.fromkeys((topic, msgtype) for topic, msgtype, _, _ in messages))
    start = min(m[2] for m in messages)
    duration = max(m[2] for m in messages) - start
    hashes = {'type_description_hash': IRON_HASH} if version >= 7 else {}
    information = {
        'version': version, 'storage_identifier': storage,
        'duration': {'nanoseconds': duration},
        'starting_time': {'nanoseconds_since_epoch': start}, 'message_count': len(messages),
        'topics_with_message_count': [
            {'topic_metadata': {'name': topic, 'type': msgtype, 'serialization_format': 'cdr',
                                'offered_qos_profiles': HUMBLE_QOS, **hashes},
             'message_count': sum(1 for m in messages if m[0] == topic)}
            for topic, msgtype in topics],
        'compression_format': '', 'compression_mode': '', 'relative_file_paths': [file],
        'files': [{'path': file, 'starting_time': {'nanoseconds_since_epoch': start},
                   'duration': {'nanoseconds': duration}, 'message_count': len(messages)}]}
    if version < 5:  # Galactic's version 4 lists no files (yaml.hpp: `files` from version 5)
        del information['files']
    (path / 'metadata.yaml').write_text(
        yaml.safe_dump({'rosbag2_bagfile_information': information}, sort_keys=False))


def write_humble_sqlite3(path: Path, messages, version: int = 5) -> Path:
    """A bag as Humble's sqlite3 storage writes it (its SqliteStorage::initialize, schema 3)."""
    path.mkdir()
    database = sqlite3.connect(path / 'run_0.db3')
    database.executescript("""
        CREATE TABLE schema(schema_version INTEGER PRIMARY KEY, ros_distro TEXT NOT NULL);
        CREATE TABLE metadata(id INTEGER PRIMARY KEY, metadata_version INTEGER NOT NULL,
                              metadata TEXT NOT NULL);
        CREATE TABLE topics(id INTEGER PRIMARY KEY, name TEXT NOT NULL, type TEXT NOT NULL,
                            serialization_format TEXT NOT NULL,
                            offered_qos_profiles TEXT NOT NULL);
        CREATE TABLE messages(id INTEGER PRIMARY KEY, topic_id INTEGER NOT NULL,
                              timestamp INTEGER NOT NULL, data BLOB NOT NULL);
        CREATE INDEX timestamp_idx ON messages (timestamp ASC);
        INSERT INTO schema (schema_version, ros_distro) VALUES (3, 'humble');
    """)
    ids: dict[str, int] = {}
    for topic, msgtype, log_ns, data in messages:
        if topic not in ids:
            ids[topic] = len(ids) + 1
            database.execute('INSERT INTO topics VALUES (?, ?, ?, ?, ?)',
                             (ids[topic], topic, msgtype, 'cdr', HUMBLE_QOS))
        database.execute('INSERT INTO messages (topic_id, timestamp, data) VALUES (?, ?, ?)',
                         (ids[topic], log_ns, data))
    database.commit()
    database.close()
    write_metadata(path, 'sqlite3', 'run_0.db3', messages, version)
    return path


def _record(out: BytesIO, opcode: int, content: bytes) -> None:
    out.write(struct.pack('<BQ', opcode, len(content)) + content)


def _string(text: str) -> bytes:
    data = text.encode()
    return struct.pack('<I', len(data)) + data


def write_humble_mcap(path: Path, messages, encoding: str = '', version: int = 5,
                      definitions: dict[str, tuple[str, str]] | None = None) -> Path:
    """A bag as Humble's MCAP storage writes it, unindexed (the MCAP specification's records).

    Each type's schema has no data and the encoding `encoding` ('' where the definition was not
    found; 'unknown' where the type name was not understood); each channel its offered QoS as
    Humble's string. `version` 7: as Iron writes it (its MCAPStorage::create_topic writes the
    definition rosbag2_cpp gives, empty of encoding '' for a type it cannot find).
    `definitions`: the encoding and text of the types whose definitions were found.
    """
    path.mkdir()
    out = BytesIO()
    out.write(b'\x89MCAP0\r\n')
    _record(out, 0x01, _string('ros2') + _string('rosbag2'))  # header
    schemas: dict[str, int] = {}
    channels: dict[str, int] = {}
    sequence = 0
    for topic, msgtype, log_ns, data in messages:
        if msgtype not in schemas:
            schemas[msgtype] = len(schemas) + 1
            found, text = (definitions or {}).get(msgtype, (encoding, ''))
            _record(out, 0x03, struct.pack('<H', schemas[msgtype]) + _string(msgtype)
                    + _string(found) + _string(text))
        if topic not in channels:
            channels[topic] = len(channels) + 1
            metadata = _string('offered_qos_profiles') + _string(HUMBLE_QOS)
            _record(out, 0x04, struct.pack('<HH', channels[topic], schemas[msgtype])
                    + _string(topic) + _string('cdr') + struct.pack('<I', len(metadata))
                    + metadata)
        sequence += 1
        _record(out, 0x05, struct.pack('<HIQQ', channels[topic], sequence, log_ns, log_ns)
                + data)
    _record(out, 0x0F, struct.pack('<I', 0))  # data end, no CRC
    _record(out, 0x02, struct.pack('<QQI', 0, 0, 0))  # footer: no summary
    out.write(b'\x89MCAP0\r\n')
    (path / 'run_0.mcap').write_bytes(out.getvalue())
    write_metadata(path, 'mcap', 'run_0.mcap', messages, version)
    return path


WRITE_HUMBLE = {'sqlite3': write_humble_sqlite3, 'mcap': write_humble_mcap}


def run(*arguments) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, '-m', 'urdf_state_publisher.recorded.command',
                           *map(str, arguments)], capture_output=True, text=True, timeout=300)


def read_output(path: Path) -> tuple[list, dict]:
    reader = Reader(path)
    reader.open()
    try:
        return ([(c.topic, t, bytes(raw)) for c, t, raw in reader.messages()],
                {c.topic: c for c in reader.connections})
    finally:
        reader.close()


def sent(messages, name: str = '/gazebo/performance_metrics') -> list[tuple[int, bytes]]:
    """The recording's messages on `name` (the type nobody knows): log time, bytes."""
    return [(log_ns, data) for topic, _, log_ns, data in messages if topic == name]


def copied(output, name: str = '/gazebo/performance_metrics') -> list[tuple[int, bytes]]:
    """The output's messages on `name`: log time, bytes."""
    return [(log_ns, data) for topic, log_ns, data in output if topic == name]


@pytest.mark.parametrize('storage', ['sqlite3', 'mcap'])
@pytest.mark.parametrize('distro', ['humble', 'jazzy', 'kilted'])
def test_a_humble_bag_with_a_type_nobody_knows_is_converted_and_that_topic_copied(
        tmp_path, storage, distro):
    messages = recording()
    bag = WRITE_HUMBLE[storage](tmp_path / 'humble', messages)
    # The output written by the run itself (one job) and by its writer process (two).
    jobs = '1' if distro == 'kilted' else '2'
    result = run(bag, tmp_path / 'out', '--description', SAMPLE_URDF, '--distro', distro,
                 '--jobs', jobs)
    assert result.returncode == 0, result.stderr
    output, connections = read_output(tmp_path / 'out')
    # Byte for byte, at their log times, whatever its type.
    assert copied(output) == sent(messages)
    assert any(topic == '/tf' for topic, _, _ in output)  # and the run computed
    unknown = connections['/gazebo/performance_metrics']
    assert unknown.msgtype == UNKNOWN
    # No definition: rosbags reads an MCAP schema of encoding '' as NONE (a 'ros2msg' one, even
    # empty, as MSG), and a sqlite3 type without a message_definitions row as NONE too.
    assert unknown.msgdef.format is MessageDefinitionFormat.NONE
    assert unknown.msgdef.data == ''
    information = yaml.safe_load((tmp_path / 'out' / 'metadata.yaml').read_text())[
        'rosbag2_bagfile_information']
    [metadata] = [t['topic_metadata'] for t in information['topics_with_message_count']
                  if t['topic_metadata']['name'] == '/gazebo/performance_metrics']
    if distro == 'humble':  # Humble's version 5 has no hashes (yaml.hpp: from version 7)
        assert information['version'] == 5
        assert 'type_description_hash' not in metadata
    else:  # the topic's hash: '' where none was recorded (yaml.hpp decodes a v5 topic so)
        assert information['version'] == 9
        assert metadata['type_description_hash'] == ''
    # A type the store knows is given its definition, as rosbag2 gives an installed type's.
    assert connections['/joint_states'].msgdef.data == STORE.generate_msgdef(
        'sensor_msgs/msg/JointState', ros_version=2)[0]
    if storage == 'sqlite3':
        [database] = (tmp_path / 'out').glob('*.db3')
        with sqlite3.connect(database) as db:
            topics = db.execute('SELECT type_description_hash FROM topics WHERE name = ?',
                                ('/gazebo/performance_metrics',)).fetchall()
            definitions = db.execute('SELECT * FROM message_definitions WHERE topic_type = ?',
                                     (UNKNOWN,)).fetchall()
        db.close()
        assert topics == [('',)]
        assert definitions == []


@pytest.mark.parametrize('storage', ['sqlite3', 'mcap'])
def test_a_topic_the_command_reads_recorded_as_another_type_is_one_line(tmp_path, storage):
    bag = WRITE_HUMBLE[storage](tmp_path / 'humble', recording('/tf'))
    result = run(bag, tmp_path / 'out', '--description', SAMPLE_URDF)
    line = error_line(result)
    assert '/tf' in line and UNKNOWN in line and 'tf2_msgs/msg/TFMessage' in line, line
    assert not (tmp_path / 'out').exists()
    # What it says to do: the command's /tf elsewhere, the recorded one copied as it is.
    assert '-r /tf:=/another/name' in line, line
    result = run(bag, tmp_path / 'out', '--description', SAMPLE_URDF, '--ros-args', '-r',
                 '/tf:=/another/name')
    assert result.returncode == 0, result.stderr
    output, connections = read_output(tmp_path / 'out')
    assert connections['/tf'].msgtype == UNKNOWN
    assert copied(output, '/tf') == sent(recording('/tf'), '/tf')
    assert connections['/another/name'].msgtype == 'tf2_msgs/msg/TFMessage'


def test_joint_states_recorded_as_another_type_is_one_line_naming_source_list(tmp_path):
    messages = [('/joint_states', UNKNOWN, START_NS + k, b'\x00\x01\x00\x00' + bytes(8))
                for k in range(5)]
    bag = write_humble_sqlite3(tmp_path / 'humble', messages)
    line = error_line(run(bag, tmp_path / 'out', '--description', SAMPLE_URDF))
    assert '/joint_states' in line and UNKNOWN in line and 'source_list' in line, line


def test_an_iron_bag_with_a_type_nobody_knows_keeps_its_hash(tmp_path):
    messages = recording()
    bag = write_humble_mcap(tmp_path / 'iron', messages, version=7)
    result = run(bag, tmp_path / 'out', '--description', SAMPLE_URDF, '--distro', 'jazzy')
    assert result.returncode == 0, result.stderr
    output, connections = read_output(tmp_path / 'out')
    assert copied(output) == sent(messages)
    assert connections['/gazebo/performance_metrics'].msgdef.format is \
        MessageDefinitionFormat.NONE
    # rosbag2 keeps a topic's recorded hash (TopicMetadata.type_description_hash), whatever
    # its definition.
    assert connections['/gazebo/performance_metrics'].digest == IRON_HASH


def test_a_definition_encoding_rosbags_cannot_read_is_one_line(tmp_path):
    # An Iron sqlite3 bag: rosbag2 stores a type whose definition it cannot find as a
    # message_definitions row of encoding '' (SqliteStorage::create_topic, on iron).
    messages = recording()
    bag = write_humble_sqlite3(tmp_path / 'iron', messages)
    [database] = bag.glob('*.db3')
    with sqlite3.connect(database) as db:
        db.executescript("""
            UPDATE schema SET schema_version = 4;
            ALTER TABLE topics ADD COLUMN type_description_hash TEXT NOT NULL DEFAULT '';
            CREATE TABLE message_definitions(id INTEGER PRIMARY KEY, topic_type TEXT NOT NULL,
                encoding TEXT NOT NULL, encoded_message_definition TEXT NOT NULL,
                type_description_hash TEXT NOT NULL);
        """)
        db.execute('INSERT INTO message_definitions (topic_type, encoding, '
                   'encoded_message_definition, type_description_hash) VALUES (?, ?, ?, ?)',
                   (UNKNOWN, '', '', ''))
    db.close()
    line = error_line(run(bag, tmp_path / 'out', '--description', SAMPLE_URDF))
    assert str(bag) in line and "encoding ''" in line and 'ros2 bag convert' in line, line
    assert not (tmp_path / 'out').exists()


@pytest.mark.parametrize('storage', ['sqlite3', 'mcap'])
def test_an_output_with_a_type_nobody_knows_is_itself_an_input(tmp_path, storage):
    messages = recording()
    bag = WRITE_HUMBLE[storage](tmp_path / 'humble', messages)
    first = run(bag, tmp_path / 'first', '--description', SAMPLE_URDF, '--distro', 'jazzy')
    assert first.returncode == 0, first.stderr
    second = run(tmp_path / 'first', tmp_path / 'second', '--description', SAMPLE_URDF)
    assert second.returncode == 0, second.stderr
    output, connections = read_output(tmp_path / 'second')
    assert copied(output) == sent(messages)
    assert connections['/gazebo/performance_metrics'].msgdef.data == ''


def test_a_humble_mcaps_own_definitions_are_copied_as_recorded(tmp_path):
    # Humble's MCAP storage writes the definitions it finds: .msg text (ros2msg), or IDL
    # (ros2idl, rosbag2's IDL files concatenated) for a type defined only in IDL.
    own_msg = ('my_robot_msgs/msg/Status', 'int32 level\nstring text\n')
    own_idl = ('my_robot_msgs/msg/Pose2', '=' * 80 + '\nIDL: my_robot_msgs/msg/Pose2\n'
               'module my_robot_msgs { module msg { struct Pose2 { double x; }; }; };\n')
    messages = sorted([*recording(), ('/status', own_msg[0], START_NS + 7, b'\x00\x01\x00\x00'),
                       ('/pose2', own_idl[0], START_NS + 8, b'\x00\x01\x00\x00' + bytes(8))],
                      key=lambda m: m[2])
    bag = write_humble_mcap(tmp_path / 'humble', messages, definitions={
        own_msg[0]: ('ros2msg', own_msg[1]), own_idl[0]: ('ros2idl', own_idl[1])})
    result = run(bag, tmp_path / 'out', '--description', SAMPLE_URDF, '--distro', 'jazzy')
    assert result.returncode == 0, result.stderr
    output, connections = read_output(tmp_path / 'out')
    assert copied(output, '/pose2') == sent(messages, '/pose2')
    assert connections['/status'].msgdef == (MessageDefinitionFormat.MSG, own_msg[1])
    assert connections['/pose2'].msgdef == (MessageDefinitionFormat.IDL, own_idl[1])
    # Its hash: that of the .msg text, as a store of it alone hashes it; none for the IDL.
    store = get_typestore(Stores.EMPTY)
    store.register(get_types_from_msg(own_msg[1], own_msg[0]))
    assert connections['/status'].digest == store.hash_rihs01(own_msg[0])
    assert connections['/pose2'].digest == ''


def test_a_version_4_bag_with_a_type_nobody_knows_is_converted_for_humble(tmp_path):
    messages = recording()
    bag = write_humble_sqlite3(tmp_path / 'galactic', messages, version=4)
    result = run(bag, tmp_path / 'out', '--description', SAMPLE_URDF)
    assert result.returncode == 0, result.stderr
    output, connections = read_output(tmp_path / 'out')
    assert copied(output) == sent(messages)
    # Written for the oldest distro that reads it: Humble's version 5.
    information = yaml.safe_load((tmp_path / 'out' / 'metadata.yaml').read_text())[
        'rosbag2_bagfile_information']
    assert information['version'] == 5
    assert connections['/gazebo/performance_metrics'].msgdef.data == ''


def test_an_mcap_schema_of_encoding_unknown_is_one_line(tmp_path):
    # Humble's MCAP storage writes 'unknown' for a type name its definition search does not
    # understand (message_definition_cache's Format::UNKNOWN); rosbags cannot read it.
    bag = write_humble_mcap(tmp_path / 'humble', recording(), encoding='unknown')
    line = error_line(run(bag, tmp_path / 'out', '--description', SAMPLE_URDF))
    assert str(bag) in line and "encoding 'unknown'" in line, line
