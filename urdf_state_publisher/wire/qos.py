"""The QoS of the node's topics and services: for the node, for whoever listens, for bags.

Each profile is a `TopicQos` here, and nowhere else: the node and the tests get it as an rclpy
QoSProfile under its name (TF_QOS, ...) from ros/qos.py, and the bag command writes it
into a bag's metadata (recorded/output.py). This module imports no ROS package.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ['CONTAINER_SERVICE', 'DIAGNOSTICS', 'JOINT_STATES', 'LATCHED', 'TF',
           'TF_STATIC_LISTENER', 'TopicQos']


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
# A /tf_static listener, as tf2's TransformListener: the latched message of every publisher.
TF_STATIC_LISTENER = TopicQos(100, transient_local=True)
# A container's load and unload services, as rclcpp_components' (services' defaults, depth 200):
# a launch file may send many requests at once.
CONTAINER_SERVICE = TopicQos(200)
