"""The relay floor: the simplest rclpy node that turns each JointState into a /tf message.

It receives JointState (same QoS as the node) and publishes an already-built TFMessage of the
same number of transforms, copying only the stamp: what any rclpy node pays for the executor,
deserialization and publishing, before doing any work.
"""

import argparse

from geometry_msgs.msg import TransformStamped
import rclpy
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.qos import qos_profile_sensor_data, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from tf2_msgs.msg import TFMessage


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument('--transforms', type=int, required=True)
    parser.add_argument('--executor', choices=('single', 'events'), default='single',
                        help='SingleThreadedExecutor (every distro) or the experimental '
                             'EventsExecutor (Jazzy and later)')
    args, ros_args = parser.parse_known_args()
    rclpy.init(args=ros_args)
    node = rclpy.create_node('relay')
    message = TFMessage()
    for i in range(args.transforms):
        stamped = TransformStamped()
        stamped.header.frame_id = f'link_{i}'
        stamped.child_frame_id = f'link_{i + 1}'
        stamped.transform.rotation.w = 1.0
        message.transforms.append(stamped)
    publisher = node.create_publisher(
        TFMessage, '/tf', QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE))
    first = message.transforms[0].header

    def relay(state: JointState) -> None:
        first.stamp = state.header.stamp
        publisher.publish(message)

    node.create_subscription(JointState, 'joint_states', relay, qos_profile_sensor_data)
    if args.executor == 'events':
        from rclpy.experimental import EventsExecutor
        executor = EventsExecutor()
    else:
        executor = SingleThreadedExecutor()
    executor.add_node(node)
    try:
        # Not executor.spin(): the experimental EventsExecutor does not return from it when
        # SIGINT shuts the context down. spin_once() only waits while idle.
        while rclpy.ok():
            executor.spin_once(timeout_sec=0.1)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()


if __name__ == '__main__':
    main()
