"""Where each recorded topic goes in a run of urdf_state_publisher_bag, decided from names.

A run writes the node's own topics and copies the rest of the recording. Each recorded topic
has one role (Role), decided before a message is read from the topic names alone, so that a
lone run's second process (recorded.writer) can start copying while the run still loads numpy,
the description and the engine.
"""

from __future__ import annotations

from dataclasses import dataclass
import enum

from urdf_state_publisher.wire import qos

__all__ = ['our_topics', 'Role', 'route', 'TopicNames']


class Role(enum.Enum):
    """What a run does with the messages of one recorded topic."""

    COPY = 'copied as recorded'
    # Copied, and read by the engine: the joint-state sources, the multi-DOF states, the
    # description topic when the description comes from the recording.
    FEED = 'copied and read by the engine'
    # /tf or /tf_static: the transforms of the description's frames dropped (the computed ones
    # replace them), the others written on the run's own connection.
    TRANSFORMS = 'its transforms of other frames kept'
    # Recorded diagnostics: other nodes' statuses written on the run's own connection beside
    # the node's; the node's own recorded statuses (an earlier run's) replaced.
    DIAGNOSTICS = "written beside the node's diagnostics"
    # A topic the run writes itself (the description given on the command line): counted.
    REPLACED = 'replaced by what the run writes'


@dataclass(frozen=True)
class TopicNames:
    """The run's topics, resolved as the node resolves them under its --ros-args."""

    tf: str
    tf_static: str
    diagnostics: str
    description: str
    multi_dof: str
    sources: tuple[str, ...]  # the JointState topics read (source_list, or joint_states)
    resolved: str | None  # where the resolved joint states go; None: not published
    description_given: bool  # published by the run (a file), not read from the recording


def our_topics(names: TopicNames) -> dict[str, tuple[str, qos.TopicQos]]:
    """The topics the run writes, with their type and QoS, in the output's order."""
    ours = {names.tf: ('tf2_msgs/msg/TFMessage', qos.TF),
            names.tf_static: ('tf2_msgs/msg/TFMessage', qos.LATCHED),
            names.diagnostics: ('diagnostic_msgs/msg/DiagnosticArray', qos.DIAGNOSTICS)}
    if names.resolved is not None:
        ours[names.resolved] = ('sensor_msgs/msg/JointState', qos.JOINT_STATES)
    if names.description_given:
        ours[names.description] = ('std_msgs/msg/String', qos.LATCHED)
    return ours


def route(recorded: dict[int, str], names: TopicNames) -> dict[int, Role]:
    """Each recorded topic's role; `recorded` maps the input's topic ids to their names."""
    ours = our_topics(names)
    fed = {*names.sources, names.multi_dof, names.description}
    roles = {}
    for key, topic in recorded.items():
        if topic in (names.tf, names.tf_static):
            roles[key] = Role.TRANSFORMS
        elif topic == names.diagnostics:
            roles[key] = Role.DIAGNOSTICS
        elif topic in ours:
            roles[key] = Role.REPLACED
        elif topic in fed:
            roles[key] = Role.FEED
        else:
            roles[key] = Role.COPY
    return roles
