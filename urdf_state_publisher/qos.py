"""The QoS of the node's topics and services: for the node, for whoever listens, for bags.

Each profile is a `TopicQos` here, and nowhere else: the node and the tests get it as an rclpy
QoSProfile under its name (TF_QOS, ...), made on first use, and the bag command writes it into
a bag's metadata (bag.py). This module imports rclpy only when a QoSProfile is asked for.
"""

from __future__ import annotations

from typing import NamedTuple

# And, made on first use, the rclpy QoSProfile of each profile named in _PROFILES.
__all__ = ['DIAGNOSTICS', 'JOINT_STATES', 'LATCHED', 'TF', 'TopicQos']


class TopicQos(NamedTuple):
    """A KEEP_LAST profile: its depth, reliable or best effort, transient local or volatile."""

    depth: int
    reliable: bool = True
    transient_local: bool = False


# /tf, as tf2's TransformBroadcaster: reliable, volatile, depth 100.
TF = TopicQos(100)
# /tf_static and robot_description: one message, kept for late joiners (transient local).
LATCHED = TopicQos(1, transient_local=True)
# The resolved joint_states, as joint_state_publisher publishes them: reliable, volatile, depth
# 10. Reliable readers match it, and so do the best-effort ones (robot_state_publisher's).
JOINT_STATES = TopicQos(10)
# /diagnostics: reliable, volatile, depth 10, an rclpy publisher's default.
DIAGNOSTICS = TopicQos(10)

_PROFILES = {
    'TF_QOS': TF,
    'LATCHED_QOS': LATCHED,
    'JOINT_STATES_QOS': JOINT_STATES,
    'DIAGNOSTICS_QOS': DIAGNOSTICS,
    # A /tf_static listener, as tf2's TransformListener: the latched message of every publisher.
    'TF_STATIC_LISTENER_QOS': TopicQos(100, transient_local=True),
    # A container's load and unload services, as rclcpp_components' (services' defaults, depth
    # 200): a launch file may send many requests at once.
    'CONTAINER_SERVICE_QOS': TopicQos(200),
}


def __getattr__(name: str):
    """The rclpy QoSProfile of a profile named in _PROFILES."""
    qos = _PROFILES.get(name)
    if qos is None:
        raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
    from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

    profile = QoSProfile(
        depth=qos.depth, history=HistoryPolicy.KEEP_LAST,
        reliability=ReliabilityPolicy.RELIABLE if qos.reliable else ReliabilityPolicy.BEST_EFFORT,
        durability=(DurabilityPolicy.TRANSIENT_LOCAL if qos.transient_local
                    else DurabilityPolicy.VOLATILE))
    globals()[name] = profile
    return profile
