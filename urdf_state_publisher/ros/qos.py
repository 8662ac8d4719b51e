"""The rclpy QoSProfile of each profile in wire/qos.py: for the node, the container, the tests."""

from __future__ import annotations

from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

from urdf_state_publisher.wire import qos

__all__ = ['CONTAINER_SERVICE_QOS', 'DIAGNOSTICS_QOS', 'JOINT_STATES_QOS', 'LATCHED_QOS', 'TF_QOS',
           'TF_STATIC_LISTENER_QOS', 'profile']


def profile(topic_qos: qos.TopicQos) -> QoSProfile:
    """`topic_qos` as an rclpy QoSProfile: KEEP_LAST at its depth."""
    return QoSProfile(
        depth=topic_qos.depth, history=HistoryPolicy.KEEP_LAST,
        reliability=(ReliabilityPolicy.RELIABLE if topic_qos.reliable
                     else ReliabilityPolicy.BEST_EFFORT),
        durability=(DurabilityPolicy.TRANSIENT_LOCAL if topic_qos.transient_local
                    else DurabilityPolicy.VOLATILE))


TF_QOS = profile(qos.TF)
LATCHED_QOS = profile(qos.LATCHED)
JOINT_STATES_QOS = profile(qos.JOINT_STATES)
DIAGNOSTICS_QOS = profile(qos.DIAGNOSTICS)
TF_STATIC_LISTENER_QOS = profile(qos.TF_STATIC_LISTENER)
CONTAINER_SERVICE_QOS = profile(qos.CONTAINER_SERVICE)
