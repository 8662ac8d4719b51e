"""PARAMETERS is the one place: the params file and the documented table agree with it, or a test
names the parameter and the place; the node describes every parameter over DDS as declared.
"""

import dataclasses
from pathlib import Path

import pytest
import yaml

from urdf_state_publisher.engine import parameters
from urdf_state_publisher.engine.parameters import (
    config_yaml,
    DOCUMENTED,
    NodeConfig,
    PARAMETERS,
    ParameterValueError,
    readme_row,
)

ROOT = Path(__file__).resolve().parents[2]
PARAMS_FILE = ROOT / 'config' / 'urdf_state_publisher.yaml'
PARAMETERS_PAGE = ROOT / 'doc' / 'parameters.md'
MISSING = object()


def params_file_disagreements(specs, text: str) -> list[str]:
    """Where a params file's text differs from `specs`: one line per parameter, naming both."""
    place = 'config/urdf_state_publisher.yaml'
    values = yaml.safe_load(text)['/**']['ros__parameters']
    found = []
    for spec in specs:
        value = values.pop(spec.name, MISSING)
        if spec.default == ():
            if value is not MISSING or f'# {spec.name}:' not in text:
                found.append(f'{place}: {spec.name} should be a commented example')
        elif value is MISSING:
            found.append(f'{place}: {spec.name} is missing')
        elif type(value) is not type(spec.default) or value != spec.default:
            found.append(f'{place}: {spec.name} is {value!r}, PARAMETERS says {spec.default!r}')
    found += [f'{place}: {name} is not in PARAMETERS' for name in values]
    return found


def table_disagreements(specs, text: str) -> list[str]:
    """Where the table of doc/parameters.md differs from `specs`, one line per parameter."""
    place = 'doc/parameters.md, the parameter table'
    section = text.split('# Parameters\n', 1)[1].split('\n## ', 1)[0]
    rows = {line.split('`')[1]: line for line in section.splitlines() if line.startswith('| `')}
    found = []
    for spec in specs:
        row = rows.pop(spec.name, None)
        if row != readme_row(spec):
            found.append(f'{place}: {spec.name} reads {row!r}, PARAMETERS gives '
                         f'{readme_row(spec)!r}')
    found += [f'{place}: {name} is not in PARAMETERS' for name in rows]
    return found


def test_params_file_agrees_with_parameters():
    assert params_file_disagreements(DOCUMENTED, PARAMS_FILE.read_text()) == []
    assert PARAMS_FILE.read_text() == config_yaml(), (
        'config/urdf_state_publisher.yaml: comments differ from PARAMETERS; regenerate with '
        'python -m urdf_state_publisher.engine.parameters yaml')


def test_the_documented_table_agrees_with_parameters():
    assert table_disagreements(DOCUMENTED, PARAMETERS_PAGE.read_text()) == []


def test_a_changed_default_is_reported_in_each_place():
    """A default changed in PARAMETERS alone: both files are named, with the parameter."""
    changed = tuple(dataclasses.replace(spec, default=30.0) if spec.name == 'publish_frequency'
                    else spec for spec in DOCUMENTED)
    assert params_file_disagreements(changed, PARAMS_FILE.read_text()) == [
        'config/urdf_state_publisher.yaml: publish_frequency is 20.0, PARAMETERS says 30.0']
    [documented] = table_disagreements(changed, PARAMETERS_PAGE.read_text())
    assert documented.startswith(
        'doc/parameters.md, the parameter table: publish_frequency reads')
    assert '`30.0`' in documented


# The parameters with their types and defaults, as doc/parameters.md documents them.
DEFAULTS = {'robot_description': '', 'description_file': '', 'xacro_args': (),
            'use_robot_description_topic': False, 'publish_frequency': 20.0,
            'ignore_timestamp': False, 'frame_prefix': '', 'use_smallest_joint_limits': False,
            'publish_default_positions': False, 'source_list': (), 'publish_joint_states': False,
            'rate': 10.0, 'use_mimic_tags': True, 'publish_default_velocities': False,
            'publish_default_efforts': False}


def test_node_config_has_a_field_per_parameter():
    assert [f.name for f in dataclasses.fields(NodeConfig)] == [s.name for s in PARAMETERS]
    assert list(DEFAULTS) == [s.name for s in PARAMETERS]
    config = NodeConfig.from_values({})
    assert {name: getattr(config, name) for name in DEFAULTS} == DEFAULTS
    assert type(config.publish_frequency) is float


@pytest.mark.parametrize('values, expected', [
    ({'publish_frequency': 50}, {'publish_frequency': 50.0}),
    ({'xacro_args': 'a:=1  b:=2'}, {'xacro_args': ('a:=1', 'b:=2')}),
    ({'xacro_args': ['a:=1', '']}, {'xacro_args': ('a:=1',)}),
])
def test_friendly_values_are_converted(values, expected):
    config = NodeConfig.from_values(values)
    assert {name: getattr(config, name) for name in expected} == expected
    assert type(config.publish_frequency) is float


@pytest.mark.parametrize('values, message', [
    ({'publish_frequency': 'fast'}, "publish_frequency must be a number, got 'fast'"),
    ({'publish_frequency': True}, 'publish_frequency must be a number'),
    ({'publish_frequency': 0.0}, 'publish_frequency must be a positive, finite number'),
    ({'publish_frequency': float('inf')}, 'publish_frequency must be a positive'),
    ({'publish_frequency': float('nan')}, 'publish_frequency must be a positive'),
    ({'frame_prefix': 5}, 'frame_prefix must be a string, got 5'),
    ({'ignore_timestamp': 'yes'}, 'ignore_timestamp must be true or false'),
    ({'xacro_args': [1]}, 'xacro_args must be a list'),
    ({'xacro_args': ['prefix']}, "xacro_args: xacro argument 'prefix' is not of the form"),
    ({'rate': 0}, 'rate must be a positive number of Hz, at most 1000, got 0.0'),
    ({'rate': 1500}, 'rate must be a positive number of Hz, at most 1000'),
])
def test_unusable_values_name_the_parameter(values, message):
    with pytest.raises(ParameterValueError, match='^' + message.replace('(', r'\(')):
        NodeConfig.from_values(values)


@pytest.mark.parametrize('values, topics', [
    ({}, ('joint_states',)),  # robot_state_publisher's
    ({'publish_joint_states': True}, ()),  # joint_state_publisher's without a source_list
    ({'source_list': ['a/joint_states', 'b']}, ('a/joint_states', 'b')),
    ({'source_list': ['a/joint_states'], 'publish_joint_states': True}, ('a/joint_states',)),
])
def test_the_joint_state_topics_follow_source_list_and_the_resolved_output(values, topics):
    assert NodeConfig.from_values(values).joint_state_topics == topics


def test_main_prints_the_generated_texts(capsys):
    assert parameters.main(['yaml']) == 0
    assert capsys.readouterr().out == config_yaml()
    assert parameters.main(['nonsense']) == 2


# --- Over DDS: what `ros2 param describe` and `ros2 param get` show -----------------------------

NAME = 'described'


@pytest.fixture
def described(start_node, probe):
    """The node's descriptors and values, by name, from its services (publish_frequency: 50)."""
    from conftest import SAMPLE_URDF
    from node_fixtures import call_service
    from rcl_interfaces.srv import DescribeParameters, GetParameters

    start_node({'robot_description': SAMPLE_URDF.read_text(), 'publish_frequency': 50},
               node_name=NAME)
    names = [spec.name for spec in PARAMETERS]
    results = []
    for service, request in ((DescribeParameters, DescribeParameters.Request(names=names)),
                             (GetParameters, GetParameters.Request(names=names))):
        kind = 'describe' if service is DescribeParameters else 'get'
        client = probe.node.create_client(service, f'/{NAME}/{kind}_parameters')
        probe.wait_until(client.service_is_ready, 15, f'/{NAME}/{kind}_parameters')
        results.append(call_service(client, request, probe.spin, 30,
                                    f'the {kind}_parameters response'))
    descriptors, values = results
    return (dict(zip(names, descriptors.descriptors)), dict(zip(names, values.values)))


# rcl_interfaces ParameterType of each parameter, as the table in doc/parameters.md gives it.
BOOL, DOUBLE, STRING, STRING_ARRAY = 1, 3, 4, 9
ROS_TYPES = {'robot_description': STRING, 'description_file': STRING,
             'xacro_args': STRING_ARRAY, 'use_robot_description_topic': BOOL,
             'publish_frequency': DOUBLE, 'ignore_timestamp': BOOL, 'frame_prefix': STRING,
             'use_smallest_joint_limits': BOOL, 'publish_default_positions': BOOL,
             'source_list': STRING_ARRAY, 'publish_joint_states': BOOL, 'rate': DOUBLE,
             'use_mimic_tags': BOOL, 'publish_default_velocities': BOOL,
             'publish_default_efforts': BOOL}


def test_describe_parameters_shows_type_description_range_and_read_only(described):
    from conftest import SAMPLE_URDF
    from rclpy.parameter import parameter_value_to_python

    descriptors, values = described
    assert set(descriptors) == set(ROS_TYPES)
    for spec in PARAMETERS:
        descriptor = descriptors[spec.name]
        assert descriptor.name == spec.name
        assert descriptor.type == ROS_TYPES[spec.name], spec.name
        assert values[spec.name].type == ROS_TYPES[spec.name], spec.name
        assert descriptor.description == spec.description
        assert descriptor.additional_constraints == spec.constraints
        assert not descriptor.dynamic_typing, spec.name
    assert {name for name, d in descriptors.items() if d.read_only} == {
        'description_file', 'xacro_args', 'use_robot_description_topic',
        'publish_default_positions', 'source_list', 'publish_joint_states', 'rate',
        'use_mimic_tags', 'publish_default_velocities', 'publish_default_efforts'}
    [frequency_range] = descriptors['publish_frequency'].floating_point_range
    assert 0 < frequency_range.from_value < 1e-300
    assert frequency_range.to_value > 1e300 and frequency_range.step == 0.0
    assert descriptors['publish_frequency'].additional_constraints == (
        'a positive, finite number of Hz')
    # The defaults, but for the description given and the params file's integer, as a double.
    expected = {**DEFAULTS, 'robot_description': SAMPLE_URDF.read_text(),
                'publish_frequency': 50.0, 'xacro_args': [], 'source_list': []}
    assert {name: parameter_value_to_python(value) for name, value in values.items()} == expected
