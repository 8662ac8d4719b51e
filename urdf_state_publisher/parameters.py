"""The node's parameters: names, types, defaults and meaning, in one table."""

from __future__ import annotations

from dataclasses import dataclass
import math

__all__ = ['PARAMETERS', 'ParameterSpec', 'NodeConfig', 'ParameterValueError']


class ParameterValueError(ValueError):
    """A parameter value the node cannot use; the message names the parameter."""


@dataclass(frozen=True)
class ParameterSpec:
    """One node parameter."""

    name: str
    default: str | float | bool | list[str]
    description: str
    read_only: bool = False


PARAMETERS: tuple[ParameterSpec, ...] = (
    ParameterSpec('robot_description', '',
                  'The URDF (XML text). Setting it at runtime validates and then swaps the '
                  'model; an invalid description is rejected and the old model keeps running.'),
    ParameterSpec('description_file', '',
                  'A .urdf or .xacro file, read at startup when robot_description is empty.',
                  read_only=True),
    ParameterSpec('xacro_args', [''],
                  "Arguments 'name:=value' for a .xacro description_file.", read_only=True),
    ParameterSpec('use_robot_description_topic', False,
                  'Take the description from the robot_description topic (transient local) '
                  'instead of the parameter.', read_only=True),
    ParameterSpec('publish_frequency', 20.0,
                  'Upper bound, in Hz, on how often each joint is published on /tf; judged on '
                  'JointState stamps. Must be positive.'),
    ParameterSpec('ignore_timestamp', False,
                  'Publish every JointState, whatever its stamp (no rate limit).'),
    ParameterSpec('frame_prefix', '',
                  'Prepended verbatim to every frame id published on /tf and /tf_static.'),
    ParameterSpec('use_smallest_joint_limits', False,
                  'Clamp to <limit> narrowed by <safety_controller> soft limits, instead of '
                  '<limit> alone.'),
    ParameterSpec('publish_default_positions', False,
                  'Until the first JointState arrives, publish moving joints at their default '
                  'positions (from <model_state>, else 0 or mid-range).', read_only=True),
)


@dataclass(frozen=True)
class NodeConfig:
    """The parameter values the node runs with, checked."""

    robot_description: str = ''
    description_file: str = ''
    xacro_args: tuple[str, ...] = ()
    use_robot_description_topic: bool = False
    publish_frequency: float = 20.0
    ignore_timestamp: bool = False
    frame_prefix: str = ''
    use_smallest_joint_limits: bool = False
    publish_default_positions: bool = False

    @classmethod
    def from_values(cls, values: dict[str, object]) -> NodeConfig:
        """A checked config from parameter values by name; ParameterValueError if unusable.

        Types are checked here rather than by rclpy, so that a YAML `publish_frequency: 50`
        (an integer) works and a wrong type gets a message instead of a traceback.
        """
        fields = {}
        for spec in PARAMETERS:
            value = values.get(spec.name, spec.default)
            fields[spec.name] = _CHECKS[type(spec.default)](spec.name, value)
        fields['xacro_args'] = _xacro_arguments(values.get('xacro_args', ()))
        config = cls(**fields)
        if not math.isfinite(config.publish_frequency) or config.publish_frequency <= 0:
            raise ParameterValueError(
                f'publish_frequency must be a positive number of Hz, got '
                f'{config.publish_frequency!r}')
        return config

    @property
    def publish_interval_ns(self) -> int:
        """The minimum stamp difference between two publications of one joint, in ns.

        At most 4e18 ns (127 years), so that stamps plus the interval stay within int64.
        """
        return round(min(1e9 / self.publish_frequency, 4e18))


def _check_bool(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise ParameterValueError(f'{name} must be true or false, got {value!r}')
    return value


def _check_str(name: str, value: object) -> str:
    if not isinstance(value, str):
        raise ParameterValueError(f'{name} must be a string, got {value!r}')
    return value


def _check_float(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ParameterValueError(f'{name} must be a number, got {value!r}')
    return float(value)


def _check_list(name: str, value: object) -> object:
    return value  # xacro_args: checked by _xacro_arguments


_CHECKS = {bool: _check_bool, str: _check_str, float: _check_float, list: _check_list}


def _xacro_arguments(value: object) -> tuple[str, ...]:
    """`xacro_args` as a list of 'name:=value' strings, or one string of them."""
    if isinstance(value, str):
        value = value.split()
    if not isinstance(value, (list, tuple)) or not all(isinstance(a, str) for a in value):
        raise ParameterValueError(
            f"xacro_args must be a list of 'name:=value' strings, got {value!r}")
    arguments = tuple(a for a in value if a)
    for argument in arguments:
        if ':=' not in argument:
            raise ParameterValueError(
                f"xacro_args entries must look like 'name:=value', got {argument!r}")
    return arguments
