"""Which given parameters the node does not know, and which of those are near misses (ROS-free)."""

from __future__ import annotations

from pathlib import Path

import pytest

from urdf_state_publisher.engine.unknown_parameters import unknown_parameters

pytestmark = pytest.mark.ros_free

PARAMETERS_PAGE = Path(__file__).resolve().parents[2] / 'doc' / 'parameters.md'


def documented_names() -> list[str]:
    """The names in the parameter table of doc/parameters.md."""
    section = PARAMETERS_PAGE.read_text().split('# Parameters\n', 1)[1].split('\n## ', 1)[0]
    return [line.split('`')[1] for line in section.splitlines() if line.startswith('| `')]


# What a node may be given that it knows besides its own parameters (the page's table),
# written out here.
KNOWN_GIVEN = (
    'use_sim_time', 'start_type_description_service',
    'qos_overrides./joint_states.subscription.depth', 'qos_overrides./tf.publisher.history',
    'delta', 'zeros.elbow_joint', 'dependent_joints.wrist_roll_joint.parent',
    'dependent_joints.wrist_roll_joint.factor',
)


def test_the_nodes_rclpys_and_joint_state_publishers_parameters_are_known():
    documented = documented_names()
    assert 'publish_frequency' in documented  # the table was found
    given = documented + list(KNOWN_GIVEN)
    assert unknown_parameters(given) == ((), ())


@pytest.mark.parametrize('given, meant', [
    ('publish_frequncy', 'publish_frequency'),  # a letter missing
    ('ignore_timestmp', 'ignore_timestamp'),
    ('frame_prefx', 'frame_prefix'),
    ('source_lists', 'source_list'),  # a letter added
    ('use_mimic_tag', 'use_mimic_tags'),
    ('robot_descripton', 'robot_description'),
    ('ignore_time_stamp', 'ignore_timestamp'),  # a separator added
    ('Publish_Frequency', 'publish_frequency'),  # names are case-sensitive
    ('rates', 'rate'),
    ('use_sim_tim', 'use_sim_time'),  # rclpy's
    ('zero.elbow_joint', 'zeros.elbow_joint'),  # joint_state_publisher's groups
    ('dependant_joints.a.parent', 'dependent_joints.a.parent'),
    ('qos_overides./tf.publisher.depth', 'qos_overrides./tf.publisher.depth'),
])
def test_a_near_miss_names_what_was_meant(given, meant):
    result = unknown_parameters([given, 'publish_frequency'])
    assert result.near_misses == ((given, meant),)
    assert result.others == ()
    assert result.warnings() == [
        f'{given}: not a parameter of this node; did you mean {meant}?']
    assert result.info() is None


def test_names_close_to_none_are_another_nodes_and_listed_once_at_info():
    # What a bringup's shared /** section holds for other nodes.
    others = ['update_rate', 'wheel_separation', 'publish_rate', 'odom_frame', 'base_frame',
              'tf_prefix', 'publish_tf', 'joints', 'controller_manager.update_rate', 'gui',
              'publish_frequency_hz']
    result = unknown_parameters(others + ['use_sim_time'])
    assert result.near_misses == ()
    assert result.warnings() == []
    assert result.others == tuple(sorted(others))
    assert result.info() == (
        'parameters given that this node does not read (for other nodes, as a /** section '
        'shares them): base_frame, controller_manager.update_rate, gui, joints, odom_frame, '
        'publish_frequency_hz, publish_rate, publish_tf, tf_prefix, update_rate, '
        'wheel_separation')


def test_each_unknown_name_is_said_once_in_name_order():
    result = unknown_parameters(['zz_other', 'publish_frequncy', 'aa_other', 'zz_other',
                                 'ignore_timestmp'])
    assert [name for name, _ in result.near_misses] == ['ignore_timestmp', 'publish_frequncy']
    assert result.others == ('aa_other', 'zz_other')
