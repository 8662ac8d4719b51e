"""The node's parameters declared on an rclpy node, typed, from the table PARAMETERS."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rcl_interfaces.msg import (
    FloatingPointRange,
    ParameterDescriptor,
    ParameterType,
    ParameterValue,
)

from urdf_state_publisher.engine.parameters import NodeConfig, PARAMETERS, ParameterSpec

if TYPE_CHECKING:
    from rclpy.node import Node

__all__ = ['declare']


def declare(node: Node) -> NodeConfig:
    """Declare PARAMETERS on an rclpy node, statically typed, and return their checked values.

    The node is made with `automatically_declare_parameters_from_overrides`, so a parameter
    that was given (params file, -p, launch) is declared already, with its value; the others
    are declared here, at their defaults. rclpy's static typing alone would refuse YAML's
    `publish_frequency: 50` (an integer), and with a traceback. So each parameter is first
    declared dynamically typed and writable, which takes any override; NodeConfig checks (and
    converts) the values, raising ParameterValueError naming the first unusable one; then
    `Node.set_descriptor` puts the typed descriptor in place, with the converted value as its
    alternative value. From then on rclpy itself refuses a value of another type or outside the
    range, with the reason, and `ros2 param describe` shows the type, range, constraints and
    read-only flag. `set_descriptor` is public rclpy API with the same behaviour on Humble,
    Jazzy, Kilted and Rolling: it refuses only a parameter whose current descriptor is
    read-only, which is why the first declaration is writable.
    """
    for spec in PARAMETERS:
        if not node.has_parameter(spec.name):
            node.declare_parameter(spec.name, list(spec.default) if type(spec.default) is tuple
                                   else spec.default,
                                   ParameterDescriptor(description=spec.description,
                                                       dynamic_typing=True))
    config = NodeConfig.from_values(
        {spec.name: node.get_parameter(spec.name).value for spec in PARAMETERS})
    for spec in PARAMETERS:
        node.set_descriptor(spec.name, _descriptor(spec),
                            _ros_value(spec, getattr(config, spec.name)))
    return config


def _descriptor(spec: ParameterSpec) -> ParameterDescriptor:
    """The rcl_interfaces ParameterDescriptor: type, description, range and read-only."""
    descriptor = ParameterDescriptor(
        name=spec.name, type=getattr(ParameterType, spec.ros_type_name),
        description=spec.description, additional_constraints=spec.constraints,
        read_only=spec.read_only, dynamic_typing=False)
    if spec.value_range is not None:
        descriptor.floating_point_range = [FloatingPointRange(
            from_value=spec.value_range[0], to_value=spec.value_range[1], step=0.0)]
    return descriptor


def _ros_value(spec: ParameterSpec, value: object) -> ParameterValue:
    """`value` (checked) as an rcl_interfaces ParameterValue of this parameter's type."""
    kind = type(spec.default)
    message = ParameterValue(type=getattr(ParameterType, spec.ros_type_name))
    field = {bool: 'bool_value', str: 'string_value', float: 'double_value',
             tuple: 'string_array_value'}[kind]
    setattr(message, field, list(value) if kind is tuple else value)
    return message
