"""The QoS profiles of the node's topics, for the node and for whoever listens to it."""

from __future__ import annotations

from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

__all__ = ['CONTAINER_SERVICE_QOS', 'JOINT_STATES_QOS', 'LATCHED_QOS', 'TF_QOS',
           'TF_STATIC_LISTENER_QOS']

# /tf, as tf2's TransformBroadcaster: reliable, volatile, depth 100.
TF_QOS = QoSProfile(depth=100, history=HistoryPolicy.KEEP_LAST,
                    reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE)
# /tf_static and robot_description: one message, kept for late joiners (transient local).
LATCHED_QOS = QoSProfile(depth=1, history=HistoryPolicy.KEEP_LAST,
                         reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.TRANSIENT_LOCAL)
# A /tf_static listener, as tf2's TransformListener: the latched message of every publisher.
TF_STATIC_LISTENER_QOS = QoSProfile(depth=100, history=HistoryPolicy.KEEP_LAST,
                                    reliability=ReliabilityPolicy.RELIABLE,
                                    durability=DurabilityPolicy.TRANSIENT_LOCAL)
# The resolved joint_states, as joint_state_publisher publishes them: reliable, volatile, depth
# 10. Reliable readers match it, and so do the best-effort ones (robot_state_publisher's).
JOINT_STATES_QOS = QoSProfile(depth=10, history=HistoryPolicy.KEEP_LAST,
                              reliability=ReliabilityPolicy.RELIABLE,
                              durability=DurabilityPolicy.VOLATILE)
# A container's load and unload services, as rclcpp_components' (services' defaults, depth 200):
# a launch file may send many requests at once.
CONTAINER_SERVICE_QOS = QoSProfile(depth=200, history=HistoryPolicy.KEEP_LAST,
                                   reliability=ReliabilityPolicy.RELIABLE,
                                   durability=DurabilityPolicy.VOLATILE)
