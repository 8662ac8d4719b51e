"""The node's two ways of publishing serialized bytes put out the same /tf, byte for byte.

ros.rclpy_capabilities.bytes_publisher takes the private `Publisher.handle.publish_raw` where the
rclpy has it and the public `Publisher.publish(bytes)` where it does not (as Lyrical's rewritten
publisher may not). Here one node runs as usual and another in a process whose rclpy handles
have no publish_raw; both are sent the same JointStates, and their /tf are compared as bytes.
"""

from __future__ import annotations

import sys

from conftest import SAMPLE_URDF
from node_fixtures import joint_state, LoggedProcess, ns, Probe, SAMPLE_CHILD, wait_until
import pytest
from rclpy.serialization import deserialize_message
from sensor_msgs.msg import JointState
from tf2_msgs.msg import TFMessage
import yaml

from urdf_state_publisher.ros.qos import TF_QOS
from urdf_state_publisher.ros.rclpy_capabilities import bytes_publisher

# The node's process, in an rclpy whose publisher handles have no publish_raw: every other use
# of the handle goes to the real one. It says when bytes first go through Publisher.publish.
PUBLIC_PATH_TAKEN = 'bytes published through Publisher.publish'
WITHOUT_PUBLISH_RAW = f"""PUBLIC_PATH_TAKEN = {PUBLIC_PATH_TAKEN!r}
import sys

import rclpy.publisher


class WithoutPublishRaw:
    def __init__(self, handle):
        self._handle = handle

    def __enter__(self):
        return self._handle.__enter__()

    def __exit__(self, *exc):
        return self._handle.__exit__(*exc)

    def __getattr__(self, name):
        if name == 'publish_raw':
            raise AttributeError(name)
        return getattr(self._handle, name)


handle = rclpy.publisher.Publisher.handle
rclpy.publisher.Publisher.handle = property(lambda self: WithoutPublishRaw(handle.fget(self)))
publish = rclpy.publisher.Publisher.publish
said = []


def publish_saying_so(self, message):
    if isinstance(message, bytes) and not said:
        said.append(True)
        print(PUBLIC_PATH_TAKEN, file=sys.stderr, flush=True)
    return publish(self, message)


rclpy.publisher.Publisher.publish = publish_saying_so
from urdf_state_publisher.ros.process import main
sys.exit(main())
"""
ARM = ('shoulder_pan_joint', 'shoulder_lift_joint', 'elbow_joint', 'wrist_roll_joint',
       'left_finger_joint')
STATES = 12


@pytest.fixture
def handle_without_publish_raw(monkeypatch):
    import rclpy.publisher

    class Handle:
        pass

    monkeypatch.setattr(rclpy.publisher.Publisher, 'handle', property(lambda self: Handle()))


def test_the_private_call_is_taken_where_rclpy_has_it(probe):
    publisher = probe.node.create_publisher(TFMessage, '/publish_paths_check', TF_QOS)
    assert bytes_publisher(publisher) == publisher.handle.publish_raw


def test_the_public_call_is_taken_where_the_handle_has_no_publish_raw(
        probe, handle_without_publish_raw):
    publisher = probe.node.create_publisher(TFMessage, '/publish_paths_check', TF_QOS)
    assert bytes_publisher(publisher) == publisher.publish


def tf_bytes_for_states(tmp_path, probe: Probe, command: list[str], name: str
                        ) -> tuple[dict[int, bytes], str]:
    """The raw /tf of node `name` for STATES JointStates, by stamp, and the node's output.

    The node is stopped after.
    """
    params = tmp_path / f'{name}.yaml'
    params.write_text(yaml.safe_dump({'/**': {'ros__parameters': {
        'description_file': str(SAMPLE_URDF), 'ignore_timestamp': True}}}))
    process = LoggedProcess([*command, '--ros-args', '--params-file', str(params), '-r',
                             f'__node:={name}'], tmp_path / f'{name}.log')
    received: dict[int, bytes] = {}

    def on_tf(data: bytes) -> None:
        transforms = deserialize_message(data, TFMessage).transforms
        if transforms and transforms[0].child_frame_id in SAMPLE_CHILD.values():
            stamp = transforms[0].header.stamp
            received.setdefault(ns(stamp.sec, stamp.nanosec), data)

    subscription = probe.node.create_subscription(TFMessage, '/tf', on_tf, TF_QOS, raw=True)
    publisher = probe.node.create_publisher(JointState, 'joint_states', 10)
    try:
        wait_until(lambda: publisher.get_subscription_count() > 0, 30.0, probe.spin,
                   f'{name} to subscribe ({process.output()[-500:]})')
        for k in range(STATES):
            stamp = ns(10 + k, 1000 * k)
            state = joint_state(stamp, ARM, [0.1 * k - 0.3 * j for j in range(len(ARM))])
            # Sent again until its /tf is back: a best-effort subscription may lose one.
            wait_until(lambda stamp=stamp: stamp in received, 10.0,
                       lambda state=state: publisher.publish(state) or probe.spin(0.05),
                       f'/tf stamped {stamp} from {name}')
    finally:
        probe.node.destroy_subscription(subscription)
        probe.node.destroy_publisher(publisher)
        assert process.stop() == 0, process.output()
    return received, process.output()


def test_both_paths_publish_the_same_tf_bytes(tmp_path, probe):
    private, private_output = tf_bytes_for_states(
        tmp_path, probe, [sys.executable, '-m', 'urdf_state_publisher'], 'publishes_raw')
    public, public_output = tf_bytes_for_states(
        tmp_path, probe, [sys.executable, '-c', WITHOUT_PUBLISH_RAW], 'publishes_public')
    assert PUBLIC_PATH_TAKEN in public_output
    assert PUBLIC_PATH_TAKEN not in private_output
    assert len(private) == STATES
    assert public == private
