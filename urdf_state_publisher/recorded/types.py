"""The recorded types a run of urdf_state_publisher_bag must know, and those it copies blind.

A run decodes only the topics it reads (recorded.routing's roles): the joint-state sources, the
multi-DOF states and the description it is fed, the recorded /tf and /tf_static whose
transforms it sorts, the other nodes' diagnostics it writes beside its own. Each must be the
one type the node reads there; anything else is refused before a message is read, in one line.

Every other topic is copied byte for byte whatever its type, with the definition the recording
holds. A recording made before Iron holds none: a type Jazzy's store knows is given Jazzy's, as
rosbag2 gives a type whose definition it finds installed; one nobody here knows is written as
rosbag2 writes a type whose definition it cannot find (recorded.output.add_connections), which
`ros2 bag play` plays wherever the type is installed.
"""

from __future__ import annotations

from pathlib import Path

from urdf_state_publisher.recorded.input import BagInputError, InputBag, InputTopic
from urdf_state_publisher.recorded.routing import Role, TopicNames

__all__ = ['check_read_types', 'copied_definition']

_TRANSFORMS = 'tf2_msgs/msg/TFMessage'
_DIAGNOSTICS = 'diagnostic_msgs/msg/DiagnosticArray'


def _read_type(topic: str, role: Role, names: TopicNames) -> str | None:
    """The type a run reads `topic` as in its `role`; None where it reads no message of it."""
    if role is Role.TRANSFORMS:
        return _TRANSFORMS
    if role is Role.DIAGNOSTICS:
        return _DIAGNOSTICS
    if role is not Role.FEED:
        return None
    if topic in names.sources:
        return 'sensor_msgs/msg/JointState'
    if topic == names.multi_dof:
        return 'sensor_msgs/msg/MultiDOFJointState'
    return 'std_msgs/msg/String'  # the robot description


def check_read_types(input_path: Path, topics: list[InputTopic], roles: dict,
                     names: TopicNames) -> None:
    """BagInputError, one line, for a topic the run reads that is recorded as another type."""
    for recorded in topics:
        expected = _read_type(recorded.topic, roles[recorded.id], names)
        if expected is None or recorded.msgtype == expected:
            continue
        if recorded.topic in names.sources:
            remedy = ('read the JointStates from another topic with --ros-args -p '
                      'source_list:=[TOPIC]')
        else:  # the recorded topic is then copied as it is
            remedy = (f"move the command's own {recorded.topic} to another name with "
                      f'--ros-args -r {recorded.topic}:=/another/name')
        raise BagInputError(
            f'{input_path}: topic {recorded.topic} is recorded as {recorded.msgtype}, which the '
            f'command cannot read: it reads {expected} there; {remedy}')


def copied_definition(recording: InputBag, recorded: InputTopic) -> tuple[str, str]:
    """The definition and RIHS01 hash a recorded topic is copied with.

    Its definition as recorded; for one recorded without its hash (a Humble bag's metadata has
    none: this command's own Humble outputs, Humble's MCAP files), the hash of its text, or none
    where rosbags cannot parse it (an IDL definition, as rosbag2 concatenates them). For one
    recorded without a definition (before Iron), Jazzy's where Jazzy's store knows the type;
    else none, as rosbag2 writes it (empty text and, without a recorded one, an empty hash).
    """
    msgdef, digest = recorded.msgdef, recorded.digest
    if msgdef:
        return msgdef, digest or _hash_of(msgdef, recorded.msgtype)
    known = recording.typestore
    if recorded.msgtype not in known.types:
        return '', digest or ''
    return (known.generate_msgdef(recorded.msgtype, ros_version=2)[0],
            known.hash_rihs01(recorded.msgtype))


def _hash_of(msgdef: str, msgtype: str) -> str:
    """The RIHS01 hash of a recorded .msg definition; '' where rosbags cannot parse it."""
    from rosbags.typesys import get_types_from_msg, get_typestore, Stores, TypesysError

    own = get_typestore(Stores.EMPTY)
    try:
        own.register(get_types_from_msg(msgdef, msgtype))
        return own.hash_rihs01(msgtype)
    except (TypesysError, KeyError):  # not .msg text, or a type it holds not defined in it
        return ''
