"""The recordings urdf_state_publisher_bag reads, one reader per format behind one interface.

A rosbag2 bag (a directory, sqlite3 or MCAP, or a lone .mcap file) is read as it is. A ROS 1
bag (a .bag file, or a folder of the .bag files a split recording made) is read as
rosbags-convert converts it: each connection's types from the definitions the bag carries,
named as ROS 2 names them (`sensor_msgs/msg/JointState`; `tf/tfMessage` is
`tf2_msgs/msg/TFMessage`), `roslib/Header` read as the `std_msgs/Header` it was renamed to, the
header's `seq` dropped as ROS 2's has none; each message's bytes converted to CDR; a latched
topic offered transient local; topic names made absolute, as ROS 2 has them.

Both give the command the same things (`InputBag`): the topics as the output carries them,
the messages as (topic id, log time, CDR bytes) in log-time order, the first and last log
time, the storage to write by default and the distro the input was written for. rosbags is
imported only when a bag is opened.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from functools import cached_property, partial
import heapq
from pathlib import Path
import re
from typing import Any, Protocol

import yaml

from urdf_state_publisher.recorded.folders import (
    folder_contents,
    FolderContents,
    is_rosbag2_folder,
    Recording,
    rosbag2_files_without_metadata,
    SplitRecording,
)
from urdf_state_publisher.recorded.output import distro_of_version, DISTROS, error_text, HEADER
from urdf_state_publisher.wire.ros1 import JointStateConverter

__all__ = ['BagInputError', 'folder_of_recordings', 'InputBag', 'InputTopic', 'open_bag',
           'recording_bytes']

# Type names ROS 2 gives what ROS 1 called otherwise (the fields are the same).
_RENAMED_TYPES = {'tf/msg/tfMessage': 'tf2_msgs/msg/TFMessage'}
_ROSLIB_HEADER = re.compile(r'^MSG: roslib/Header\s*$', re.MULTILINE)
# sensor_msgs/JointState's ROS 1 MD5 (roslib/Header's bytes and name do not change it).
_JOINT_STATE = ('sensor_msgs/msg/JointState', '3066dcd76a6cfaef579bd0f34173e9fd')


class BagInputError(Exception):
    """The input cannot be read: one line for the user."""


@dataclass(frozen=True)
class InputTopic:
    """One topic of the input as the output will carry it.

    `msgdef` and `digest` are the ROS 2 definition and its hash where the input holds them;
    None where the output writer is to make them from the input's `typestore`.
    """

    id: int
    topic: str
    msgtype: str
    msgdef: str | None
    digest: str | None
    offered_qos_profiles: list


class InputBag(Protocol):
    """What the command reads of a recording, whatever its format."""

    path: Recording
    topics: list[InputTopic]
    typestore: Any  # rosbags' Typestore: knows every type of `topics` whose msgdef is None
    start_ns: int
    end_ns: int
    storage: str  # 'mcap' or 'sqlite3': the output's unless asked otherwise
    distro: str  # the distro whose `ros2 bag` the output is written for unless asked otherwise
    compression: str  # 'none', 'message' or 'file' (zstd): the output's unless asked otherwise

    def messages(self, topics: Collection[int] | None = None
                 ) -> Iterator[tuple[int, int, bytes]]:
        """(topic id, log time in ns, CDR bytes) of every message, in log-time order.

        Only those of `topics` (their ids) when given.
        """

    def close(self) -> None:
        """Release the files."""


def open_bag(source: Recording) -> InputBag:
    """The recording `source`, by what it is; BagInputError naming it when it is none."""
    if isinstance(source, SplitRecording):
        return Rosbag1Input(source, list(source.pieces))
    path = source
    if not path.exists():
        raise BagInputError(f'{path}: no such bag (give a bag directory, an .mcap file, or a '
                            'ROS 1 .bag file or folder of them)')
    if path.name.endswith('.bag.active'):
        raise BagInputError(f'{path}: a ROS 1 recording that rosbag record has not closed (it '
                            'is still recording, or was stopped before it could): once closed, '
                            f'or after `rosbag reindex {path}` and renaming it without .active, '
                            'give it again')
    if path.is_dir() and not is_rosbag2_folder(path):
        contents = folder_of_recordings(path)
        if not contents.whole:
            raise BagInputError(
                f'{path}: a folder of recordings, not one recording (a rosbag2 bag, or the '
                'pieces of one split ROS 1 recording): give each recording, or give the folder '
                'to urdf_state_publisher_bag as its only INPUT and a folder as OUTPUT, one '
                'output each')
        return Rosbag1Input(path, list(contents.recordings[0].pieces))
    if path.is_file() and path.suffix == '.bag':
        return Rosbag1Input(path, [path])
    return Rosbag2Input(path)


def folder_of_recordings(path: Path) -> FolderContents:
    """The recordings in a folder that is no rosbag2 bag (folders.py), and what else it holds.

    BagInputError when it holds none, or is a rosbag2 bag that lost its metadata.yaml.
    """
    databases = rosbag2_files_without_metadata(path)
    if databases:  # what `ros2 bag record` leaves when it is killed before it closes
        more = ', ...' if len(databases) > 1 else ''
        kind = 'sqlite3' if databases[0].suffix == '.db3' else 'MCAP'
        raise BagInputError(
            f'{path}: {kind} files ({databases[0].name}{more}) without the metadata.yaml of '
            f'their bag: write it with `ros2 bag reindex {path}`, or give each '
            f'{databases[0].suffix} file itself as an input')
    contents = folder_contents(path)
    if not contents.recordings:
        raise BagInputError(
            f'{path}: not a recording, nor a folder of recordings: no metadata.yaml, .mcap, '
            '.db3 or .bag file in it, nor in its folders')
    return contents


def recording_bytes(recording: Recording) -> int:
    """How many bytes a recording holds: a file's size, or the sum of a folder's files.

    What a run's length is known by before it is opened (the time a run takes grows with it);
    0 for what cannot be read, which its run reports.
    """
    if isinstance(recording, SplitRecording):
        return sum(recording_bytes(piece) for piece in recording.pieces)
    try:
        if recording.is_file():
            return recording.stat().st_size
        return sum(entry.stat().st_size for entry in recording.rglob('*') if entry.is_file())
    except OSError:
        return 0


class Rosbag2Input:
    """A rosbag2 bag, read with rosbags' rosbag2 reader; its bytes are already CDR."""

    def __init__(self, path: Path):
        from rosbags.rosbag2 import Reader

        self.path = path
        try:
            self._reader = Reader(path)
            self._reader.open()
        except KeyError as error:
            # rosbags (0.11) reads a storage's definition encodings by a table of those it
            # knows: an sqlite3 bag of Iron on, where rosbag2 stored '' for a type whose
            # definition it could not find, or the 'unknown' of a type name it did not
            # understand, raises the encoding.
            raise BagInputError(
                f'{path}: a message definition is stored with the encoding {error.args[0]!r}, '
                'which rosbags cannot read; rewrite the bag as MCAP with `ros2 bag convert` '
                '(storage_id: mcap) and give that') from None
        except Exception as error:  # noqa: BLE001 - rosbags raises anything on a damaged file
            raise BagInputError(
                f'{path}: cannot read it as a rosbag2 bag ({_reason(error)})') from None
        self.topics = [
            InputTopic(c.id, c.topic, c.msgtype, c.msgdef.data or None, c.digest or None,
                       c.ext.offered_qos_profiles)
            for c in self._reader.connections]
        self.start_ns = self._reader.start_time
        self.end_ns = self._reader.end_time
        # zstd by 'message' or 'file' as rosbags read it from the metadata (a lone file: none).
        self.compression = self._reader.compression_mode or 'none'
        if path.is_file():
            # No metadata.yaml says for which distro: the LTS, which reads it too.
            self.storage = 'mcap' if path.suffix == '.mcap' else 'sqlite3'
            self.distro = 'jazzy'
        else:
            metadata = yaml.safe_load((path / 'metadata.yaml').read_text())
            information = metadata['rosbag2_bagfile_information']
            self.storage = information['storage_identifier']
            # Its ros_distro where it names one of ours (not an older distro's, nor 'rosbags'),
            # else the distro of its metadata version.
            named = information.get('ros_distro')
            self.distro = named if named in DISTROS else distro_of_version(
                information['version'])

    @cached_property
    def typestore(self) -> Any:
        """The types of a topic recorded without its definition (before Iron): Jazzy's.

        Made only then: loading a distro's types costs a process as much as copying thousands
        of messages.
        """
        from rosbags.typesys import get_typestore, Stores

        return get_typestore(Stores.ROS2_JAZZY)

    def messages(self, topics: Collection[int] | None = None
                 ) -> Iterator[tuple[int, int, bytes]]:
        # rosbags reads every connection when given none.
        connections = () if topics is None else [
            c for c in self._reader.connections if c.id in topics]
        if topics is not None and not connections:
            return
        # Only rosbags' reading raises in here: what the consumer raises stays in the consumer.
        log_ns = None
        try:
            for connection, log_ns, raw in self._reader.messages(connections):
                yield connection.id, log_ns, raw if type(raw) is bytes else bytes(raw)
        except Exception as error:  # noqa: BLE001 - rosbags raises anything on a damaged file
            raise _damaged(self.path, log_ns, error) from None

    def close(self) -> None:
        self._reader.close()


class Rosbag1Input:
    """A ROS 1 recording: one .bag file or the files of a split one, converted to CDR."""

    def __init__(self, path: Recording, files: list[Path]):
        from rosbags.rosbag1 import Reader
        from rosbags.typesys import get_types_from_msg, get_typestore, Stores, TypesysError

        self.path = path
        # Written for Humble, the oldest supported distro, whose bags every newer one plays,
        # in its default storage, which every distro has without a plugin installed.
        self.storage = 'sqlite3'
        self.distro = 'humble'
        # ROS 1's chunk compression (bz2, lz4) has no rosbag2 counterpart.
        self.compression = 'none'
        self._readers = []
        try:
            for file in files:
                reader = Reader(file)
                reader.open()
                self._readers.append(reader)
        except Exception as error:  # noqa: BLE001 - rosbags raises anything on a damaged file
            self.close()
            raise BagInputError(
                f'{file}: cannot read it as a ROS 1 bag ({_reason(error)})') from None
        self.typestore = get_typestore(Stores.EMPTY)
        types: dict[str, Any] = {}
        # One output topic per topic and type, whatever the number of recorders and files.
        ids: dict[tuple[str, str], int] = {}
        latched: dict[int, bool] = {}
        routes = []  # per file: each connection's topic id, type and ROS 1 MD5
        for reader in self._readers:
            route = {}
            for connection in reader.connections:
                msgtype = _RENAMED_TYPES.get(connection.msgtype, connection.msgtype)
                definition = _ROSLIB_HEADER.sub('MSG: std_msgs/Header', connection.msgdef.data)
                try:
                    found = get_types_from_msg(definition, msgtype)
                except TypesysError as error:
                    raise BagInputError(f'{reader.path}: the definition of {connection.msgtype} '
                                        f'on {connection.topic} cannot be read ({error})'
                                        ) from None
                for name, fields in found.items():
                    types.setdefault(name, fields)
                topic = connection.topic if connection.topic.startswith('/') \
                    else '/' + connection.topic
                topic_id = ids.setdefault((topic, msgtype), len(ids) + 1)
                latched[topic_id] = latched.get(topic_id, False) or bool(connection.ext.latching)
                route[connection.id] = (topic_id, msgtype, connection.digest)
            routes.append(route)
        types.update(get_types_from_msg(HEADER, 'std_msgs/msg/Header'))
        try:
            self.typestore.register(types)
        except TypesysError as error:
            raise BagInputError(f'{path}: its message definitions disagree ({error})') from None
        # Each connection's converter: JointStates by their own (one per connection, for the
        # names it keeps), the rest by rosbags.
        self._conversions = [
            {key: (topic_id, JointStateConverter() if (msgtype, digest) == _JOINT_STATE
                   else partial(self._ros1_to_cdr, typename=msgtype))
             for key, (topic_id, msgtype, digest) in route.items()}
            for route in routes]
        self.topics = [InputTopic(topic_id, topic, msgtype, None, None,
                                  _latched_qos() if latched[topic_id] else [])
                       for (topic, msgtype), topic_id in ids.items()]
        self.start_ns = min((r.start_time for r in self._readers if r.message_count),
                            default=0)
        self.end_ns = max((r.end_time for r in self._readers if r.message_count), default=0)

    def _ros1_to_cdr(self, raw: bytes, typename: str) -> bytes:
        return bytes(self.typestore.ros1_to_cdr(raw, typename))

    def messages(self, topics: Collection[int] | None = None
                 ) -> Iterator[tuple[int, int, bytes]]:
        streams = []
        for reader, conversions in zip(self._readers, self._conversions):
            # rosbags reads every connection when given none.
            connections = () if topics is None else [
                c for c in reader.connections if conversions[c.id][0] in topics]
            if topics is None or connections:
                streams.append(_converted(reader.path, reader.messages(connections),
                                          conversions))
        yield from heapq.merge(*streams, key=_log_time) if len(streams) > 1 else (
            streams[0] if streams else ())

    def close(self) -> None:
        for reader in self._readers:
            reader.close()


def _log_time(item: tuple[int, int, bytes]) -> int:
    return item[1]


def _converted(path: Path, messages,
               conversions: dict[int, tuple[int, Callable[[bytes], bytes]]]
               ) -> Iterator[tuple[int, int, bytes]]:
    log_ns = None
    try:
        for connection, log_ns, raw in messages:
            topic_id, convert = conversions[connection.id]
            try:
                data = convert(raw if type(raw) is bytes else bytes(raw))
            except Exception as error:  # noqa: BLE001 - rosbags' generated code raises anything
                raise BagInputError(
                    f'{path}: the message on {connection.topic} at log time {log_ns} ns is not '
                    f'a {connection.msgtype} ({_reason(error)}); it cannot be converted'
                ) from None
            yield topic_id, log_ns, data
    except BagInputError:
        raise
    except Exception as error:  # noqa: BLE001 - rosbags raises anything on a damaged file
        raise _damaged(path, log_ns, error) from None


def _damaged(path: Path, log_ns: int | None, error: Exception) -> BagInputError:
    """The line for a recording that opened but cannot be read to its end."""
    where = 'its messages' if log_ns is None else \
        f'on after the message at log time {log_ns} ns'
    return BagInputError(f'{path}: damaged: cannot read {where} ({_reason(error)}); nothing '
                         'is written from a recording that cannot be read whole')


def _reason(error: Exception) -> str:
    """What a reader raised, in words: a damaged length is too large to read at all."""
    if isinstance(error, (MemoryError, OverflowError)):
        return 'a record claims more bytes than can be read: its length is damaged'
    return error_text(error)


def _latched_qos() -> list:
    """A latched ROS 1 topic's offered QoS: the last message kept for late subscribers."""
    from urdf_state_publisher.recorded.output import rosbag_qos
    from urdf_state_publisher.wire import qos

    return [rosbag_qos(qos.LATCHED)]
