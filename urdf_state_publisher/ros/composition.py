"""A component container's load request as the arguments of the node it asks for (ROS-free).

launch_ros (`ComposableNodeContainer`, `LoadComposableNodes`) and `ros2 component load` send a
composition_interfaces/LoadNode request: plugin, node name and namespace, log level, remap
rules, parameters and extra arguments. `node_arguments` turns its plain values into what a
separate process of the node would get from its command line, as rclcpp_components'
ComponentManager does (its create_node_options): the remap rules, then `__node` and `__ns`,
parameter overrides and no global arguments, so nothing of the container's own command line
reaches the node. A request it cannot honour raises LoadRequestError, one line for the reply.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ['EXTRA_ARGUMENTS', 'LoadRequest', 'LoadRequestError', 'NodeArguments',
           'PARAMETER_DEFAULTS', 'Plugin', 'PLUGINS', 'logger_name', 'node_arguments']


@dataclass(frozen=True)
class Plugin:
    """A node class the container loads: the names a request gives for it."""

    package: str
    name: str
    default_node_name: str  # the node's name when the request gives none


PLUGINS = (
    Plugin('urdf_state_publisher', 'urdf_state_publisher::UrdfStatePublisher',
           'urdf_state_publisher'),
    # robot_state_publisher's own names: a launch file changes only its container line, and
    # the node keeps the name robot_state_publisher's would have.
    Plugin('robot_state_publisher', 'robot_state_publisher::RobotStatePublisher',
           'robot_state_publisher'),
)

# What a loaded node starts with unless the request's parameters say otherwise. rclpy's type
# description service outlives its node (ros2/rclpy#1710, #1711): each node unloaded with it
# would leave the service in the graph and about 100 KiB in the container.
PARAMETER_DEFAULTS = (('start_type_description_service', False),)

# rcl_interfaces/Log levels, which are also rcutils' severities (0: unset).
LOG_LEVELS = {0: 'unset', 10: 'DEBUG', 20: 'INFO', 30: 'WARN', 40: 'ERROR', 50: 'FATAL'}


@dataclass(frozen=True)
class ExtraArgument:
    """An `extra_arguments` entry rclcpp's container takes: a boolean, and what it means here.

    `node_keyword` names the rclpy Node argument it sets; without one, the value `noted` gets
    `note` said once at INFO: it asks for something rclpy does not have.
    """

    node_keyword: str | None = None
    noted: bool | None = None
    note: str = ''


EXTRA_ARGUMENTS = {
    'forward_global_arguments': ExtraArgument(node_keyword='use_global_arguments'),
    'enable_rosout': ExtraArgument(node_keyword='enable_rosout'),
    'start_parameter_services': ExtraArgument(node_keyword='start_parameter_services'),
    'enable_logger_service': ExtraArgument(node_keyword='enable_logger_service'),
    'use_intra_process_comms': ExtraArgument(
        noted=True, note='use_intra_process_comms: rclpy has no intra-process transport; the '
        'nodes of this container exchange messages through the middleware, as separate '
        'processes do (zero-copy only where the middleware itself offers it)'),
    'enable_topic_statistics': ExtraArgument(
        noted=True, note='enable_topic_statistics: rclpy subscriptions publish no topic '
        'statistics; the nodes of this container run without them'),
    'start_parameter_event_publisher': ExtraArgument(
        noted=False, note='start_parameter_event_publisher: an rclpy node always publishes '
        'its parameter changes on /parameter_events; the nodes of this container do too'),
    'use_clock_thread': ExtraArgument(
        noted=True, note="use_clock_thread: rclpy updates a node's clock from /clock in the "
        "container's executor, not in a thread of its own"),
}


@dataclass(frozen=True)
class LoadRequest:
    """The values of a composition_interfaces/LoadNode request.

    `parameters` pass through unread; `extra_arguments` are (name, Python value) pairs.
    """

    package_name: str
    plugin_name: str
    node_name: str = ''
    node_namespace: str = ''
    log_level: int = 0
    remap_rules: tuple[str, ...] = ()
    parameters: tuple = ()
    extra_arguments: tuple[tuple[str, object], ...] = ()


@dataclass(frozen=True)
class NodeArguments:
    """What the node is built with: rclpy Node keyword arguments, a log level, notes to say."""

    plugin: Plugin
    node_name: str
    namespace: str
    cli_args: tuple[str, ...]
    parameter_defaults: tuple[tuple[str, object], ...]  # (name, value), before `parameters`
    parameters: tuple
    node_keywords: tuple[tuple[str, bool], ...]  # ('use_global_arguments', False), ...
    log_level: int  # an rcutils severity; 0: the container's default
    notes: tuple[str, ...]  # said once each at INFO

    @property
    def logger_name(self) -> str:
        """The name of the node's logger, whose level `log_level` sets."""
        return logger_name(self.node_name, self.namespace)


class LoadRequestError(ValueError):
    """A load request the container cannot honour; the message is the reply's error."""


def logger_name(node_name: str, namespace: str) -> str:
    """The name rcl gives a node's logger: its namespace's parts and its name, joined by dots."""
    return '.'.join([*namespace.strip('/').split('/'), node_name]).lstrip('.')


def find_plugin(package_name: str, plugin_name: str) -> Plugin:
    """The plugin a request names, or LoadRequestError naming what this container loads."""
    for plugin in PLUGINS:
        if (plugin.package, plugin.name) == (package_name, plugin_name):
            return plugin
    known = ' or '.join(f"'{p.name}' (package '{p.package}')" for p in PLUGINS)
    raise LoadRequestError(
        f"unknown plugin '{plugin_name}' of package '{package_name}': "
        f'urdf_state_publisher_container loads {known}; '
        'load other plugins into a container of their own kind')


def node_arguments(request: LoadRequest) -> NodeArguments:
    """The arguments of the node `request` asks for; LoadRequestError says why it cannot be."""
    plugin = find_plugin(request.package_name, request.plugin_name)
    if request.log_level not in LOG_LEVELS:
        levels = ', '.join(f'{number} ({name})' for number, name in LOG_LEVELS.items())
        raise LoadRequestError(
            f'log_level {request.log_level} is no log level: use one of {levels}')
    node_name = request.node_name or plugin.default_node_name
    namespace = request.node_namespace or '/'
    if not namespace.startswith('/'):  # there is nothing else for it to be relative to
        namespace = '/' + namespace
    cli_args = ['--ros-args']
    for rule in request.remap_rules:
        cli_args += ['-r', rule]
    cli_args += ['-r', f'__node:={node_name}', '-r', f'__ns:={namespace}']
    keywords, notes = _extra_arguments(request.extra_arguments)
    return NodeArguments(
        plugin=plugin, node_name=node_name, namespace=namespace, cli_args=tuple(cli_args),
        parameter_defaults=PARAMETER_DEFAULTS, parameters=tuple(request.parameters),
        node_keywords=keywords, log_level=request.log_level, notes=notes)


def _extra_arguments(
        arguments: Sequence[tuple[str, object]]) -> tuple[tuple[tuple[str, bool], ...],
                                                         tuple[str, ...]]:
    # A container's options must not reach the node: the global arguments stay out unless
    # forward_global_arguments asks for them.
    keywords = {'use_global_arguments': False}
    notes = []
    for name, value in arguments:
        extra = EXTRA_ARGUMENTS.get(name)
        if extra is None:
            raise LoadRequestError(
                f"extra argument '{name}' is not supported: this container takes "
                f"{', '.join(EXTRA_ARGUMENTS)}")
        if not isinstance(value, bool):
            raise LoadRequestError(
                f"extra argument '{name}' must be a boolean, not {value!r}: give true or false")
        if extra.node_keyword is not None:
            keywords[extra.node_keyword] = value
        elif value == extra.noted:
            notes.append(extra.note)
    return tuple(keywords.items()), tuple(notes)
