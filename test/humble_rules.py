"""A bag read as Humble's `ros2 bag` reads it, rule by rule, after rosbag2's humble branch.

rosbag2_storage/src/rosbag2_storage/metadata_io.cpp (yaml-cpp) decodes metadata.yaml: every
key it reads must be there, with a scalar where it reads one (`as<std::string>()`, `as<int>()`
throw otherwise: "Exception on parsing info file: bad conversion"); the keys of later versions
are not looked at. The player (rosbag2_transport's player.cpp and qos.cpp) loads each topic's
`offered_qos_profiles` string as a list of profiles, every field required, the policies as
integers of Humble's rmw enums. The sqlite3 storage (schema 3) reads its tables by named
columns. No version number is checked against a maximum.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
import sqlite3

import yaml

# rmw/types.h on humble: the largest value of each policy.
_LARGEST = {'history': 3, 'reliability': 3, 'durability': 3, 'liveliness': 4}
_DURATIONS = ('deadline', 'lifespan', 'liveliness_lease_duration')


class HumbleCannotRead(Exception):  # noqa: N818 - what it says of the bag
    """Humble's rosbag2 would throw here."""


@dataclass
class Topic:
    type: str
    qos: list[dict]
    message_count: int


@dataclass
class Metadata:
    version: int
    storage: str
    files: list[str]
    message_count: int
    topics: dict[str, Topic]


def _scalar(node: dict, key: str, kind: type):
    if not isinstance(node, dict) or key not in node:
        raise HumbleCannotRead(f'key {key!r} missing')
    value = node[key]
    if isinstance(value, (dict, list)) or value is None:
        raise HumbleCannotRead(f'bad conversion: {key!r} is not a scalar')
    if kind is int:
        if isinstance(value, bool) or not isinstance(value, int):
            try:
                return int(str(value))
            except ValueError:
                raise HumbleCannotRead(f'bad conversion: {key!r} is not an integer') from None
        return value
    return str(value)


def _qos_profiles(text: str) -> list[dict]:
    """Rosbag2QoS decoding of a topic's offered_qos_profiles string (player.cpp, qos.cpp)."""
    if not text:
        return []  # the player's default QoS
    profiles = yaml.safe_load(text)
    if not isinstance(profiles, list):
        raise HumbleCannotRead('bad conversion: offered_qos_profiles is no list')
    for profile in profiles:
        for policy, largest in _LARGEST.items():
            if not 0 <= _scalar(profile, policy, int) <= largest:
                raise HumbleCannotRead(f'{policy} {profile[policy]} is no Humble policy')
        _scalar(profile, 'depth', int)
        for duration in _DURATIONS:
            _scalar(profile.get(duration), 'sec', int)
            _scalar(profile.get(duration), 'nsec', int)
        if not isinstance(profile.get('avoid_ros_namespace_conventions'), bool):
            raise HumbleCannotRead('bad conversion: avoid_ros_namespace_conventions')
    return profiles


def read_metadata(bag: Path) -> Metadata:
    """metadata.yaml as Humble decodes it; HumbleCannotRead where Humble would throw."""
    document = yaml.safe_load((bag / 'metadata.yaml').read_text())
    node = document.get('rosbag2_bagfile_information') if isinstance(document, dict) else None
    if not isinstance(node, dict):
        raise HumbleCannotRead('no rosbag2_bagfile_information')
    version = _scalar(node, 'version', int)
    storage = _scalar(node, 'storage_identifier', str)
    files = node.get('relative_file_paths')
    if not isinstance(files, list):
        raise HumbleCannotRead('relative_file_paths is no list')
    _scalar(node.get('duration'), 'nanoseconds', int)
    _scalar(node.get('starting_time'), 'nanoseconds_since_epoch', int)
    message_count = _scalar(node, 'message_count', int)
    topics = {}
    for entry in node.get('topics_with_message_count') or []:
        metadata = entry.get('topic_metadata')
        name = _scalar(metadata, 'name', str)
        qos = _scalar(metadata, 'offered_qos_profiles', str) if version >= 4 else ''
        topics[name] = Topic(_scalar(metadata, 'type', str), _qos_profiles(qos),
                             _scalar(entry, 'message_count', int))
        _scalar(metadata, 'serialization_format', str)
    if version >= 3:
        _scalar(node, 'compression_format', str)
        _scalar(node, 'compression_mode', str)
    if version >= 5:
        for file in node.get('files') or []:
            _scalar(file, 'path', str)
            _scalar(file.get('starting_time'), 'nanoseconds_since_epoch', int)
            _scalar(file.get('duration'), 'nanoseconds', int)
            _scalar(file, 'message_count', int)
    return Metadata(version, storage, [str(f) for f in files], message_count, topics)


def read_messages(bag: Path, metadata: Metadata) -> int:
    """How many messages Humble's sqlite3 storage reads, with its own queries (schema 3)."""
    if metadata.storage != 'sqlite3':
        raise HumbleCannotRead(f'storage {metadata.storage!r}: not this reader')
    count = 0
    for name in metadata.files:
        with sqlite3.connect(bag / name) as database:
            database.execute('SELECT schema_version from schema;').fetchone()
            database.execute('SELECT name, type, serialization_format, offered_qos_profiles '
                             'FROM topics ORDER BY id;').fetchall()
            count += len(database.execute(
                'SELECT data, timestamp, topics.name, messages.id FROM messages JOIN topics '
                'ON messages.topic_id = topics.id ORDER BY messages.timestamp, messages.id;'
            ).fetchall())
        database.close()
    return count
