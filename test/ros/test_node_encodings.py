"""JointStates in other encodings, through the node over DDS: big-endian CDR and XCDR2.

rclpy writes little-endian plain CDR only; the other encodings are written by test/xcdr.py
(XTypes rules) and published as they are with `publish(bytes)`, which the middleware sends
unchanged. Big-endian plain CDR is read by the node's own reader. XCDR2 goes to rclpy's
deserializer: what it reads, the node publishes exactly as the same values in plain CDR and
counts in /diagnostics; what it refuses is malformed, named by its encapsulation. Which of the
two is the middleware's to say (Fast DDS's deserializer refuses XCDR2 JointStates), so the test
asks the same deserializer in this process, and requires it to read the right values when it
reads anything: a fallback that read wrong values would move the robot's frames.
"""

import time

from conftest import SAMPLE_URDF
from node_fixtures import (
    deeper,
    node_link_fixture,
    ns,
    RELIABLE,
    transforms_at,
    wait_for_log,
)
import pytest
from rclpy.serialization import deserialize_message
from sensor_msgs.msg import JointState
from xcdr import APPENDABLE, FINAL, joint_state_bytes

NAME = 'encodings'
JOINTS = {'torso_lift_joint': 0.125, 'shoulder_pan_joint': -0.75, 'elbow_joint': 1.0625,
          'wrist_roll_joint': 2.5}
# Lossless: reliable and 100 deep at both ends, so a state published before one whose /tf is
# seen has been processed (see test_node_bad_input.py).
module_link = node_link_fixture(
    NAME, {'robot_description': SAMPLE_URDF.read_text(), 'qos_overrides': {
        f'/{NAME}/joint_states': {'subscription': {'reliability': 'reliable', 'depth': 100}}}},
    fixture='module_link', source_qos=deeper(RELIABLE, 100))


def encoded(sec: int, **encoding) -> bytes:
    return joint_state_bytes(sec, 0, 'base', list(JOINTS), list(JOINTS.values()), **encoding)


def rows(link, sec: int) -> list:
    """The transforms of the node's /tf message stamped `sec`: frame, translation, rotation."""
    [message] = link.expect(ns(sec), timeout=15)
    return sorted((t.header.frame_id, t.child_frame_id,
                   (t.transform.translation.x, t.transform.translation.y,
                    t.transform.translation.z),
                   (t.transform.rotation.x, t.transform.rotation.y, t.transform.rotation.z,
                    t.transform.rotation.w)) for t in message.transforms)


def diagnostics_after(link, publisher, sec: int) -> dict:
    """The node's /diagnostics once every state published so far has been counted.

    A plain state stamped `sec` is published last; once it is on /tf, the node has processed
    the ones before it (a lossless path), so a status stamped later counts them all.
    """
    publisher.publish(encoded(sec))
    link.expect(ns(sec), timeout=15)
    seen = time.time()
    return link.wait_for_diagnostics(lambda v: v['_stamp'] > seen, timeout=15,
                                     what='a status made after the states were processed')


@pytest.fixture
def link(module_link):
    module_link.joint_states()
    module_link.begin()
    return module_link


def test_big_endian_cdr_gives_the_transforms_of_little_endian(link):
    publisher = link.joint_states()
    publisher.publish(encoded(100))
    publisher.publish(encoded(101, big_endian=True))

    assert encoded(101, big_endian=True)[:2] == b'\x00\x00'
    assert rows(link, 100) == rows(link, 101)


def published_as_rclpy_reads_it_or_reported(link, publisher, data: bytes, sec: int) -> None:
    """`data` (stamped `sec`) is on /tf as the same state in plain CDR and counted as read by
    rclpy, if this process's rclpy deserializer reads it; else dropped as malformed, named by
    its encapsulation. Which of the two is the middleware's to say, the assertions are not."""
    header = data[:2].hex()
    key = f'deserialized by rclpy (encapsulation {header})'
    before = diagnostics_after(link, publisher, sec - 2)
    try:
        read = deserialize_message(data, JointState)
    except Exception:  # noqa: BLE001 - what rclpy raises is the middleware's
        read = None
    if read is not None:  # a fallback must read the values, not just something
        assert (read.header.stamp.sec, list(read.name), list(read.position)) == (
            sec, list(JOINTS), list(JOINTS.values()))

    publisher.publish(encoded(sec - 1))
    publisher.publish(data)
    after = diagnostics_after(link, publisher, sec + 1)

    def counted(name: str) -> int:
        return int(after.get(name, '0')) - int(before.get(name, '0'))

    if read is not None:
        assert rows(link, sec) == rows(link, sec - 1)
        assert counted(key) == 1
        assert counted('dropped: malformed JointState bytes') == 0
    else:
        assert transforms_at(link.tf, ns(sec)) == []  # processed before the state of sec + 1
        assert counted('dropped: malformed JointState bytes') == 1
        assert key not in after
        wait_for_log(link.process, link.probe,
                     f"encapsulation {header} is not plain CDR, and rclpy's deserializer "
                     'cannot read it either', timeout=15)


@pytest.mark.parametrize('extensibility, big_endian', [
    (FINAL, False), (FINAL, True), (APPENDABLE, False), (APPENDABLE, True)],
    ids=['PLAIN_CDR2 LE', 'PLAIN_CDR2 BE', 'DELIMIT_CDR2 LE', 'DELIMIT_CDR2 BE'])
def test_xcdr2_is_published_as_rclpy_reads_it_or_reported_as_unreadable(link, extensibility,
                                                                        big_endian):
    data = encoded(201, big_endian=big_endian, version=2, extensibility=extensibility)
    published_as_rclpy_reads_it_or_reported(link, link.joint_states(), data, 201)


def test_a_plain_body_under_pl_cdr_is_published_as_rclpy_reads_it_or_reported(link):
    """The fallback's other branch where XCDR2 takes one: a plain CDR body under encapsulation
    00 03 (PL_CDR little-endian), a header the node's reader leaves to rclpy. Fast DDS's
    deserializer reads it as plain CDR, so on Fast DDS this is the reading branch the XCDR2
    cases do not reach; Cyclone DDS's refuses it (`rmw_serialize: invalid data size`), and
    the node must then report it as malformed, as it does XCDR2 on Fast DDS."""
    data = b'\x00\x03' + encoded(301)[2:]
    published_as_rclpy_reads_it_or_reported(link, link.joint_states(), data, 301)
