"""The component container node: urdf_state_publisher nodes loaded into one process.

It serves rclcpp_components' protocol (`~/_container/load_node`, `unload_node`, `list_nodes`),
as launch_ros and `ros2 component` call it, and replies as its ComponentManager does. A load
builds the very node the process entry point builds, from the request as `composition`
translates it, and adds it to the executor that spins the container (ros/process.py's): all
nodes share that one executor. Unloading, and tearing the container down, destroys the nodes.
"""

from __future__ import annotations

from composition_interfaces.srv import ListNodes, LoadNode, UnloadNode
from rclpy.logging import LoggingSeverity, set_logger_level
from rclpy.node import Node
from rclpy.parameter import Parameter, parameter_value_to_python

from urdf_state_publisher.errors import StartupError
from urdf_state_publisher.ros.composition import (
    LoadRequest,
    LoadRequestError,
    node_arguments,
    NodeArguments,
)
from urdf_state_publisher.ros.node import UrdfStatePublisher
from urdf_state_publisher.ros.qos import CONTAINER_SERVICE_QOS
from urdf_state_publisher.ros.rclpy_capabilities import node_takes

__all__ = ['ComponentContainer']

# rclcpp's component_container names its node so; launch files rename it.
CONTAINER_NODE_NAME = 'ComponentManager'


class ComponentContainer(Node):
    """Loads, lists and unloads urdf_state_publisher nodes on request."""

    def __init__(self, **node_options):
        super().__init__(CONTAINER_NODE_NAME, **node_options)
        self._nodes: dict[int, Node] = {}  # by unique id, in the order they were loaded
        self._unloading: set[Node] = set()  # unloaded, to be destroyed
        self._last_id = 0
        self._said: set[str] = set()
        self.create_service(LoadNode, '~/_container/load_node', self._on_load_node,
                            qos_profile=CONTAINER_SERVICE_QOS)
        self.create_service(UnloadNode, '~/_container/unload_node', self._on_unload_node,
                            qos_profile=CONTAINER_SERVICE_QOS)
        self.create_service(ListNodes, '~/_container/list_nodes', self._on_list_nodes)

    def _on_load_node(self, request: LoadNode.Request,
                      response: LoadNode.Response) -> LoadNode.Response:
        try:
            arguments = node_arguments(LoadRequest(
                package_name=request.package_name, plugin_name=request.plugin_name,
                node_name=request.node_name, node_namespace=request.node_namespace,
                log_level=request.log_level, remap_rules=tuple(request.remap_rules),
                parameters=tuple(request.parameters),
                extra_arguments=tuple((a.name, parameter_value_to_python(a.value))
                                      for a in request.extra_arguments)))
            node = self._build(arguments)
        except (LoadRequestError, StartupError) as error:
            reason = str(error)
        except Exception as error:  # noqa: BLE001 - rclpy refuses names and rules in many ways
            reason = ' '.join(str(error).split())  # rcl's messages span lines
        else:
            self._last_id += 1
            self._nodes[self._last_id] = node
            self.executor.add_node(node)
            response.success = True
            response.full_node_name = node.get_fully_qualified_name()
            response.unique_id = self._last_id
            self.get_logger().info(
                f"loaded '{response.full_node_name}' ({arguments.plugin.name}), "
                f'unique id {self._last_id}')
            return response
        name = request.node_name or request.plugin_name
        self.get_logger().error(f"cannot load '{name}': {reason}")
        response.success = False
        response.error_message = reason
        return response

    def _build(self, arguments: NodeArguments) -> UrdfStatePublisher:
        """The node `arguments` describe, as the process would start it."""
        for note in arguments.notes:
            self._say_once(note)
        keywords = dict(arguments.node_keywords)
        if not node_takes('enable_logger_service'):
            if keywords.pop('enable_logger_service', False):
                self._say_once('enable_logger_service: this rclpy has no logger service '
                               '(Jazzy and later have); the nodes of this container run '
                               'without it')
        # Set before the node exists, so that what it logs while starting obeys it too.
        set_logger_level(arguments.logger_name, LoggingSeverity(arguments.log_level))
        # The request's parameters come last: they win over the defaults.
        overrides = [Parameter(name, value=value) for name, value in arguments.parameter_defaults]
        overrides += [Parameter.from_parameter_msg(p) for p in arguments.parameters]
        try:
            return UrdfStatePublisher(context=self.context, cli_args=list(arguments.cli_args),
                                      parameter_overrides=overrides, **keywords)
        except BaseException:
            set_logger_level(arguments.logger_name, LoggingSeverity.UNSET)
            raise

    def _say_once(self, note: str) -> None:
        if note not in self._said:
            self._said.add(note)
            self.get_logger().info(note)

    def _on_unload_node(self, request: UnloadNode.Request,
                        response: UnloadNode.Response) -> UnloadNode.Response:
        node = self._nodes.pop(request.unique_id, None)
        if node is None:
            response.success = False
            response.error_message = f'No node found with unique_id: {request.unique_id}'
            self.get_logger().warning(response.error_message)
            return response
        name = node.get_fully_qualified_name()
        self._unload(node)
        self.get_logger().info(f"unloaded '{name}', unique id {request.unique_id}")
        response.success = True
        return response

    def _on_list_nodes(self, request: ListNodes.Request,
                       response: ListNodes.Response) -> ListNodes.Response:
        response.unique_ids = list(self._nodes)
        response.full_node_names = [n.get_fully_qualified_name() for n in self._nodes.values()]
        return response

    def _unload(self, node: Node) -> None:
        """Take `node` out of the executor, and destroy it once the executor has let go of it.

        The executor lets go of a removed node's entities only when it next runs (the
        EventsExecutor holds each one in use until then): the destruction is a task queued
        behind that, not a call inside this callback.
        """
        self._unloading.add(node)
        self.executor.remove_node(node)
        self.executor.create_task(self._destroy, node)

    def _destroy(self, node: Node) -> None:
        if node in self._unloading:
            self._unloading.discard(node)
            logger = node.get_logger().name
            node.destroy_node()
            set_logger_level(logger, LoggingSeverity.UNSET)

    def destroy_node(self) -> None:
        """Destroy every loaded node, then the container's own (the executor has stopped)."""
        for node in [*self._nodes.values(), *self._unloading]:
            self._unloading.add(node)
            self._destroy(node)
        self._nodes.clear()
        super().destroy_node()
