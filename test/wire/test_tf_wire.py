"""Serialized TFMessage templates: what they publish is what rclpy would have serialized."""

import math

import numpy as np
import pytest
from rclpy.serialization import deserialize_message
from tf2_msgs.msg import TFMessage

from urdf_state_publisher.wire.tf import TransformTemplate


def as_tuples(message):
    """Every field of every transform, in order: what a comparison must see."""
    return [(t.header.stamp.sec, t.header.stamp.nanosec, t.header.frame_id, t.child_frame_id,
             t.transform.translation.x, t.transform.translation.y, t.transform.translation.z,
             t.transform.rotation.x, t.transform.rotation.y, t.transform.rotation.z,
             t.transform.rotation.w) for t in message.transforms]


def expected_tuples(frames, sec, nanosec, values):
    """The fields a TFMessage of `frames` stamped (sec, nanosec) with rows `values` must hold.

    Written from the inputs, not from wire.tf's own message builder, which is what the template
    is serialized from: a frame, stamp or field mixed up there would show on both sides alike.
    """
    return [(sec, nanosec, parent, child, *map(float, row))
            for (parent, child), row in zip(frames, values, strict=True)]


@pytest.mark.parametrize('frames', [
    [],
    [('base', 'a')],
    [(f'link_{i}', f'link_{i + 1}') for i in range(60)],
    # names of every length modulo 8, so the doubles sit at every alignment; UTF-8 names
    [('p' * k, 'ü' * k + 'ZZ\x7f') for k in range(1, 17)],
    [('robot1/base_link', 'robot1/base_link')],
])
def test_template_bytes_decode_to_the_same_message(frames):
    template = TransformTemplate(frames)
    rng = np.random.default_rng(len(frames))
    for sec, nanosec in ((0, 0), (1_700_000_000, 999_999_999), (-5, 3)):
        values = rng.normal(size=(len(frames), 7)) * 10
        decoded = deserialize_message(template.serialize(sec, nanosec, values), TFMessage)
        assert as_tuples(decoded) == expected_tuples(frames, sec, nanosec, values)


def test_template_keeps_extreme_finite_values_exact():
    template = TransformTemplate([('a', 'b')])
    values = np.array([[1e308, -1e-308, 0.0, -0.0, math.pi, 5e-324, 1.0]])
    decoded = deserialize_message(template.serialize(7, 8, values), TFMessage)
    t = decoded.transforms[0].transform
    assert [t.translation.x, t.translation.y, t.translation.z, t.rotation.x, t.rotation.y,
            t.rotation.z, t.rotation.w] == values[0].tolist()


def test_a_template_is_reusable():
    frames = [('a', 'b'), ('b', 'c')]
    template = TransformTemplate(frames)
    first = template.serialize(1, 2, np.ones((2, 7)))
    second = template.serialize(3, 4, np.zeros((2, 7)))
    # The first bytes are still the first message once the template has written the second.
    assert as_tuples(deserialize_message(first, TFMessage)) == expected_tuples(
        frames, 1, 2, np.ones((2, 7)))
    assert as_tuples(deserialize_message(second, TFMessage)) == expected_tuples(
        frames, 3, 4, np.zeros((2, 7)))
