"""The view's ROS side: /tf, /tf_static and /robot_description in, the sliders' JointState out.

rclpy's callbacks run on a thread of their own; they only record what arrives (under a lock)
for the page's loop to draw.
"""

from __future__ import annotations

import threading

from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from tf2_msgs.msg import TFMessage

from urdf_state_publisher.geometry import Pose
from urdf_state_publisher.ros.process import init_ros
from urdf_state_publisher.ros.qos import (
    JOINT_STATES_QOS,
    LATCHED_QOS,
    TF_QOS,
    TF_STATIC_LISTENER_QOS,
)
from urdf_state_publisher.ros.rclpy_capabilities import make_executor
from urdf_state_publisher.view.scene import TransformTree
from urdf_state_publisher.wire.cdr import MalformedMessage
from urdf_state_publisher.wire.tf import read_tf_message

__all__ = ['RosLink']

NODE_NAME = 'urdf_state_publisher_view'


class RosLink:
    """A node that keeps the latest transforms and description, and publishes joint states."""

    def __init__(self, joint_states_topic: str | None, *, description_topic: bool,
                 ros_arguments: list[str] = ()):
        init_ros(['urdf_state_publisher_view', *ros_arguments])
        self.node = Node(NODE_NAME)
        self.lock = threading.Lock()
        self.tree = TransformTree()
        self.changed = False  # a transform arrived since the page last drew
        self.description: str | None = None
        self.description_count = 0  # descriptions received: the page rebuilds on a new one
        # Raw: the package's CDR reader takes a TFMessage apart in a sixth of the time rclpy's
        # message classes take (a 140-joint robot at 100 Hz: 4 % of a core instead of 23 %).
        self.node.create_subscription(TFMessage, '/tf', self._on_tf, TF_QOS, raw=True)
        self.node.create_subscription(TFMessage, '/tf_static', self._on_tf,
                                      TF_STATIC_LISTENER_QOS, raw=True)
        if description_topic:
            self.node.create_subscription(String, 'robot_description', self._on_description,
                                          LATCHED_QOS)
        self.publisher = None if joint_states_topic is None else \
            self.node.create_publisher(JointState, joint_states_topic, JOINT_STATES_QOS)
        self.executor = make_executor(self.node.context)
        self.executor.add_node(self.node)
        self._thread = threading.Thread(target=self._spin, name='ros', daemon=True)
        self._thread.start()

    def _spin(self) -> None:
        from rclpy.executors import ExternalShutdownException

        try:
            while self.node.context.ok():
                self.executor.spin_once(timeout_sec=0.1)
        except ExternalShutdownException:
            pass

    def _on_tf(self, data: bytes) -> None:
        try:
            transforms = read_tf_message(data)
        except MalformedMessage:
            return  # nothing a sender does stops the view
        with self.lock:
            for t in transforms:
                self.tree.set(t.parent.lstrip('/'), t.child.lstrip('/'),
                              Pose(t.values[:3], t.values[3:]))
            self.changed = True

    def _on_description(self, message: String) -> None:
        with self.lock:
            self.description = message.data
            self.description_count += 1

    def publish(self, names: tuple[str, ...], positions: tuple[float, ...]) -> None:
        """One JointState with `names` at `positions`, stamped now."""
        message = JointState()
        message.header.stamp = self.node.get_clock().now().to_msg()
        message.name = list(names)
        message.position = list(positions)
        self.publisher.publish(message)

    def close(self) -> None:
        """Stop the ROS thread and shut the context down."""
        import rclpy

        rclpy.try_shutdown()
        self._thread.join(timeout=5)
        self.node.destroy_node()
