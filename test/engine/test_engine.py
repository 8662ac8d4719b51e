"""The engine without ROS: bytes in, the bytes it publishes and the lines it logs out.

The node and the bag command are shells over it; here it is driven with plain calls, a fake
clock and Outputs that record. JointStates come from test/xcdr.py's hand-written CDR; what
the engine publishes is read back with the package's own readers, whose agreement with
independent serializers test_cdr_bytes.py checks.
"""

from __future__ import annotations

import pytest
from xcdr import joint_state_bytes

from urdf_state_publisher.description import DescriptionText
from urdf_state_publisher.engine.health import Level
from urdf_state_publisher.engine.joint_settings import JointSettings
from urdf_state_publisher.engine.parameters import NodeConfig, PARAMETERS
from urdf_state_publisher.engine.state_engine import Outputs, StateEngine
from urdf_state_publisher.errors import StartupError
from urdf_state_publisher.wire.cdr import read_string_message, string_message
from urdf_state_publisher.wire.tf import read_tf_message

pytestmark = pytest.mark.ros_free

from conftest import SAMPLE_URDF  # noqa: E402 - after the mark, as the other ROS-free tests

SAMPLE = SAMPLE_URDF.read_text()
ARM = ['torso_lift_joint', 'shoulder_pan_joint', 'elbow_joint']
# The sample robot's fixed joints and sensors: /tf_static's children, each from its parent.
STATIC = {'base_link': 'base_footprint', 'laser_link': 'base_link', 'tool0': 'wrist_roll_link',
          'gripper_base_link': 'tool0', 'camera_link': 'gripper_base_link',
          'wrist_camera': 'camera_link', 'base_laser': 'laser_link'}


class Recorded:
    """Outputs that keep every message and log line."""

    def __init__(self):
        self.messages: dict[str, list[bytes]] = {}
        self.lines: list[tuple[Level, str]] = []

    def outputs(self, *, joint_states: bool = False, description: bool = True) -> Outputs:
        def keep(topic):
            return lambda data: self.messages.setdefault(topic, []).append(data)
        return Outputs(tf=keep('/tf'), tf_static=keep('/tf_static'),
                       joint_states=keep('joint_states') if joint_states else None,
                       robot_description=keep('robot_description') if description else None,
                       diagnostics=keep('/diagnostics'),
                       log=lambda level, text, kind='': self.lines.append((level, text)))


def engine(recorded: Recorded, **values) -> StateEngine:
    config = NodeConfig.from_values(values)
    return StateEngine(config, JointSettings(), node_name='n', topics=('/joint_states',),
                       outputs=recorded.outputs(), clock=lambda: (77, 5),
                       monotonic=lambda: 0.0)


def test_a_description_puts_its_fixed_frames_on_tf_static_and_itself_on_robot_description():
    recorded = Recorded()
    engine(recorded).load(DescriptionText(SAMPLE))
    [static] = recorded.messages['/tf_static']
    assert {t.child: t.parent for t in read_tf_message(static)} == STATIC
    assert {(t.sec, t.nanosec) for t in read_tf_message(static)} == {(77, 5)}
    assert [read_string_message(d) for d in recorded.messages['robot_description']] == [SAMPLE]
    assert [text for level, text in recorded.lines if level != Level.OK] == []


def test_a_joint_state_is_published_on_tf_with_its_stamp():
    recorded = Recorded()
    state_engine = engine(recorded)
    state_engine.load(DescriptionText(SAMPLE))
    state_engine.joint_state('/joint_states',
                             joint_state_bytes(9, 10, 'x', ARM, [0.1, 0.2, 0.3], [], []))
    [tf] = recorded.messages['/tf']
    transforms = read_tf_message(tf)
    assert {t.child for t in transforms} == {'torso_link', 'shoulder_pan_link', 'forearm_link'}
    assert {(t.sec, t.nanosec) for t in transforms} == {(9, 10)}


@pytest.mark.parametrize('data, why', [
    (b'\x00\x01\x00\x00\xff\xff\xff\x7f', 'do not fit'),  # a string longer than the message
    (b'\x00\x07\x00\x00' + string_message('<robot/>')[4:], 'not plain CDR'),  # XCDR2, no reader
    (b'\x00', 'truncated'),
])
def test_an_unreadable_description_message_is_an_error_line_and_the_model_stays(data, why):
    recorded = Recorded()
    state_engine = engine(recorded)
    state_engine.load(DescriptionText(SAMPLE))
    active = state_engine.active
    state_engine.description_message(data)
    assert state_engine.active is active
    [(level, text)] = [line for line in recorded.lines if line[0] == Level.ERROR]
    assert text.startswith('ignoring a robot description message: unreadable (')
    assert why in text


def test_a_description_message_reloads():
    recorded = Recorded()
    state_engine = engine(recorded)
    state_engine.description_message(string_message(SAMPLE))
    assert state_engine.active is not None
    assert len(recorded.messages['/tf_static']) == 1


def test_unreadable_joint_states_are_counted_never_raised():
    recorded = Recorded()
    state_engine = engine(recorded)
    state_engine.load(DescriptionText(SAMPLE))
    for data in (b'', b'\x00\x01\x00\x00', b'\x00\x07\x00\x00junk', b'\x00\x01\x00\x00' * 9):
        state_engine.joint_state('/joint_states', data)
        state_engine.multi_dof_joint_state(data)
    assert '/tf' not in recorded.messages
    assert state_engine.health.dropped == {'malformed JointState bytes': 4,
                                           'malformed MultiDOFJointState bytes': 4}
    assessment = state_engine.health.assess()
    assert assessment.level == Level.WARN
    assert 'internal error' not in assessment.message
    assert [line.text.split(':')[0] for line in assessment.log if 'MultiDOF' in line.text] == [
        'ignoring a MultiDOFJointState']


def test_a_new_frame_prefix_republishes_tf_static_and_an_unusable_value_is_refused():
    recorded = Recorded()
    state_engine = engine(recorded)
    state_engine.load(DescriptionText(SAMPLE))
    values = {spec.name: getattr(state_engine.config, spec.name) for spec in PARAMETERS}
    assert state_engine.reconfigure({**values, 'frame_prefix': 'left/'}, {'frame_prefix'}) is None
    latest = read_tf_message(recorded.messages['/tf_static'][-1])
    assert {t.child for t in latest} == {'left/' + child for child in STATIC}
    reason = state_engine.reconfigure({**values, 'publish_frequency': -1.0},
                                      {'publish_frequency'})
    assert reason is not None and reason.startswith('publish_frequency must be')
    assert state_engine.config.frame_prefix == 'left/'


def test_a_description_a_shell_starts_with_is_refused_in_one_line_naming_where_it_came_from():
    state_engine = engine(Recorded())
    broken = SAMPLE.replace('<joint name="elbow_joint"', '<joint ', 1)
    with pytest.raises(StartupError) as refused:
        state_engine.load_at_start(DescriptionText(broken), 'file arm.urdf')
    assert str(refused.value).startswith('invalid robot description (file arm.urdf): ')
    assert '\n' not in str(refused.value)
    assert state_engine.active is None
    state_engine.load_at_start(DescriptionText(SAMPLE), 'file arm.urdf')
    assert state_engine.active is not None
