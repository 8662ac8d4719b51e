"""A node's --ros-args read as rcl and rclpy read them: parameters, remaps, name (ROS-free).

The expectations are rcl's documented rules, written out here: params files per node name
with `/*` and `/**` wildcards (rclpy matches the name as a regular expression made of them),
`-p` into `/**`, entries applied in the order they first appeared; remaps expanded in the
node's namespace, the first matching one winning, node-specific rules for that node only.
"""

from __future__ import annotations

import pytest
import yaml

from urdf_state_publisher.engine.ros_arguments import parse_ros_arguments, RosArgumentsError

pytestmark = pytest.mark.ros_free


def params_file(tmp_path, document: dict, name: str = 'params.yaml') -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return str(path)


def test_without_arguments_the_node_has_its_name_the_root_namespace_and_nothing_else():
    parsed = parse_ros_arguments([], 'urdf_state_publisher')
    assert parsed.fully_qualified_name == '/urdf_state_publisher'
    assert parsed.parameters() == {}
    assert parsed.resolve_topic('joint_states') == '/joint_states'


def test_p_values_are_yaml():
    parsed = parse_ros_arguments(
        ['-p', 'publish_frequency:=50', '-p', 'ignore_timestamp:=true', '-p',
         "source_list:=['a/joint_states', b]", '-p', 'frame_prefix:=left/',
         '--param', 'robot_description:=<robot name="r"/>'], 'n')
    assert parsed.parameters() == {
        'publish_frequency': 50, 'ignore_timestamp': True,
        'source_list': ['a/joint_states', 'b'], 'frame_prefix': 'left/',
        'robot_description': '<robot name="r"/>'}


def test_a_params_file_gives_the_sections_that_match_the_node_flattened(tmp_path):
    path = params_file(tmp_path, {
        '/**': {'ros__parameters': {'use_sim_time': True, 'publish_frequency': 10.0}},
        'state_publisher': {'ros__parameters': {'publish_frequency': 50.0,
                                                'zeros': {'elbow': 0.5}}},
        '/robots/state_publisher': {'ros__parameters': {'frame_prefix': 'only/in/robots'}},
        '/*/state_publisher': {'ros__parameters': {'rate': 5.0}},
        '/**/state_publisher': {'ros__parameters': {'ignore_timestamp': True}},
        'controller_manager': {'ros__parameters': {'update_rate': 100}},
    })
    root = parse_ros_arguments(['--params-file', path, '-r', '__node:=state_publisher'], 'n')
    assert root.parameters() == {'use_sim_time': True, 'publish_frequency': 50.0,
                                 'zeros.elbow': 0.5, 'ignore_timestamp': True}
    nested = parse_ros_arguments(['--params-file', path, '-r', '__node:=state_publisher',
                                  '-r', '__ns:=/robots'], 'n')
    # A name without a slash is the node's in the root namespace only.
    assert nested.parameters() == {'use_sim_time': True, 'publish_frequency': 10.0,
                                   'frame_prefix': 'only/in/robots', 'rate': 5.0,
                                   'ignore_timestamp': True}


def test_entries_apply_in_the_order_they_first_appeared(tmp_path):
    # '/**' first appears in the first file: a later -p, which writes into '/**', still
    # loses to the node's own section of the second file, as in rcl.
    first = params_file(tmp_path, {'/**': {'ros__parameters': {'rate': 1.0}}}, 'first.yaml')
    second = params_file(tmp_path, {'n': {'ros__parameters': {'rate': 2.0}},
                                    '/**': {'ros__parameters': {'rate': 3.0}}}, 'second.yaml')
    parsed = parse_ros_arguments(['--params-file', first, '--params-file', second,
                                  '-p', 'rate:=4.0'], 'n')
    assert parsed.parameters() == {'rate': 2.0}
    assert parse_ros_arguments(['-p', 'rate:=4.0', '--params-file', second], 'n'
                               ).parameters() == {'rate': 2.0}
    assert parse_ros_arguments(['--params-file', first, '-p', 'rate:=4.0'], 'n'
                               ).parameters() == {'rate': 4.0}


def test_remaps_resolve_topics_in_the_namespace_first_match_winning():
    parsed = parse_ros_arguments(
        ['-r', '__ns:=/robot1', '-r', 'joint_states:=arm/joint_states',
         '-r', '/robot1/joint_states:=/elsewhere', '-r', 'other_node:tf:=/never',
         '-r', 'n:robot_description:=/descriptions/robot1', '-r', '~/private:=/p'], 'n')
    assert parsed.resolve_topic('joint_states') == '/robot1/arm/joint_states'
    assert parsed.resolve_topic('/tf') == '/tf'
    assert parsed.resolve_topic('tf') == '/robot1/tf'
    assert parsed.resolve_topic('robot_description') == '/descriptions/robot1'
    assert parsed.resolve_topic('~/private') == '/p'
    assert parsed.resolve_topic('multi_dof_joint_states') == '/robot1/multi_dof_joint_states'


def test_the_node_is_renamed_and_moved():
    parsed = parse_ros_arguments(['-r', '__name:=left', '-r', '__ns:=fleet'], 'n')
    assert (parsed.node_name, parsed.namespace) == ('left', '/fleet')
    assert parsed.resolve_topic('~/x') == '/fleet/left/x'


def test_flags_with_no_effect_here_are_taken():
    parsed = parse_ros_arguments(['--ros-args', '--log-level', 'debug',
                                  '--disable-rosout-logs', '-p', 'rate:=2.0', '--'], 'n')
    assert parsed.parameters() == {'rate': 2.0}


@pytest.mark.parametrize('arguments, message', [
    (['-p', 'rate'], '-p rate: give it as NAME:=VALUE'),
    (['-p'], '-p: give a value after it'),
    (['-r', 'joint_states'], '-r joint_states: give it as FROM:=TO'),
    (['--params-file', '/no/such/file.yaml'], '--params-file /no/such/file.yaml: cannot read'),
    (['--use-sim-time', 'x'], '--use-sim-time: not a --ros-args flag this command takes'),
    (['-p', 'rate:=[1'], '-p rate:=[1: the value is not YAML'),
])
def test_unusable_arguments_are_named(arguments, message):
    with pytest.raises(RosArgumentsError, match='^' + message.replace('[', r'\[')):
        parse_ros_arguments(arguments, 'n')


def test_a_params_file_of_another_shape_is_named(tmp_path):
    path = params_file(tmp_path, {'n': {'parameters': {'rate': 1}}})
    with pytest.raises(RosArgumentsError, match="'n' has no 'ros__parameters' mapping"):
        parse_ros_arguments(['--params-file', path], 'n')


def test_an_invalid_topic_name_is_named():
    parsed = parse_ros_arguments([], 'n')
    with pytest.raises(RosArgumentsError, match="'/a b' is not a valid topic name"):
        parsed.resolve_topic('a b')


def test_a_params_file_may_nest_the_namespace_above_the_node(tmp_path):
    path = params_file(tmp_path, {
        'robot1': {'state_publisher': {'ros__parameters': {'frame_prefix': 'robot1/'}}},
        'robot2': {'state_publisher': {'ros__parameters': {'frame_prefix': 'robot2/'}}}})
    parsed = parse_ros_arguments(['--params-file', path, '-r', '__node:=state_publisher',
                                  '-r', '__ns:=/robot1'], 'n')
    assert parsed.parameters() == {'frame_prefix': 'robot1/'}


def test_a_rule_for_another_nodes_name_or_namespace_leaves_this_one_as_it_is():
    parsed = parse_ros_arguments(['-r', 'controller_manager:__node:=cm',
                                  '-r', 'controller_manager:__ns:=/cm',
                                  '-r', 'n:__ns:=/robot1'], 'n')
    assert (parsed.node_name, parsed.namespace) == ('n', '/robot1')


def test_a_double_dash_ends_the_ros_arguments():
    parsed = parse_ros_arguments(['-p', 'rate:=2.0', '--', '-p', 'rate:=3.0'], 'n')
    assert parsed.parameters() == {'rate': 2.0}
