"""The JointState topics a node reads: resolved, each once, never its own output.

Names are resolved as the shell resolves them (rclpy's resolver in the node, the bag command's
own for its --ros-args). Nothing here imports ROS.
"""

from __future__ import annotations

from collections.abc import Callable

from urdf_state_publisher.errors import StartupError

__all__ = ['check_no_feedback', 'source_topics']


def source_topics(entries: tuple[str, ...], resolve: Callable[[str], str]) -> tuple[str, ...]:
    """The topics of `entries` (NodeConfig.joint_state_topics), each resolved by `resolve`.

    StartupError, naming the entry, for a name that does not resolve or a topic listed twice.
    """
    topics: dict[str, str] = {}
    for entry in entries:
        try:
            topic = resolve(entry)
        except Exception as error:  # noqa: BLE001 - resolvers raise several kinds
            raise StartupError(
                f"source_list: {entry!r} is not a valid topic name ({error}); give topic "
                "names such as 'arm/joint_states' or '/gripper/joint_states'") from None
        if topic in topics:
            raise StartupError(
                f'source_list: {topics[topic]!r} and {entry!r} are both {topic}: list each '
                'topic once')
        topics[topic] = entry
    return tuple(topics)


def check_no_feedback(topics: tuple[str, ...], output: str) -> None:
    """Refuse to read `output`, the topic the resolved joint_states are published on."""
    if output in topics:
        raise StartupError(
            f'publish_joint_states: the node would read its own output, since source_list '
            f'lists {output}, where it publishes the resolved state. Remove {output} from '
            "source_list and list the topics your drivers publish on (for example "
            "'arm/joint_states'); remap a driver that publishes on joint_states to a topic "
            'of its own')
