"""joint_state_publisher's per-joint parameters without ROS: zeros, dependent_joints, delta.

Expected values are computed here from the parameters and the URDF text, never read back from
the model the settings build.
"""

from __future__ import annotations

import pytest

from urdf_state_publisher.description import parse_description
from urdf_state_publisher.engine.joint_settings import JointSettings
from urdf_state_publisher.engine.parameters import NodeConfig, ParameterValueError

pytestmark = pytest.mark.ros_free  # also runs where no ROS 2 is installed


def chain_urdf(*, follower_mimic: bool = True) -> str:
    """joint_state_publisher's mimic chain: j23 = j12 + 0.1, j34 = -j23; a fixed and a
    continuous joint, and a prismatic one whose range excludes 0."""
    mimic = '<mimic joint="j12" offset="0.1"/>' if follower_mimic else ''
    return f"""<robot name="chain">
      <link name="l1"/><link name="l2"/><link name="l3"/><link name="l4"/><link name="l5"/>
      <link name="l6"/><link name="l7"/>
      <joint name="j12" type="revolute"><parent link="l1"/><child link="l2"/>
        <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
      <joint name="j23" type="revolute"><parent link="l2"/><child link="l3"/>{mimic}
        <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
      <joint name="j34" type="revolute"><parent link="l3"/><child link="l4"/>
        <mimic joint="j23" multiplier="-1"/>
        <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
      <joint name="fixed" type="fixed"><parent link="l4"/><child link="l5"/></joint>
      <joint name="wheel" type="continuous"><parent link="l5"/><child link="l6"/></joint>
      <joint name="lift" type="prismatic"><parent link="l6"/><child link="l7"/>
        <limit lower="0.2" upper="0.6" effort="1" velocity="1"/></joint>
    </robot>"""


CONFIG = NodeConfig.from_values({'publish_joint_states': True})


def settings(given: dict, config: NodeConfig = CONFIG) -> JointSettings:
    return JointSettings.from_parameters(given, config)


def assert_one_line_naming(error: Exception, fragments: list[str]) -> None:
    """`error` is one line that starts with fragments[0] and holds the others."""
    message = str(error)
    assert '\n' not in message
    assert message.startswith(fragments[0])
    for fragment in fragments[1:]:
        assert fragment in message, message


def defaults(given: dict, text: str = chain_urdf(), **options) -> dict[str, float]:
    model = settings(given, **options).model(parse_description(text),
                                             use_smallest_joint_limits=False)
    return model.default_positions()


def test_without_settings_the_defaults_are_the_descriptions():
    # joint_state_publisher's test: j12 0, j23 0 + 0.1, j34 -(0.1); lift mid-range
    assert defaults({}) == pytest.approx(
        {'j12': 0.0, 'j23': 0.1, 'j34': -0.1, 'wheel': 0.0, 'lift': 0.4})


def test_zeros_set_the_default_of_a_joint_and_its_followers():
    assert defaults({'zeros.j12': 0.3, 'zeros.wheel': -2, 'zeros.lift': 0.25}) == pytest.approx(
        {'j12': 0.3, 'j23': 0.3 + 0.1, 'j34': -(0.3 + 0.1), 'wheel': -2.0, 'lift': 0.25})


def test_zeros_are_the_held_joints():
    assert settings({'zeros.j12': 0.3, 'zeros.lift': 0.3, 'rate': 5}).held == {'j12', 'lift'}


def test_dependent_joints_add_a_mimic_relation_with_factor_and_offset():
    text = chain_urdf(follower_mimic=False)
    given = {'zeros.j12': 0.5, 'dependent_joints.j23.parent': 'j12',
             'dependent_joints.j23.factor': -0.5, 'dependent_joints.j23.offset': 0.2,
             'dependent_joints.lift.parent': 'wheel', 'dependent_joints.lift.factor': 0.1,
             'zeros.wheel': 3.0}
    j23 = -0.5 * 0.5 + 0.2
    assert defaults(given, text) == pytest.approx(
        {'j12': 0.5, 'j23': j23, 'j34': -j23, 'wheel': 3.0, 'lift': 0.1 * 3.0})


def test_dependent_joints_factor_and_offset_default_to_one_and_zero():
    text = chain_urdf(follower_mimic=False)
    given = {'zeros.j12': 0.5, 'dependent_joints.j23.parent': 'j12'}
    assert defaults(given, text)['j23'] == pytest.approx(0.5)


def test_without_mimic_tags_every_joint_is_independent():
    config = NodeConfig.from_values({'use_mimic_tags': False})
    given = {'zeros.j34': 0.7, 'zeros.j12': 0.3}
    assert defaults(given, config=config) == pytest.approx(
        {'j12': 0.3, 'j23': 0.0, 'j34': 0.7, 'wheel': 0.0, 'lift': 0.4})
    model = settings(given, config).model(parse_description(chain_urdf()),
                                          use_smallest_joint_limits=False)
    assert model.mimic_joints == ()


def test_a_dependent_joint_may_replace_a_dropped_mimic_tag():
    config = NodeConfig.from_values({'use_mimic_tags': False})
    given = {'zeros.j12': 0.4, 'dependent_joints.j34.parent': 'j12',
             'dependent_joints.j34.factor': 2.0}
    assert defaults(given, config=config)['j34'] == pytest.approx(0.8)


@pytest.mark.parametrize('given, text, fragments', [
    ({'zeros.elbow': 0.1}, None, ['zeros.elbow', "no joint 'elbow'"]),
    ({'zeros.fixed': 0.1}, None, ['zeros.fixed', 'fixed']),
    ({'zeros.j23': 0.1}, None, ['zeros.j23', "mimics joint 'j12'", 'computed']),
    ({'zeros.j12': 1.5}, None, ['zeros.j12', 'outside the limits', '[-1, 1]']),
    ({'zeros.lift': 0.0}, None, ['zeros.lift', '[0.2, 0.6]']),
    ({'dependent_joints.j23.parent': 'j12'}, None,
     ['dependent_joints.j23', "already mimics joint 'j12'", 'use_mimic_tags']),
    ({'dependent_joints.ghost.parent': 'j12'}, None, ['dependent_joints.ghost', "'ghost'"]),
    ({'dependent_joints.fixed.parent': 'j12'}, None, ['dependent_joints.fixed', 'fixed']),
    ({'dependent_joints.wheel.parent': 'nowhere'}, None,
     ['dependent_joints.wheel.parent', "no joint 'nowhere'"]),
    ({'dependent_joints.wheel.parent': 'fixed'}, None,
     ['dependent_joints.wheel.parent', "'fixed' is fixed"]),
    ({'dependent_joints.j12.parent': 'j34'}, None,
     ['dependent_joints: mimic cycle', 'j12', 'j23', 'j34']),
    ({'dependent_joints.j12.parent': 'j12'}, None, ['dependent_joints: mimic cycle', 'j12']),
    ({'dependent_joints.j23.parent': 'wheel', 'dependent_joints.wheel.parent': 'j23'},
     chain_urdf(follower_mimic=False), ['dependent_joints: mimic cycle', 'wheel', 'j23']),
], ids=['zeros_unknown', 'zeros_fixed', 'zeros_follower', 'zeros_outside', 'zeros_outside_mid',
        'dependent_has_mimic', 'dependent_unknown', 'dependent_fixed', 'parent_unknown',
        'parent_fixed', 'cycle_through_tags', 'self_cycle', 'cycle_of_parameters'])
def test_settings_that_do_not_fit_the_description_name_the_parameter(given, text, fragments):
    with pytest.raises(ParameterValueError) as error:
        settings(given).model(parse_description(text or chain_urdf()),
                              use_smallest_joint_limits=False)
    assert_one_line_naming(error.value, fragments)


@pytest.mark.parametrize('given, fragments', [
    ({'zeros.j12': 'high'}, ['zeros.j12 must be a finite number', "'high'"]),
    ({'zeros.j12': True}, ['zeros.j12 must be a finite number']),
    ({'zeros.j12': float('nan')}, ['zeros.j12 must be a finite number']),
    ({'zeros': 0.0}, ['zeros: give one value per joint']),
    ({'dependent_joints.j23.factor': 2.0}, ['dependent_joints.j23: no parent',
                                             'dependent_joints.j23.parent']),
    ({'dependent_joints.j23.parent': 3}, ['dependent_joints.j23.parent must name']),
    ({'dependent_joints.j23.parent': 'j12', 'dependent_joints.j23.multiplier': 2.0},
     ['dependent_joints.j23.multiplier: not a dependent joint field']),
    ({'dependent_joints.j23': 'j12'}, ['dependent_joints.j23: not a dependent joint field']),
    ({'dependent_joints.j23.parent': 'j12', 'dependent_joints.j23.offset': 'x'},
     ['dependent_joints.j23.offset must be a finite number']),
    ({'delta': 0.1}, ['delta: this node does not sweep', 'source_list']),
    ({'delta': 'x'}, ['delta must be a finite number']),
    ({'publish_default_positions': False}, ['publish_default_positions: false does not go']),
], ids=['zeros_text', 'zeros_bool', 'zeros_nan', 'zeros_bare', 'no_parent', 'parent_number',
        'unknown_field', 'no_field', 'offset_text', 'delta', 'delta_text',
        'no_default_positions'])
def test_parameters_of_the_wrong_form_are_refused_naming_them(given, fragments):
    with pytest.raises(ParameterValueError) as error:
        settings(given)
    assert_one_line_naming(error.value, fragments)


@pytest.mark.parametrize('given', [
    {'delta': 0.0}, {'delta': 0},  # no sweep: what this node does
    {'publish_default_positions': True},
], ids=['delta_zero', 'delta_zero_int', 'default_positions_true'])
def test_parameters_that_mean_what_the_node_does_are_accepted(given):
    assert settings(given) == JointSettings()  # nothing held, no relation added


def test_default_positions_false_is_refused_only_with_the_resolved_output():
    rsp_mode = NodeConfig.from_values({})
    assert settings({'publish_default_positions': False}, rsp_mode) == JointSettings()


def test_joint_names_with_dots_and_slashes_are_read_whole():
    given = {'zeros.kirk/spock': 0.2, 'dependent_joints.a.b.parent': 'kirk/spock',
             'dependent_joints.a.b.factor': 2.0}
    result = settings(given)
    assert result.zeros == {'kirk/spock': 0.2}
    assert result.dependent_joints['a.b'].joint == 'kirk/spock'
    assert result.dependent_joints['a.b'].multiplier == 2.0
    assert set(result.parameter_names) == {
        'zeros.kirk/spock', 'dependent_joints.a.b.parent', 'dependent_joints.a.b.factor'}
