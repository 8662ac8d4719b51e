"""The bag urdf_state_publisher_bag writes, in the format of the distro that will play it.

rosbag2 reads the bags of older distros but not always those of newer ones, and has no tool to
turn a newer bag into an older one (ros2/rosbag2#1895). The output is written with rosbags in
the metadata version of the distro asked for (rosbag2_storage's bag_metadata.hpp on each
branch: Humble 5, Jazzy, Kilted and Rolling 9), and its `ros_distro` is that distro's.

Humble's rosbag2 (its metadata_io.cpp and rosbag2_transport's qos.cpp) reads
`offered_qos_profiles` only as a YAML string of a list whose enums are integers, with every
field present, and knows no `best_available` policy; a version 9 bag, whose profiles are a YAML
list, fails there ("bad conversion"). A Humble output is written as version 8 (rosbags' oldest:
profiles a string of integers), then its metadata.yaml rewritten as version 5, without what
Humble does not know (custom_data, ros_distro, type_description_hash) and with `best_available`
(Jazzy on) read as the system default. Its sqlite3 file (schema 4) is read by Humble by named
columns, which ignore what schema 3 lacks. rosbags is imported only when a bag is written.

The types the command writes itself are defined here (OUTPUT_TYPES), as rosbag2 records them:
loading rosbags' store of a whole distro costs a process as much as copying thousands of
messages.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
import shutil
import sqlite3
import sys
from typing import Any

import yaml

__all__ = ['add_connections', 'BagOutputError', 'COMPRESSIONS', 'DISTROS', 'distro_of_version',
           'error_text', 'finish_output', 'HEADER', 'open_writer', 'OutputBag', 'OutputConnection',
           'OutputFormat', 'OUTPUT_TYPES', 'rosbag_qos']

# The metadata version each distro's `ros2 bag` writes, oldest distro first.
METADATA_VERSIONS = {'humble': 5, 'jazzy': 9, 'kilted': 9, 'lyrical': 9}
DISTROS = tuple(METADATA_VERSIONS)
# An output's zstd compression: none, each message, or each file once closed; every distro's
# rosbag2 reads all three (rosbag2_compression_zstd).
COMPRESSIONS = ('none', 'message', 'file')
# The oldest version rosbags writes: Humble's bags are made from it.
_OLDEST_WRITTEN = 8
# Humble's largest value of each QoS policy (rmw/types.h on humble); Jazzy added best_available
# (reliability and durability 4, liveliness 5), read there as 0, the system default.
_HUMBLE_LARGEST = {'history': 3, 'reliability': 3, 'durability': 3, 'liveliness': 4}
# The types the command writes and those they hold, as their .msg files define them (the same
# on every supported distro).
_TIME = 'int32 sec\nuint32 nanosec'
HEADER = 'builtin_interfaces/Time stamp\nstring frame_id'
_VECTOR3 = 'float64 x\nfloat64 y\nfloat64 z'
_QUATERNION = 'float64 x\nfloat64 y\nfloat64 z\nfloat64 w'
_TRANSFORM = 'geometry_msgs/Vector3 translation\ngeometry_msgs/Quaternion rotation'
_TRANSFORM_STAMPED = ('std_msgs/Header header\nstring child_frame_id\n'
                      'geometry_msgs/Transform transform')
_KEY_VALUE = 'string key\nstring value'
_STATUS = ('byte OK=0\nbyte WARN=1\nbyte ERROR=2\nbyte STALE=3\nbyte level\nstring name\n'
           'string message\nstring hardware_id\ndiagnostic_msgs/KeyValue[] values')


def _recorded(definition: str, *held: tuple[str, str]) -> str:
    """A type's definition as rosbag2 records it: its own text, then each type it holds."""
    return '\n'.join([definition, *(f'{"=" * 80}\nMSG: {name}\n{text}' for name, text in held)]
                     ) + '\n'


# Each type the command writes: its definition as recorded, and its RIHS01 hash (the hash of
# its fields', and those of the types it holds, names and types; the same on every distro that
# records one). Stated, not made: rosbags makes them only from a typestore, whose parser and
# classes cost a process tens of milliseconds; the tests hold both to rosbags' Jazzy store.
OUTPUT_TYPES = {
    'tf2_msgs/msg/TFMessage': (
        _recorded('geometry_msgs/TransformStamped[] transforms',
                  ('geometry_msgs/TransformStamped', _TRANSFORM_STAMPED),
                  ('std_msgs/Header', HEADER), ('builtin_interfaces/Time', _TIME),
                  ('geometry_msgs/Transform', _TRANSFORM), ('geometry_msgs/Vector3', _VECTOR3),
                  ('geometry_msgs/Quaternion', _QUATERNION)),
        'RIHS01_e369d0f05a23ae52508854b66f6aa0437f3449d652e8cbf22d5abe85d020f087'),
    'diagnostic_msgs/msg/DiagnosticArray': (
        _recorded('std_msgs/Header header\ndiagnostic_msgs/DiagnosticStatus[] status',
                  ('std_msgs/Header', HEADER), ('builtin_interfaces/Time', _TIME),
                  ('diagnostic_msgs/DiagnosticStatus', _STATUS),
                  ('diagnostic_msgs/KeyValue', _KEY_VALUE)),
        'RIHS01_5a8a36efb05fb25070fa0fb3810290c0e6cd4862b54a8fb975a1ee8dc55a333e'),
    'std_msgs/msg/String': (
        _recorded('string data'),
        'RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18'),
    'sensor_msgs/msg/JointState': (
        _recorded('std_msgs/Header header\nstring[] name\nfloat64[] position\n'
                  'float64[] velocity\nfloat64[] effort',
                  ('std_msgs/Header', HEADER), ('builtin_interfaces/Time', _TIME)),
        'RIHS01_a13ee3a330e346c9d87b5aa18d24e11690752bd33a0350f11c5882bc9179260e'),
}


def distro_of_version(version: int) -> str:
    """The distro to write for, for an input of this metadata version.

    The oldest distro that writes the newest version not newer than the input's: the output
    then plays wherever the input did (Humble's for any older version).
    """
    newest = max((v for v in METADATA_VERSIONS.values() if v <= version),
                 default=METADATA_VERSIONS['humble'])
    return next(distro for distro, written in METADATA_VERSIONS.items() if written == newest)


@dataclass(frozen=True)
class OutputFormat:
    """What the output is written as."""

    distro: str  # the distro whose `ros2 bag` plays it (DISTROS)
    storage: str  # 'mcap' or 'sqlite3'
    compression: str  # zstd, as `ros2 bag record --compression-mode` has it: COMPRESSIONS


def open_writer(path: Path, output: OutputFormat) -> Any:
    """An open rosbags Writer for a bag of `output`.

    File compression is applied by finish_output, once the metadata is final.
    """
    from rosbags.rosbag2 import CompressionFormat, CompressionMode, StoragePlugin

    writer = _writer_class()(path, version=max(METADATA_VERSIONS[output.distro],
                                               _OLDEST_WRITTEN),
                             storage_plugin=StoragePlugin.MCAP
                             if output.storage == 'mcap' else StoragePlugin.SQLITE3)
    if output.compression == 'message':
        writer.set_compression(CompressionMode.MESSAGE, CompressionFormat.ZSTD)
    writer.open()
    return writer


@dataclass(frozen=True)
class OutputConnection:
    """One connection of the output, as rosbags' Writer.add_connection takes it."""

    topic: str
    msgtype: str
    msgdef: str
    rihs01: str
    offered_qos_profiles: list  # rosbags' Qos, as rosbag_qos makes them


def add_connections(writer: Any, connections: Sequence[OutputConnection]) -> list:
    """Each connection added to an open Writer of open_writer, in order: their handles.

    A connection without a definition (`msgdef` empty) is written as rosbag2 writes a type whose
    definition it cannot find (see _writer_class).
    """
    return [writer.add_connection(c.topic, c.msgtype, msgdef=c.msgdef,
                                  rihs01=c.rihs01 or _NO_HASH, serialization_format='cdr',
                                  offered_qos_profiles=c.offered_qos_profiles)
            for c in connections]


# rosbags' Writer takes a hash with every connection. A type copied without its hash is added
# with this one, which no type has (RIHS01 hashes are SHA-256), then written without one: an
# empty type_description_hash (the metadata's and the sqlite3 topics table's, finish_output).
_NO_HASH = 'RIHS01_' + '0' * 64


@cache
def _writer_class() -> type:
    """The Writer of rosbags, its storages writing a type without a definition as rosbag2 does.

    rosbag2 writes the definition of a type it cannot find as an empty one, of no encoding
    (rosbag2_storage's MessageDefinition::empty_message_definition_for, which rosbag2_cpp's
    SequentialWriter::create_topic takes on Iron, Jazzy and Rolling; on Humble,
    rosbag2_storage_mcap's MCAPStorage::create_topic writes the same). In MCAP: a schema of the
    type's name, of encoding '' and no data, as here. In sqlite3, Iron on: a message_definitions
    row of encoding '', which rosbags (0.11, Sqlite3Reader) cannot open; here no row, which
    rosbag2 reads the same (its definitions are the rows there are; Humble's schema has no such
    table). rosbags' own storages write every definition as ros2msg or ros2idl.
    """
    from rosbags.rosbag2 import StoragePlugin, Writer
    from rosbags.rosbag2.storage_mcap import McapWriter, Schema, write_schema
    from rosbags.rosbag2.storage_sqlite3 import Sqlite3Writer

    class McapStorage(McapWriter):
        def add_msgtype(self, connection: Any) -> None:
            if connection.msgdef.data:
                super().add_msgtype(connection)
                return
            self.schemas.append(Schema(len(self.schemas) + 1, connection.msgtype, '', ''))
            write_schema(self.chunk.bio, self.schemas[-1])

    class Sqlite3Storage(Sqlite3Writer):
        def add_msgtype(self, connection: Any) -> None:
            if connection.msgdef.data:
                super().add_msgtype(connection)

    class OutputWriter(Writer):
        STORAGE_PLUGINS = {StoragePlugin.SQLITE3: Sqlite3Storage,
                           StoragePlugin.MCAP: McapStorage}

    return OutputWriter


class BagOutputError(Exception):
    """The output cannot be written (a full disk, a file too large, ...): why, in words."""


def error_text(error: BaseException) -> str:
    """What a library raised, for a line: its type and its text."""
    return f'{type(error).__name__}: {error}' if str(error) else type(error).__name__


class OutputBag:
    """The output written by the run's own process.

    recorded.writer.WriterProcess has the same calls. `handles[k]` is what `write` takes for the
    k-th connection. Whatever the storage raises is raised as a BagOutputError.
    """

    def __init__(self, path: Path, output: OutputFormat, connections: Sequence[OutputConnection]):
        try:
            self._writer = open_writer(path, output)
            self.handles = add_connections(self._writer, connections)
        except Exception as error:  # noqa: BLE001 - whatever the storage raises
            raise BagOutputError(error_text(error)) from None
        self._write = self._writer.write

    def write(self, handle: Any, log_ns: int, data: bytes) -> None:
        try:
            self._write(handle, log_ns, data)
        except Exception as error:  # noqa: BLE001 - whatever the storage raises
            raise BagOutputError(error_text(error)) from None

    def close(self) -> dict[int, int]:
        """Close the bag; the recorded messages copied by another process: none."""
        try:
            self._writer.close()
        except Exception as error:  # noqa: BLE001 - whatever the storage raises
            raise BagOutputError(error_text(error)) from None
        return {}

    def abort(self) -> None:
        """Nothing to stop: the run removes the files."""


def finish_output(path: Path, output: OutputFormat) -> None:
    """After the writer closed: the output finished as `output` asks.

    The metadata as the distro's rosbag2 reads it; then, for file compression, each file
    compressed, as rosbag2 does once a file is closed.
    """
    metadata_path = path / 'metadata.yaml'
    document = yaml.safe_load(metadata_path.read_text())
    information = document['rosbag2_bagfile_information']
    for topic in information['topics_with_message_count']:
        if topic['topic_metadata'].get('type_description_hash') == _NO_HASH:
            topic['topic_metadata']['type_description_hash'] = ''
    if METADATA_VERSIONS[output.distro] < _OLDEST_WRITTEN:
        _as_humble(information)
    else:
        information['ros_distro'] = output.distro
    names = information['relative_file_paths']
    if output.compression == 'file':
        information.update(compression_format='zstd', compression_mode='file')
        information['relative_file_paths'] = [f'{name}.zstd' for name in names]
        for file in information.get('files') or []:
            file['path'] = f'{file["path"]}.zstd'
    text = yaml.safe_dump(document, sort_keys=False)
    if information['storage_identifier'] == 'sqlite3':
        # The copy the storage keeps, read by `ros2 bag reindex` and where metadata.yaml is
        # missing.
        for name in names:
            with sqlite3.connect(path / name) as database:
                database.execute('UPDATE schema SET ros_distro = ?', (output.distro,))
                database.execute('UPDATE topics SET type_description_hash = ? WHERE '
                                 'type_description_hash = ?', ('', _NO_HASH))
                database.execute('UPDATE metadata SET metadata_version = ?, metadata = ?',
                                 (information['version'], text))
            database.close()
    if output.compression == 'file':
        for name in names:
            _compress(path / name)
    metadata_path.write_text(text)


def _compress(path: Path) -> None:
    """`path` replaced by its zstd frame, `path`.zstd, streamed: memory stays flat."""
    # The zstd that rosbags reads compressed bags with (its dependency).
    if sys.version_info >= (3, 14):
        from compression import zstd
    else:
        from backports import zstd

    with path.open('rb') as source, zstd.open(f'{path}.zstd', 'wb') as target:
        shutil.copyfileobj(source, target, 1 << 20)
    path.unlink()


def _as_humble(information: dict) -> None:
    """Version 8 metadata (rosbags') as Humble's version 5."""
    information['version'] = METADATA_VERSIONS['humble']
    information.pop('custom_data', None)
    information.pop('ros_distro', None)
    for topic in information['topics_with_message_count']:
        metadata = topic['topic_metadata']
        metadata.pop('type_description_hash', None)
        profiles = yaml.safe_load(metadata['offered_qos_profiles'] or '[]') or []
        for profile in profiles:
            for policy, largest in _HUMBLE_LARGEST.items():
                if profile[policy] > largest:
                    profile[policy] = 0
        metadata['offered_qos_profiles'] = (
            yaml.safe_dump(profiles, default_flow_style=None).strip() if profiles else '')


def rosbag_qos(profile) -> Any:
    """A qos.TopicQos as rosbag2 stores a publisher's offered QoS (infinite times unset)."""
    from rosbags.interfaces import (
        Qos,
        QosDurability,
        QosHistory,
        QosLiveliness,
        QosReliability,
        QosTime,
    )

    infinite = QosTime(sec=9223372036, nsec=854775807)
    return Qos(
        history=QosHistory.KEEP_LAST, depth=profile.depth,
        reliability=QosReliability.RELIABLE if profile.reliable else QosReliability.BEST_EFFORT,
        durability=(QosDurability.TRANSIENT_LOCAL if profile.transient_local
                    else QosDurability.VOLATILE),
        deadline=infinite, lifespan=infinite, liveliness=QosLiveliness.AUTOMATIC,
        liveliness_lease_duration=infinite, avoid_ros_namespace_conventions=False)
