"""The relay floors: rclpy nodes that turn each JointState into a /tf message, and nothing else.

Each receives JointState (SensorDataQoS, as the node does) and publishes a TFMessage of
--transforms transforms built once, copying only the JointState's stamp into it: what an rclpy
node pays to receive and publish, before doing any kinematics.

  single          SingleThreadedExecutor, message objects in and out, the stamp copied into
                  the first transform: the plain rclpy relay, the baseline of the ratios
  events          the same callback on rclpy.experimental.EventsExecutor
  floor-events    EventsExecutor, a raw=True subscription, publish(bytes) of a TFMessage
                  serialized once in which every transform's stamp is patched
  floor-waitset   the floor-events relay without an executor: one reused WaitSet, take, publish
  bare            no subscription and no publisher: an rclpy node that only spins, whose
                  memory is the baseline of the node's
  floor-decimating  the floor-events relay publishing only when --interval-ns of stamps have
                  passed since its last publication: the floor of the default configuration
                  (publish_frequency 20 Hz), where most JointStates are received and not published

--topics names the JointState topics to take (default joint_states): the floors of a node that
merges several sources read them all; floor-decimating then decimates each on its own, as the
node rate-limits each source's joints.

Stops on SIGINT or SIGTERM with status 0.
"""

import argparse
import faulthandler
import signal
import struct

from geometry_msgs.msg import TransformStamped
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy
from rclpy.qos import qos_profile_sensor_data, QoSProfile, ReliabilityPolicy
from rclpy.serialization import serialize_message
from rclpy.signals import SignalHandlerOptions
from sensor_msgs.msg import JointState
from tf2_msgs.msg import TFMessage

from urdf_state_publisher.ros.process import TEARDOWN_LIMIT_S

MODES = ('single', 'events', 'floor-events', 'floor-waitset', 'floor-decimating', 'bare')
TF_QOS = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)  # the node's /tf QoS
POLL_NS = 100_000_000  # how long a stop signal may wait for the loop to notice it
# The stamp of a JointState's header: after the 4-byte CDR encapsulation header.
JOINT_STATE_STAMP = slice(4, 12)
STAMP = struct.Struct('<iI')


def tf_message(transforms: int, sec: int = 0) -> TFMessage:
    """A TFMessage of `transforms` identity transforms, each stamped (sec + index, 0)."""
    message = TFMessage()
    for i in range(transforms):
        stamped = TransformStamped()
        stamped.header.stamp.sec = sec + i
        stamped.header.frame_id = f'link_{i}'
        stamped.child_frame_id = f'link_{i + 1}'
        stamped.transform.rotation.w = 1.0
        message.transforms.append(stamped)
    return message


def tf_pieces(transforms: int) -> list[bytes]:
    """The serialized TFMessage cut at each stamp: stamp.join(pieces) is the stamped message.

    Every stamp is a distinct sentinel, found by search; the pieces hold everything else.
    """
    base = 0x5A5A0000  # stamps base + i: byte patterns that no frame name or double holds
    data = serialize_message(tf_message(transforms, base))
    pieces, start = [], 0
    for i in range(transforms):
        offset = data.index((base + i).to_bytes(4, 'little') + bytes(4), start)
        pieces.append(data[start:offset])
        start = offset + 8
    return pieces + [data[start:]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--transforms', type=int, required=True)
    parser.add_argument('--mode', choices=MODES, default='single')
    parser.add_argument('--interval-ns', type=int, default=50_000_000,
                        help='floor-decimating: stamps between publications (default 20 Hz)')
    parser.add_argument('--topics', nargs='+', default=['joint_states'],
                        help='the JointState topics to subscribe to (default joint_states)')
    args, ros_args = parser.parse_known_args()
    # A flag polled by the loops, as the node's own process does: rclpy's handlers would shut
    # the context down under a running wait.
    stopping = []
    for number in (signal.SIGINT, signal.SIGTERM):
        signal.signal(number, lambda *_: stopping.append(True))
    rclpy.init(args=ros_args, signal_handler_options=SignalHandlerOptions.NO)
    node = rclpy.create_node('relay')
    if args.mode == 'bare':
        spin(node, args.mode, stopping)
        return
    publisher = node.create_publisher(TFMessage, '/tf', TF_QOS)
    raw = args.mode.startswith('floor')
    if args.mode == 'floor-decimating':
        pieces = tf_pieces(args.transforms)
        interval = args.interval_ns

        def decimating(last: list[int]):
            def relay(data: bytes) -> None:
                sec, nanosec = STAMP.unpack_from(data, 4)
                stamp = sec * 1_000_000_000 + nanosec
                if stamp >= last[0] + interval:
                    last[0] = stamp
                    publisher.publish(data[JOINT_STATE_STAMP].join(pieces))
            return relay
    elif raw:
        pieces = tf_pieces(args.transforms)

        def relay(data: bytes) -> None:
            publisher.publish(data[JOINT_STATE_STAMP].join(pieces))
    else:
        message = tf_message(args.transforms)
        # The first transform only, as this relay always did: the baseline the ratios (and
        # the C++ figure quoted with them) were measured against.
        first = message.transforms[0].header

        def relay(state: JointState) -> None:
            first.stamp = state.header.stamp
            publisher.publish(message)

    subscriptions = [node.create_subscription(
        JointState, topic, decimating([-(2**62)]) if args.mode == 'floor-decimating' else relay,
        qos_profile_sensor_data, raw=raw) for topic in args.topics]
    if args.mode == 'floor-waitset':
        [subscription] = subscriptions
        try:
            wait_set = _rclpy.WaitSet(1, 0, 0, 0, 0, 0, node.context.handle)
            handle = subscription.handle
            while not stopping:
                wait_set.clear_entities()
                wait_set.add_subscription(handle)
                wait_set.wait(POLL_NS)
                while (taken := handle.take_message(JointState, True)) is not None:
                    relay(taken[0])
        finally:
            tear_down(node)
    else:
        spin(node, args.mode, stopping)


def spin(node, mode: str, stopping: list) -> None:
    """Run `node`'s callbacks on the executor of `mode` until a stop signal, then shut down."""
    try:
        if mode == 'single':
            executor = SingleThreadedExecutor()
        else:
            from rclpy.experimental import EventsExecutor
            executor = EventsExecutor()
        executor.add_node(node)
        # spin_once, not spin(): the EventsExecutor's spin() ignores signals.
        while not stopping:
            executor.spin_once(timeout_sec=POLL_NS / 1e9)
        executor.shutdown()
    finally:
        tear_down(node)


def tear_down(node) -> None:
    """Destroy `node` and shut ROS down, watched as the node's own teardown is (ros/process.py).

    A teardown hung in the middleware ends the relay with status 1 and its stack in the log.
    """
    faulthandler.dump_traceback_later(TEARDOWN_LIMIT_S, exit=True)
    node.destroy_node()
    rclpy.try_shutdown()
    faulthandler.cancel_dump_traceback_later()


if __name__ == '__main__':
    main()
