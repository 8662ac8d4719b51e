"""Parameters given that the node does not read: a near miss of a known one, or another node's.

rclpy gives a node every parameter of the params file sections that match it, `/**` included,
and of `-p` on its command line; a launch file's parameters reach it the same way. The node
declares those it does not know as given (joint_state_publisher's per-joint parameters are read
so), and robot_state_publisher and joint_state_publisher ignore them. So a misspelt name
(`publish_frequncy`) would leave the parameter at its default without a word.

A name that is a near miss of a known one (the description's near-miss rule, `near_miss`) is
a mistake: one warning per name, naming both. Any other unknown name is most likely meant for
another node sharing a `/**` section: listed once, at INFO. Known are the node's parameters,
rclpy's own, and joint_state_publisher's that the node reads, whole (`delta`) or as a group
(`zeros.<joint>`, `dependent_joints.<joint>.<field>`), a group's near miss as well
(`zero.elbow` for `zeros.elbow`). Nothing here imports ROS.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from urdf_state_publisher.description.unknown_names import near_miss
from urdf_state_publisher.engine.joint_settings import DELTA, DEPENDENT_JOINTS, ZEROS
from urdf_state_publisher.engine.parameters import DOCUMENTED

__all__ = ['UnknownParameters', 'unknown_parameters']

# rclpy's own: every node declares them (start_type_description_service from Jazzy on).
RCLPY_PARAMETERS = ('use_sim_time', 'start_type_description_service')
# Parameter groups, by the part before the first dot: rclpy's QoS overrides of each topic
# (qos_overrides./tf.publisher.depth), and joint_state_publisher's per-joint parameters.
GROUPS = ('qos_overrides', ZEROS, DEPENDENT_JOINTS)
KNOWN = tuple(dict.fromkeys([*(spec.name for spec in DOCUMENTED), *RCLPY_PARAMETERS, DELTA]))


class UnknownParameters(NamedTuple):
    """The parameters given that the node does not know, sorted by name."""

    near_misses: tuple[tuple[str, str], ...]  # (the name given, the known name it misspells)
    others: tuple[str, ...]  # close to no known name: most likely another node's

    def warnings(self) -> list[str]:
        """One WARN line per near miss."""
        return [f'{name}: not a parameter of this node; did you mean {meant}?'
                for name, meant in self.near_misses]

    def info(self) -> str | None:
        """The one INFO line that lists the others; None without any."""
        if not self.others:
            return None
        return ('parameters given that this node does not read (for other nodes, as a /** '
                f'section shares them): {", ".join(self.others)}')


def unknown_parameters(given: Iterable[str]) -> UnknownParameters:
    """Sort the names in `given` (every parameter the node was given) that it does not know."""
    near_misses, others = [], []
    for name in sorted(set(given)):
        group, dot, rest = name.partition('.')
        if name in KNOWN or (dot and group in GROUPS):
            continue
        meant = (near_miss(group, GROUPS) if dot else None)
        meant = f'{meant}.{rest}' if meant is not None else near_miss(name, KNOWN)
        if meant is None:
            others.append(name)
        else:
            near_misses.append((name, meant))
    return UnknownParameters(tuple(near_misses), tuple(others))
