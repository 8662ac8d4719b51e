"""Launch urdf_state_publisher.launch.py for real and check that /tf_static arrives.

Needs a ROS 2 install: launch, launch_ros and launch_testing are not on PyPI. So `make test`
leaves this folder out (Makefile), and it runs where they are: `colcon test` in a workspace
where this package is built and sourced (README, "In a ROS 2 workspace"), or
`launch_test test/ros_install/test_launch_smoke.py`.
"""

import time
import unittest

import launch_testing
import pytest

# Fixed frames of the sample robot that urdf_state_publisher puts on /tf_static.
FIXED_EDGES = {
    ('base_footprint', 'base_link'),
    ('base_link', 'laser_link'),
    ('wrist_roll_link', 'tool0'),
    ('tool0', 'gripper_base_link'),
    ('gripper_base_link', 'camera_link'),
}
WAIT_SECONDS = 20.0


@pytest.mark.launch_test
def generate_test_description():
    """Start urdf_state_publisher.launch.py with its defaults: the bundled sample robot."""
    from launch import LaunchDescription
    from launch.actions import IncludeLaunchDescription
    from launch.launch_description_sources import PythonLaunchDescriptionSource
    from launch.substitutions import PathJoinSubstitution
    from launch_ros.substitutions import FindPackageShare
    from launch_testing.actions import ReadyToTest

    return LaunchDescription([
        IncludeLaunchDescription(
            PythonLaunchDescriptionSource(
                PathJoinSubstitution([
                    FindPackageShare('urdf_state_publisher'), 'launch',
                    'urdf_state_publisher.launch.py',
                ])),
        ),
        ReadyToTest(),
    ])


class TestTfStatic(unittest.TestCase):
    """Tests that run while the launched node is up."""

    @classmethod
    def setUpClass(cls):
        """Start a listener node in a context of its own."""
        import rclpy
        from rclpy.context import Context
        from rclpy.executors import SingleThreadedExecutor

        cls.context = Context()
        rclpy.init(context=cls.context)
        cls.node = rclpy.create_node('urdf_state_publisher_smoke_test', context=cls.context)
        cls.executor = SingleThreadedExecutor(context=cls.context)
        cls.executor.add_node(cls.node)

    @classmethod
    def tearDownClass(cls):
        """Stop the listener node and its context."""
        cls.executor.shutdown()
        cls.node.destroy_node()
        cls.context.try_shutdown()

    def test_tf_static_arrives(self):
        """A transient-local /tf_static message carries the sample robot's fixed joints."""
        from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
        from tf2_msgs.msg import TFMessage

        received = []
        qos = QoSProfile(
            depth=1,
            durability=DurabilityPolicy.TRANSIENT_LOCAL,
            reliability=ReliabilityPolicy.RELIABLE)
        subscription = self.node.create_subscription(
            TFMessage, '/tf_static', received.append, qos)
        try:
            deadline = time.monotonic() + WAIT_SECONDS
            while not received and time.monotonic() < deadline:
                self.executor.spin_once(timeout_sec=0.1)
        finally:
            self.node.destroy_subscription(subscription)

        self.assertTrue(received, f'no /tf_static message within {WAIT_SECONDS} s')
        edges = {
            (transform.header.frame_id, transform.child_frame_id)
            for message in received
            for transform in message.transforms
        }
        self.assertLessEqual(FIXED_EDGES, edges)


@launch_testing.post_shutdown_test()
class TestShutdown(unittest.TestCase):
    """Tests that run after the launch has been shut down."""

    def test_exit_code(self, proc_info):
        """The node exits cleanly on the SIGINT that ends the launch."""
        from launch_testing.asserts import assertExitCodes

        assertExitCodes(proc_info)
