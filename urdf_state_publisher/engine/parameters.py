"""The node's parameters: every fact about each one, in PARAMETERS and nowhere else.

From this table come the checked `NodeConfig`, the parameters file
config/urdf_state_publisher.yaml (`config_yaml`) and the parameter table of doc/parameters.md
(`readme_table`); the node's typed declarations (ros/parameters.py) and the launch
files' arguments (ros/launch_support.py) are made from it in the shells that use them. Print the
generated texts with `python -m urdf_state_publisher.engine.parameters yaml|readme`; the tests
fail,
naming the parameter and the file, when a file and this table disagree.

This module imports no ROS package, so the launch files and the ROS-free tests can import it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
import re
import sys
import textwrap

from urdf_state_publisher.errors import DescriptionError
from urdf_state_publisher.xacro_arguments import xacro_mappings

__all__ = [
    'DOCUMENTED', 'LAUNCH_OVERRIDES', 'NodeConfig', 'PARAMETERS', 'ParameterSpec',
    'ParameterValueError', 'USE_SIM_TIME', 'config_yaml', 'launch_default_text', 'launch_value',
    'readme_table',
]


class ParameterValueError(ValueError):
    """A parameter value the node cannot use; the message names the parameter."""


# The value types, by the Python type of the default: (ROS ParameterType name, documented name).
_TYPES = {
    bool: ('PARAMETER_BOOL', 'bool'),
    str: ('PARAMETER_STRING', 'string'),
    float: ('PARAMETER_DOUBLE', 'double'),
    tuple: ('PARAMETER_STRING_ARRAY', 'string[]'),
}


@dataclass(frozen=True)
class ParameterSpec:
    """One node parameter: what `ros2 param describe` shows, and where else it appears."""

    name: str
    default: bool | str | float | tuple[str, ...]  # its Python type is the parameter's type
    description: str
    read_only: bool = False
    constraints: str = ''  # in words: ParameterDescriptor.additional_constraints
    value_range: tuple[float, float] | None = None  # inclusive, for a double
    launch_argument: bool = False  # the launch files have an argument that overrides it
    example: tuple[str, ...] = ()  # for an empty string array: a value, in the parameters file

    @property
    def type_name(self) -> str:
        """The type as doc/parameters.md writes it: bool, string, double or string[]."""
        return _TYPES[type(self.default)][1]

    @property
    def ros_type_name(self) -> str:
        """The rcl_interfaces ParameterType constant's name, e.g. PARAMETER_DOUBLE."""
        return _TYPES[type(self.default)][0]

    def check(self, value: object) -> bool | str | float | tuple[str, ...]:
        """`value` as this parameter's type; ParameterValueError naming it if unusable.

        Friendlier than rclpy's static typing: an integer is a double (YAML's
        `publish_frequency: 50`), and a string array may be given as one space-separated string.
        """
        kind = type(self.default)
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if kind is tuple:
            if isinstance(value, str):
                value = value.split()
            if isinstance(value, (list, tuple)) and all(isinstance(item, str) for item in value):
                value = tuple(item for item in value if item)
        if not isinstance(value, kind):
            raise ParameterValueError(
                f'{self.name} must be {_A_TYPE[kind]}, got {value!r}')
        if self.value_range is not None and not (
                self.value_range[0] <= value <= self.value_range[1]):
            raise ParameterValueError(f'{self.name} must be {self.constraints}, got {value!r}')
        return value


_A_TYPE = {bool: 'true or false', str: 'a string', float: 'a number',
           tuple: 'a list of strings'}


PARAMETERS: tuple[ParameterSpec, ...] = (
    ParameterSpec(
        'robot_description', '',
        'The URDF (XML text). Set at runtime: validated, then swapped in; an invalid one is '
        'rejected with the reason and the old model keeps running.'),
    ParameterSpec(
        'description_file', '',
        'A .urdf or .xacro path, read at startup when robot_description is empty.',
        read_only=True),
    ParameterSpec(
        'xacro_args', (),
        "'name:=value' arguments for a .xacro description_file.", read_only=True,
        constraints="every entry of the form 'name:=value'",
        example=('prefix:=left_', 'with_sensors:=false')),
    ParameterSpec(
        'use_robot_description_topic', False,
        'Take the description from the robot_description topic (transient local) instead of '
        "the parameter, as Rolling's robot_state_publisher does.", read_only=True),
    ParameterSpec(
        'publish_frequency', 20.0,
        'Upper bound, in Hz, on how often each joint goes out on /tf, judged on JointState '
        'stamps (the exact interval; above 1000 Hz allowed).',
        constraints='a positive, finite number of Hz',
        value_range=(sys.float_info.min, sys.float_info.max), launch_argument=True),
    ParameterSpec(
        'ignore_timestamp', False,
        'Publish every JointState whatever its stamp (no rate limit).'),
    ParameterSpec(
        'frame_prefix', '',
        'Prepended verbatim to every frame id on /tf and /tf_static (no separator added). '
        'Changing it republishes /tf_static.', launch_argument=True),
    ParameterSpec(
        'use_smallest_joint_limits', False,
        'Clamp to <limit> narrowed by the <safety_controller> soft limits, instead of <limit> '
        'alone.'),
    ParameterSpec(
        'publish_default_positions', False,
        'Until the first JointState arrives, publish moving joints at their default positions '
        '(zeros.<joint>, else <model_state>, else 0 if within limits, else mid-range), so RViz '
        'shows the robot at once. With publish_joint_states the defaults always go out.',
        read_only=True),
    ParameterSpec(
        'source_list', (),
        "The JointState topics to read and merge, as joint_state_publisher's source_list "
        "(relative names resolve in the node's namespace). Empty: joint_states alone, or with "
        'publish_joint_states no topic at all (every joint at its default).',
        read_only=True, constraints='topic names, each once',
        example=('arm/joint_states', 'gripper/joint_states')),
    ParameterSpec(
        'publish_joint_states', False,
        'Publish the merged, resolved state on joint_states, as joint_state_publisher does: '
        'every moving joint, mimic followers computed, values clamped, at publish_frequency '
        'as the sources send; with an empty source_list, every joint at its default, at rate.',
        read_only=True, launch_argument=True),
    ParameterSpec(
        'rate', 10.0,
        'How often, in Hz, the node publishes on its timer what no source sends: the default '
        'positions (before the first JointState, or always without a source_list) and joints '
        "held by zeros.<joint>; joint_state_publisher's rate.",
        read_only=True, constraints='a positive number of Hz, at most 1000',
        value_range=(sys.float_info.min, 1000.0)),
    ParameterSpec(
        'use_mimic_tags', True,
        'Follow the <mimic> elements of the description; false: every mimic joint is '
        "independent, as joint_state_publisher's use_mimic_tags.", read_only=True),
    ParameterSpec(
        'publish_default_velocities', False,
        'On joint_states, 0.0 as the velocity of every joint no source gave one, instead of NaN '
        "(or an empty array), as joint_state_publisher's publish_default_velocities.",
        read_only=True),
    ParameterSpec(
        'publish_default_efforts', False,
        'On joint_states, 0.0 as the effort of every joint no source gave one, instead of NaN '
        "(or an empty array), as joint_state_publisher's publish_default_efforts.",
        read_only=True),
)

USE_SIM_TIME = ParameterSpec(
    'use_sim_time', False, 'Use the /clock topic as the time source.', launch_argument=True)

# What the parameters file, the documented table and the launch files speak of.
DOCUMENTED: tuple[ParameterSpec, ...] = (*PARAMETERS, USE_SIM_TIME)

# The launch arguments that set the parameter of the same name, with the value type for
# launch_ros' ParameterValue.
LAUNCH_OVERRIDES: dict[str, type] = {
    spec.name: type(spec.default) for spec in DOCUMENTED if spec.launch_argument}


@dataclass(frozen=True)
class NodeConfig:
    """The parameter values the node runs with, checked. One field per PARAMETERS entry."""

    robot_description: str
    description_file: str
    xacro_args: tuple[str, ...]
    use_robot_description_topic: bool
    publish_frequency: float
    ignore_timestamp: bool
    frame_prefix: str
    use_smallest_joint_limits: bool
    publish_default_positions: bool
    source_list: tuple[str, ...]
    publish_joint_states: bool
    rate: float
    use_mimic_tags: bool
    publish_default_velocities: bool
    publish_default_efforts: bool

    @classmethod
    def from_values(cls, values: Mapping[str, object]) -> NodeConfig:
        """A checked config from parameter values by name (defaults for the missing ones).

        ParameterValueError, naming the parameter, if a value is unusable.
        """
        config = cls(**{spec.name: spec.check(values.get(spec.name, spec.default))
                        for spec in PARAMETERS})
        try:
            xacro_mappings(config.xacro_args)
        except DescriptionError as error:
            raise ParameterValueError(f'xacro_args: {error}') from None
        return config

    @property
    def publish_interval_ns(self) -> int:
        """The minimum stamp difference between two publications of one joint, in ns.

        At most 4e18 ns (127 years), so that stamps plus the interval stay within int64.
        """
        return round(min(1e9 / self.publish_frequency, 4e18))

    @property
    def joint_state_topics(self) -> tuple[str, ...]:
        """The JointState topics to read, as given (the node resolves them).

        source_list's; without one, joint_states; none when the node publishes joint_states
        itself (publish_joint_states), as joint_state_publisher without a source_list reads
        nothing and publishes every joint at its default.
        """
        if self.source_list:
            return self.source_list
        return () if self.publish_joint_states else ('joint_states',)


if [f.name for f in fields(NodeConfig)] != [spec.name for spec in PARAMETERS]:
    raise AssertionError('NodeConfig has not one field per PARAMETERS entry, in order')


# --- The texts generated from the table --------------------------------------------------------

def yaml_value(value: object) -> str:
    """A default as YAML writes it: false, 20.0, '' or ['a:=1']."""
    if isinstance(value, bool):
        return 'true' if value else 'false'
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    if isinstance(value, tuple):
        return '[' + ', '.join(yaml_value(item) for item in value) + ']'
    return repr(value)


def _comment(text: str, indent: str) -> list[str]:
    return textwrap.wrap(text, 99, initial_indent=f'{indent}# ', subsequent_indent=f'{indent}# ')


def config_yaml() -> str:
    """The text of config/urdf_state_publisher.yaml: every documented parameter at its default.

    An empty string array is written as a commented example: a YAML `[]` has no element type.
    """
    lines = [
        '# Parameters of urdf_state_publisher, each at its default value.',
        '# Generated from urdf_state_publisher/engine/parameters.py: '
        'python -m urdf_state_publisher.engine.parameters yaml',
        '# Use with: ros2 run urdf_state_publisher urdf_state_publisher --ros-args '
        '--params-file <this file>',
        '# or:       ros2 launch urdf_state_publisher urdf_state_publisher.launch.py '
        'params_file:=<this file>',
        *_comment("(the values here win over the launch files' defaults; the launch arguments "
                  'given on the command line win over these: model over robot_description and '
                  'description_file, and ' + ', '.join(LAUNCH_OVERRIDES) + ' over the '
                  'parameter of the same name).', ''),
        '/**:',
        '  ros__parameters:',
    ]
    for spec in DOCUMENTED:
        words = spec.description + (' Read-only.' if spec.read_only else '')
        lines += _comment(words, '    ')
        if isinstance(spec.default, tuple) and not spec.default:
            lines.append(f'    # {spec.name}: {yaml_value(spec.example)}')
        else:
            lines.append(f'    {spec.name}: {yaml_value(spec.default)}')
    return '\n'.join(lines) + '\n'


def readme_row(spec: ParameterSpec) -> str:
    """The row of one parameter in the table of doc/parameters.md."""
    words = re.sub(r'(<\w+>)', r'`\1`', spec.description)
    if spec.constraints:
        words += f' Constraints: {spec.constraints}.'
    if spec.read_only:
        words += ' Read-only.'
    return f'| `{spec.name}` | {spec.type_name}, `{yaml_value(spec.default)}` | {words} |'


def readme_table() -> str:
    """The parameter table of doc/parameters.md."""
    rows = ['| name | type, default | meaning |', '|---|---|---|']
    return '\n'.join(rows + [readme_row(spec) for spec in DOCUMENTED]) + '\n'


def _bool_from_text(text: str) -> bool:
    """A launch argument's text as a bool: what launch's conditions and launch_ros both read."""
    words = {'true': True, '1': True, 'false': False, '0': False}
    if text.lower() not in words:
        raise ValueError(text)
    return words[text.lower()]


# How launch_ros turns a launch argument's text into a value of each parameter type.
_FROM_LAUNCH_TEXT = {bool: _bool_from_text, float: float, str: str}


def launch_value(spec: ParameterSpec, text: str) -> bool | str | float:
    """A launch argument's text as a value of `spec`'s type, checked as the node checks it.

    ParameterValueError, one line that names the launch argument and what it accepts, when
    the text converts to no value of the type or to one the node would refuse ('fast', 'inf',
    '-5' for a frequency; 'yes' for a bool).
    """
    kind = type(spec.default)
    try:
        return spec.check(_FROM_LAUNCH_TEXT[kind](text.strip()))
    except ValueError:
        raise ParameterValueError(
            f'launch argument {spec.name}: expected {spec.constraints or _A_TYPE[kind]}, '
            f'got {text!r}') from None


def launch_default_text(spec: ParameterSpec) -> str:
    """How a launch argument's description names the parameter's default."""
    return 'empty' if spec.default == '' else yaml_value(spec.default)


def main(argv: list[str] | None = None) -> int:
    """Print a generated text: `yaml` (the parameters file) or `readme` (the table)."""
    argv = sys.argv[1:] if argv is None else argv
    texts = {'yaml': config_yaml, 'readme': readme_table}
    if len(argv) != 1 or argv[0] not in texts:
        print('usage: python -m urdf_state_publisher.engine.parameters yaml|readme',
              file=sys.stderr)
        return 2
    sys.stdout.write(texts[argv[0]]())
    return 0


if __name__ == '__main__':
    sys.exit(main())
