"""The launch files' decisions, made without launch: argument checks, precedence, RViz's view.

urdf_state_publisher.ros.launch_support takes the launch arguments as text, as launch holds them;
these tests give it that text. test_launch_files.py runs the launch files themselves on it.
"""

from pathlib import Path

import pytest
import yaml

from urdf_state_publisher.description import parse_description, read_description_file
from urdf_state_publisher.engine.parameters import DOCUMENTED, LAUNCH_OVERRIDES
from urdf_state_publisher.ros.launch_support import (
    install_hint,
    LaunchArgumentError,
    missing_packages,
    node_setup,
    parameter_overrides,
    params_file_values,
    render_rviz_config,
    rviz_view,
    RvizView,
    SAMPLE_MODEL,
    viewer_flags,
)

pytestmark = pytest.mark.ros_free

PACKAGE_ROOT = Path(__file__).resolve().parents[2]
# The source tree is laid out as the package's share directory: urdf/, config/, launch/.
SHARE = str(PACKAGE_ROOT)
SAMPLE = PACKAGE_ROOT / SAMPLE_MODEL
GAZEBO_ARM = PACKAGE_ROOT / 'test' / 'fixtures' / 'gazebo_arm.urdf'
WORLD_ROOTED = PACKAGE_ROOT / 'test' / 'fixtures' / 'mixed_joints.urdf'
TEXT_DESCRIPTION = '<robot name="r"><link name="chassis"/></robot>'
RVIZ_TEMPLATE = (PACKAGE_ROOT / 'config' / 'display.rviz').read_text(encoding='utf-8')


def _root(path: Path) -> str:
    return read_description_file(path).parse().root


def _params_file(tmp_path: Path, parameters: dict, key: str = '/**') -> str:
    path = tmp_path / 'params.yaml'
    path.write_text(yaml.safe_dump({key: {'ros__parameters': parameters}}), encoding='utf-8')
    return str(path)


# --- One line naming the argument -------------------------------------------------------------

BAD_ARGUMENTS = [
    ('publish_frequency', 'fast', 'a positive, finite number of Hz'),
    ('publish_frequency', '-5', 'a positive, finite number of Hz'),
    ('publish_frequency', '0', 'a positive, finite number of Hz'),
    ('publish_frequency', 'inf', 'a positive, finite number of Hz'),
    ('publish_frequency', 'nan', 'a positive, finite number of Hz'),
    ('use_sim_time', 'yes', 'true or false'),
    ('use_sim_time', '2', 'true or false'),
    ('publish_joint_states', 'on', 'true or false'),
    ('gui', 'maybe', 'true or false'),
]


@pytest.mark.parametrize(('name', 'text', 'accepts'), BAD_ARGUMENTS)
def test_a_bad_typed_argument_is_one_line_naming_it(name, text, accepts):
    check = viewer_flags if name == 'gui' else parameter_overrides
    with pytest.raises(LaunchArgumentError) as raised:
        check({name: text})
    assert str(raised.value) == f'launch argument {name}: expected {accepts}, got {text!r}'


def test_every_typed_parameter_argument_is_checked():
    """Each argument that sets a parameter of a checked type refuses text of another type."""
    checked = {name for name, kind in LAUNCH_OVERRIDES.items() if kind is not str}
    assert checked == {'publish_frequency', 'publish_joint_states', 'use_sim_time'}
    for name in checked:
        with pytest.raises(LaunchArgumentError, match=f'^launch argument {name}: '):
            parameter_overrides({name: 'not-a-value'})


def test_good_arguments_become_values_of_the_parameter_type():
    """Text converts as launch_ros converts it; arguments left empty are not given."""
    assert parameter_overrides({'publish_frequency': ' 50 ', 'use_sim_time': 'True',
                                'frame_prefix': ' left/ '}) == {
        'publish_frequency': 50.0, 'use_sim_time': True, 'frame_prefix': 'left/'}
    assert parameter_overrides({'use_sim_time': '0'}) == {'use_sim_time': False}
    assert parameter_overrides(dict.fromkeys(LAUNCH_OVERRIDES, '')) == {}
    assert viewer_flags({}) == {'gui': False}
    assert viewer_flags({'gui': '1'}) == {'gui': True}


def test_the_argument_checks_follow_the_parameter_table(monkeypatch):
    """A range in PARAMETERS is the launch argument's range: the checks are not a copy."""
    import dataclasses

    from urdf_state_publisher.ros import launch_support

    narrowed = tuple(
        dataclasses.replace(spec, value_range=(1.0, 100.0), constraints='1 to 100 Hz')
        if spec.name == 'publish_frequency' else spec for spec in DOCUMENTED)
    monkeypatch.setattr(launch_support, 'DOCUMENTED', narrowed)
    assert parameter_overrides({'publish_frequency': '100'}) == {'publish_frequency': 100.0}
    with pytest.raises(LaunchArgumentError, match=r"expected 1 to 100 Hz, got '101'$"):
        parameter_overrides({'publish_frequency': '101'})


def test_a_missing_model_is_one_line_naming_model(tmp_path):
    missing = str(tmp_path / 'nope.urdf.xacro')
    with pytest.raises(LaunchArgumentError) as raised:
        node_setup({'model': missing}, '/', SHARE)
    assert str(raised.value) == f'launch argument model: no file at {missing!r}'


def test_a_model_xacro_cannot_expand_is_one_line_naming_model():
    broken = PACKAGE_ROOT / 'test' / 'fixtures' / 'broken.urdf.xacro'
    with pytest.raises(LaunchArgumentError) as raised:
        node_setup({'model': str(broken)}, '/', SHARE)
    message = str(raised.value)
    assert message.startswith(f"launch argument model: xacro could not expand '{broken}'")
    assert '\n' not in message and 'Traceback' not in message


def test_bad_xacro_args_are_one_line_naming_xacro_args():
    with pytest.raises(LaunchArgumentError,
                       match=r"^launch argument xacro_args: xacro argument 'prefix' is not"):
        node_setup({'xacro_args': 'prefix'}, '/', SHARE)


@pytest.mark.parametrize(('content', 'problem'), [
    (None, 'cannot read'),
    ('a: [unclosed', 'is not valid YAML'),
    ('publish_frequency: 50.0\n', 'is not a ROS 2 params file'),
])
def test_an_unusable_params_file_is_one_line_naming_params_file(tmp_path, content, problem):
    path = tmp_path / 'params.yaml'
    if content is not None:
        path.write_text(content, encoding='utf-8')
    with pytest.raises(LaunchArgumentError) as raised:
        node_setup({'params_file': str(path)}, '/', SHARE)
    message = str(raised.value)
    assert message.startswith('launch argument params_file: ') and problem in message
    assert '\n' not in message


# --- Precedence: node defaults < params_file < arguments given ---------------------------------

def test_without_arguments_the_node_gets_the_bundled_sample():
    setup = node_setup({}, '/', SHARE)
    assert setup.params_files == ()
    assert setup.parameters == {'robot_description': read_description_file(SAMPLE).text}


def test_the_params_file_value_stands_unless_the_argument_is_given(tmp_path):
    params = _params_file(tmp_path, {'publish_frequency': 100.0, 'frame_prefix': 'file/'})
    from_file = node_setup({'params_file': params}, '/', SHARE)
    assert from_file.params_files == (params,)
    assert 'publish_frequency' not in from_file.parameters
    assert from_file.frame_prefix == 'file/'
    given = node_setup({'params_file': params, 'publish_frequency': '50',
                        'frame_prefix': 'arg/'}, '/', SHARE)
    assert given.parameters['publish_frequency'] == 50.0
    assert given.frame_prefix == 'arg/'


@pytest.mark.parametrize('parameters', [
    {'robot_description': TEXT_DESCRIPTION},
    {'description_file': str(GAZEBO_ARM)},
    {'use_robot_description_topic': True},
])
def test_a_description_in_the_params_file_is_not_overridden_by_the_sample(tmp_path, parameters):
    """Left out, `model` passes nothing when the file names a description: the file's stands."""
    setup = node_setup({'params_file': _params_file(tmp_path, parameters)}, '/', SHARE)
    assert setup.parameters == {}


@pytest.mark.parametrize('parameters', [
    {'robot_description': TEXT_DESCRIPTION},
    {'description_file': str(GAZEBO_ARM)},
    {'use_robot_description_topic': True},
])
def test_a_model_given_wins_over_the_params_file(tmp_path, parameters):
    setup = node_setup({'params_file': _params_file(tmp_path, parameters),
                        'model': str(WORLD_ROOTED)}, '/', SHARE)
    assert setup.parameters['robot_description'] == read_description_file(WORLD_ROOTED).text
    # The node reads robot_description first; a topic source must be switched off to yield.
    assert setup.parameters.get('use_robot_description_topic', False) is False


def test_an_empty_description_in_the_params_file_names_none(tmp_path):
    """The parameters file of the package sets every parameter empty: the sample is used."""
    setup = node_setup({'params_file': str(PACKAGE_ROOT / 'config' / 'urdf_state_publisher.yaml')},
                       '/', SHARE)
    assert setup.parameters == {'robot_description': read_description_file(SAMPLE).text}


def test_xacro_args_go_to_the_model_or_to_the_params_files_description_file(tmp_path):
    prefixed = node_setup({'xacro_args': 'prefix:=left_ with_sensors:=false'}, '/', SHARE)
    assert parse_description(prefixed.parameters['robot_description']).root == (
        'left_base_footprint')
    params = _params_file(tmp_path, {'description_file': str(SAMPLE)})
    to_file = node_setup({'params_file': params, 'xacro_args': 'prefix:=left_'}, '/', SHARE)
    assert to_file.parameters == {'xacro_args': ['prefix:=left_']}
    text = _params_file(tmp_path, {'robot_description': TEXT_DESCRIPTION})
    with pytest.raises(LaunchArgumentError, match='^launch argument xacro_args: given, but'):
        node_setup({'params_file': text, 'xacro_args': 'prefix:=left_'}, '/', SHARE)


@pytest.mark.parametrize(('key', 'namespace', 'applies'), [
    ('/**', '/', True),
    ('/**', '/robot1', True),
    ('urdf_state_publisher', '/', True),
    ('/urdf_state_publisher', '/', True),
    ('/urdf_state_publisher', '/robot1', False),
    ('/robot1/urdf_state_publisher', '/robot1', True),
    ('robot1/urdf_state_publisher', '/robot1', True),
    ('/*/urdf_state_publisher', '/robot1', True),
    ('/*/urdf_state_publisher', '/', False),
    ('/**/urdf_state_publisher', '/a/b', True),
    ('/**/urdf_state_publisher', '/', True),
    ('/robot2/urdf_state_publisher', '/robot1', False),
    ('/other_node', '/', False),
    ('/robot1/*', '/robot1', True),
])
def test_params_file_sections_apply_by_ros_node_name_rules(tmp_path, key, namespace, applies):
    path = _params_file(tmp_path, {'frame_prefix': 'x/'}, key=key)
    assert params_file_values(path, namespace) == ({'frame_prefix': 'x/'} if applies else {})


def test_later_params_file_sections_win(tmp_path):
    path = tmp_path / 'params.yaml'
    path.write_text('/**:\n  ros__parameters:\n    frame_prefix: all/\n'
                    '    publish_frequency: 5.0\n'
                    'urdf_state_publisher:\n  ros__parameters:\n    frame_prefix: ours/\n',
                    encoding='utf-8')
    assert params_file_values(str(path), '/') == {'frame_prefix': 'ours/',
                                                  'publish_frequency': 5.0}


# --- RViz's view ------------------------------------------------------------------------------

@pytest.mark.parametrize('model', [SAMPLE, GAZEBO_ARM, WORLD_ROOTED], ids=lambda path: path.name)
@pytest.mark.parametrize(('namespace', 'frame_prefix'), [
    ('/', ''), ('/robot1', 'robot1/'), ('/a/b', 'left/arm/')])
def test_rviz_follows_namespace_frame_prefix_and_root_link(model, namespace, frame_prefix):
    arguments = {'model': str(model), 'frame_prefix': frame_prefix}
    view = rviz_view(node_setup(arguments, namespace, SHARE), namespace)
    assert view == RvizView(
        fixed_frame=frame_prefix + _root(model),
        description_topic=namespace.rstrip('/') + '/robot_description',
        tf_prefix=frame_prefix.rstrip('/'), note='')


def test_rviz_follows_the_params_files_description_and_frame_prefix(tmp_path):
    params = _params_file(tmp_path, {'description_file': str(WORLD_ROOTED),
                                     'frame_prefix': 'file/'})
    view = rviz_view(node_setup({'params_file': params}, '/ns', SHARE), '/ns')
    assert (view.fixed_frame, view.tf_prefix) == ('file/world', 'file')


def test_rviz_says_what_it_cannot_follow(tmp_path):
    """A prefix without a trailing / (RViz's RobotModel adds one), a description by topic."""
    underscored = rviz_view(node_setup({'frame_prefix': 'left_'}, '/', SHARE), '/')
    assert underscored.fixed_frame == 'left_base_footprint'
    assert "not 'left_'" in underscored.note
    params = _params_file(tmp_path, {'use_robot_description_topic': True})
    by_topic = rviz_view(node_setup({'params_file': params}, '/', SHARE), '/')
    assert by_topic.fixed_frame == 'base_link'
    assert 'by topic' in by_topic.note


def test_the_rendered_config_is_the_template_with_the_view_set():
    view = RvizView(fixed_frame='robot1/world', description_topic='/robot1/robot_description',
                    tf_prefix='robot1', note='')
    rendered = yaml.safe_load(render_rviz_config(RVIZ_TEMPLATE, view))
    template = yaml.safe_load(RVIZ_TEMPLATE)
    manager = rendered['Visualization Manager']
    assert manager['Global Options']['Fixed Frame'] == 'robot1/world'
    (model,) = [display for display in manager['Displays']
                if display['Class'] == 'rviz_default_plugins/RobotModel']
    assert model['Description Topic']['Value'] == '/robot1/robot_description'
    assert model['TF Prefix'] == 'robot1'
    # Everything else as in the template.
    manager['Global Options']['Fixed Frame'] = template['Visualization Manager'][
        'Global Options']['Fixed Frame']
    model['Description Topic']['Value'] = '/robot_description'
    model['TF Prefix'] = ''
    assert rendered == template


# --- The packages display.launch.py needs ------------------------------------------------------

def test_missing_packages_are_those_the_flags_need():
    installed = set()
    assert missing_packages({'gui': False}, installed.__contains__) == ['rviz2']
    # With gui:=true the view shows the robot: RViz starts only where it is installed.
    assert missing_packages({'gui': True}, installed.__contains__) == []
    installed.add('rviz2')
    assert missing_packages({'gui': False}, installed.__contains__) == []


def test_the_install_hint_is_one_line_with_the_command():
    hint = install_hint(['rviz2', 'joint_state_publisher_gui'], 'jazzy')
    assert '\n' not in hint
    assert ('`sudo apt install ros-jazzy-rviz2 ros-jazzy-joint-state-publisher-gui`'
            in hint)
    assert 'rosdep keys: rviz2, joint_state_publisher_gui' in hint
    assert 'ros-$ROS_DISTRO-rviz2' in install_hint(['rviz2'], None)
