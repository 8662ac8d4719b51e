"""What the launch files decide before they start anything, without launch or ROS.

The launch files read their arguments (text) from the launch context and hand them here: this
checks them, works out what the node will run with (the params_file under the arguments given),
finds the packages display.launch.py needs and renders its RViz view. Every user-caused problem
is a LaunchArgumentError whose message is the one line launch prints.

Imports only the standard library and this package's parameters module at load; launch,
launch_ros, yaml, xacro and the description reader when a function needs them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
import os
from pathlib import Path
import re
from typing import Any, TYPE_CHECKING

from urdf_state_publisher.engine.parameters import (
    DOCUMENTED,
    launch_default_text,
    launch_value,
    ParameterSpec,
    ParameterValueError,
)
from urdf_state_publisher.xacro_arguments import xacro_mappings

if TYPE_CHECKING:
    from urdf_state_publisher.description import DescriptionText

__all__ = [
    'DISPLAY_PACKAGES', 'GUI', 'LaunchArgumentError', 'NODE_NAME', 'NodeSetup', 'SAMPLE_MODEL',
    'RvizView', 'VIEW_HINT', 'display_joint_states', 'install_hint', 'launch_arguments',
    'missing_packages', 'node_namespace', 'node_setup',
    'parameter_overrides', 'params_file_values', 'render_rviz_config', 'rviz_view',
    'view_installed', 'viewer_flags',
]

NODE_NAME = 'urdf_state_publisher'
# The default model, relative to the package's share directory.
SAMPLE_MODEL = 'urdf/sample_arm.urdf.xacro'
# display.launch.py's gui argument: not a node parameter, checked by the rule of a bool one.
GUI = ParameterSpec('gui', False,
                    'Start urdf_state_publisher_view: the robot in a browser, with joint sliders '
                    '(RViz 2 starts beside it where it is installed); otherwise '
                    'urdf_state_publisher publishes joint_states itself, every joint at its '
                    'default (publish_joint_states:=false to bring your own joint_states).')
# The ROS packages display.launch.py starts besides the node: RViz 2, needed without gui:=true
# (nothing else would show the robot). rosdep keys are the package names; the Debian packages
# are named from them.
DISPLAY_PACKAGES = ('rviz2',)
# gui:=true's urdf_state_publisher_view needs the package's view extra; this is its library.
VIEW_MODULE = 'viser'
VIEW_HINT = ("display.launch.py gui:=true starts urdf_state_publisher_view, which needs viser: "
             "install the package's view extra with `pip install 'urdf_state_publisher[view]'`")
_PUBLISH_JOINT_STATES = next(spec for spec in DOCUMENTED if spec.name == 'publish_joint_states')
# The parameters through which the node gets its description, besides robot_description text.
_DESCRIPTION_PARAMETERS = ('robot_description', 'description_file',
                           'use_robot_description_topic')


class LaunchArgumentError(ValueError):
    """A launch argument that cannot be used; the message, one line, names it."""


# --- The arguments ----------------------------------------------------------------------------

def _given(configurations: Mapping[str, str], name: str) -> str:
    """The argument's text, stripped; '' when it was left at its default (not given)."""
    return configurations.get(name, '').strip()


def _checked(spec: ParameterSpec, text: str) -> Any:
    try:
        return launch_value(spec, text)
    except ParameterValueError as error:
        raise LaunchArgumentError(str(error)) from None


def parameter_overrides(configurations: Mapping[str, str]) -> dict[str, Any]:
    """The parameter arguments that were given (non-empty), as checked values of their type."""
    return {spec.name: _checked(spec, _given(configurations, spec.name))
            for spec in DOCUMENTED
            if spec.launch_argument and _given(configurations, spec.name)}


def viewer_flags(configurations: Mapping[str, str]) -> dict[str, bool]:
    """display.launch.py's own bool arguments, checked: {'gui': ...}."""
    text = _given(configurations, GUI.name)
    return {GUI.name: _checked(GUI, text) if text else GUI.default}


def _xacro_args(configurations: Mapping[str, str]) -> tuple[str, ...]:
    from urdf_state_publisher.errors import DescriptionError

    arguments = tuple(_given(configurations, 'xacro_args').split())
    try:
        xacro_mappings(arguments)
    except DescriptionError as error:
        raise LaunchArgumentError(f'launch argument xacro_args: {error}') from None
    return arguments


def node_namespace(configurations: Mapping[str, str]) -> str:
    """The node's absolute namespace, as launch_ros makes it: `namespace` under a pushed one."""
    from launch_ros.utilities import make_namespace_absolute, prefix_namespace

    return make_namespace_absolute(prefix_namespace(
        configurations.get('ros_namespace'), _given(configurations, 'namespace')))


# --- The params file --------------------------------------------------------------------------

def _name_matches(pattern: str, fully_qualified_name: str) -> bool:
    """Whether a params file's node key names the node, by ROS 2's rules.

    '*' stands for one name token, '**' for any number; a key without a leading '/' is read as
    if it had one (rcl's parser does so).
    """
    tokens = [re.escape(token) for token in pattern.strip('/').split('/')]
    expression = ''.join(
        '(/[^/]+)*' if token == re.escape('**') else
        '/[^/]+' if token == re.escape('*') else '/' + token
        for token in tokens)
    return re.fullmatch(expression, fully_qualified_name) is not None


def params_file_values(path: str, node_namespace: str) -> dict[str, Any]:
    """The parameters a params file sets for our node in `node_namespace` (absolute).

    Sections are applied in the file's order, a later one over an earlier. LaunchArgumentError
    naming params_file when the file is missing or is not a ROS 2 params file.
    """
    import yaml

    fully_qualified_name = node_namespace.rstrip('/') + '/' + NODE_NAME
    try:
        document = yaml.safe_load(Path(path).read_text(encoding='utf-8'))
    except OSError as error:
        raise LaunchArgumentError(
            f'launch argument params_file: cannot read {path!r}: '
            f'{error.strerror or type(error).__name__}') from None
    except (yaml.YAMLError, UnicodeDecodeError) as error:
        where = str(error).splitlines()[-1].strip()
        raise LaunchArgumentError(
            f'launch argument params_file: {path!r} is not valid YAML ({where})') from None
    if not isinstance(document, dict) or not all(
            isinstance(section, dict) and isinstance(section.get('ros__parameters'), dict)
            for section in document.values()):
        raise LaunchArgumentError(
            f"launch argument params_file: {path!r} is not a ROS 2 params file (expected "
            "'<node name>: {ros__parameters: {name: value}}' sections)")
    values: dict[str, Any] = {}
    for key, section in document.items():
        if _name_matches(str(key), fully_qualified_name):
            values.update(section['ros__parameters'])
    return values


# --- What the node runs with ------------------------------------------------------------------

@dataclass(frozen=True)
class NodeSetup:
    """What urdf_state_publisher.launch.py gives the node, decided from the arguments.

    `parameters` go after the params file, so they win over it; each is there because an
    argument was given (robot_description also when nothing else names a description).
    `warnings`, one line each, for the launch file to log: those of reading the model (xacro
    arguments it does not take), which the node, given its text, cannot know.
    """

    params_files: tuple[str, ...]
    parameters: dict[str, Any]
    from_params_file: dict[str, Any]  # what the params file sets for the node
    xacro_args: tuple[str, ...]
    description_argument: str  # the launch argument the description comes from, for messages
    warnings: tuple[str, ...]

    @property
    def frame_prefix(self) -> str:
        """The frame_prefix the node will run with, from wherever it comes."""
        return str(self.parameters.get(
            'frame_prefix', self.from_params_file.get('frame_prefix', '')))


def _model_text(path: str, xacro_args: tuple[str, ...]) -> DescriptionText:
    """The model's URDF text, by the package's own reader (xacro for .xacro), before the node."""
    from urdf_state_publisher.description import read_description_file
    from urdf_state_publisher.errors import DescriptionError

    if not os.path.isfile(path):
        raise LaunchArgumentError(f'launch argument model: no file at {path!r}')
    try:
        return read_description_file(path, xacro_args)
    except DescriptionError as error:
        raise LaunchArgumentError(f'launch argument model: {error}') from None


def node_setup(configurations: Mapping[str, str], node_namespace: str,
               share_directory: str) -> NodeSetup:
    """Check the arguments and decide the node's parameters (`node_namespace`: absolute).

    Precedence, lowest first: the node's defaults, the params_file, the arguments given. The
    description: `model` when given; else the params_file's robot_description,
    description_file or use_robot_description_topic when it sets one; else the bundled sample
    (in `share_directory`). Passing the sample when the file names a description would
    override it: the node reads robot_description before description_file.
    """
    overrides = parameter_overrides(configurations)
    xacro_args = _xacro_args(configurations)
    params_file = _given(configurations, 'params_file')
    from_file = params_file_values(params_file, node_namespace) if params_file else {}
    model = _given(configurations, 'model')
    parameters: dict[str, Any] = {}
    warnings: tuple[str, ...] = ()
    if model or not any(from_file.get(name) for name in _DESCRIPTION_PARAMETERS):
        description = _model_text(model or os.path.join(share_directory, SAMPLE_MODEL),
                                  xacro_args)
        parameters['robot_description'] = description.text
        warnings = tuple(f'launch argument model: {warning}' for warning in description.warnings)
        if from_file.get('use_robot_description_topic'):
            # The model given on the command line wins over the file's topic too.
            parameters['use_robot_description_topic'] = False
        argument = 'model'
    elif from_file.get('description_file') and not from_file.get('robot_description'):
        if xacro_args:
            parameters['xacro_args'] = list(xacro_args)
        argument = 'params_file'
    elif xacro_args:
        raise LaunchArgumentError(
            'launch argument xacro_args: given, but params_file sets no model file to apply it '
            f'to (it names the description by robot_description or '
            f'use_robot_description_topic): {params_file!r}')
    else:
        argument = 'params_file'
    parameters.update(overrides)
    return NodeSetup(params_files=(params_file,) if params_file else (), parameters=parameters,
                     from_params_file=from_file, xacro_args=xacro_args,
                     description_argument=argument, warnings=warnings)


# --- display.launch.py ------------------------------------------------------------------------

def display_joint_states(configurations: Mapping[str, str], flags: Mapping[str, bool]) -> str:
    """The publish_joint_states argument display.launch.py passes on, as launch text.

    Without the sliders the node stands in for joint_state_publisher: 'true' unless the
    argument was given. With them, the sliders publish joint_states and the node reads them:
    the argument as given ('' = not given), and LaunchArgumentError if it is true.
    """
    given = _given(configurations, 'publish_joint_states')
    if not flags[GUI.name]:
        return given or 'true'
    if given and _checked(_PUBLISH_JOINT_STATES, given):
        raise LaunchArgumentError(
            'launch argument publish_joint_states: true with gui:=true would make the node '
            'publish joint_states beside the sliders of urdf_state_publisher_view; leave it out, '
            'and the node reads the sliders')
    return given


def missing_packages(flags: Mapping[str, bool], is_installed: Callable[[str], bool]) -> list[str]:
    """The packages display.launch.py needs with these flags that `is_installed` cannot find.

    With gui:=true the view shows the robot: RViz is then started only where it is installed.
    """
    if flags[GUI.name]:
        return []
    return [package for package in DISPLAY_PACKAGES if not is_installed(package)]


def view_installed() -> bool:
    """Whether urdf_state_publisher_view can run here: its library is importable."""
    import importlib.util

    return importlib.util.find_spec(VIEW_MODULE) is not None


def install_hint(missing: Iterable[str], ros_distro: str | None) -> str:
    """One line: which packages are missing and the command that installs them."""
    missing = list(missing)
    debian = ' '.join(f"ros-{ros_distro or '$ROS_DISTRO'}-{name.replace('_', '-')}"
                      for name in missing)
    return (f"display.launch.py needs {' and '.join(missing)}, not found in the sourced ROS "
            f'environment: install with `sudo apt install {debian}` (rosdep keys: '
            f"{', '.join(missing)}), or use urdf_state_publisher.launch.py without a display")


@dataclass(frozen=True)
class RvizView:
    """What RViz must follow: the fixed frame, the description's topic, the frames' prefix."""

    fixed_frame: str
    description_topic: str
    tf_prefix: str  # RViz's RobotModel display puts a '/' between it and each link name
    note: str  # one line when RViz cannot follow the node, else ''


def _root_link(setup: NodeSetup) -> str | None:
    """The root link of the description the node will read; None if it comes by topic."""
    from urdf_state_publisher.description import parse_description, read_description_file
    from urdf_state_publisher.errors import DescriptionError

    from_file = setup.from_params_file
    text = setup.parameters.get('robot_description') or from_file.get('robot_description')
    try:
        if not text and not from_file.get('use_robot_description_topic'):
            # The node reads this file itself, and logs the warnings of its reading.
            text = read_description_file(
                str(from_file['description_file']),
                setup.xacro_args or tuple(from_file.get('xacro_args') or ())).text
        return parse_description(text).root if text else None
    except DescriptionError as error:
        raise LaunchArgumentError(
            f'launch argument {setup.description_argument}: {error}') from None


def rviz_view(setup: NodeSetup, node_namespace: str) -> RvizView:
    """The RViz view of the robot the node will publish: under its namespace and frame_prefix.

    The fixed frame is frame_prefix + the root link. With the description coming by topic
    (unknown at launch) it is frame_prefix + 'base_link', the usual root, and `note` says so.
    """
    root = _root_link(setup)
    prefix = setup.frame_prefix
    notes = []
    if root is None:
        notes.append("the description comes by topic: RViz's fixed frame is "
                     f"{prefix + 'base_link'!r}; set it in RViz if the root link differs")
    if prefix and not prefix.endswith('/'):
        notes.append(f'RViz shows the robot model only for a frame_prefix that ends in /, not '
                     f'{prefix!r}: its RobotModel display joins prefix and link with a /')
    return RvizView(fixed_frame=prefix + (root or 'base_link'),
                    description_topic=node_namespace.rstrip('/') + '/robot_description',
                    tf_prefix=prefix.rstrip('/'), note='; '.join(notes))


def render_rviz_config(template: str, view: RvizView) -> str:
    """The RViz config `template` (YAML text) showing `view`.

    Sets the fixed frame, the RobotModel display's description topic and TF prefix; the rest
    of the template is kept.
    """
    import yaml

    config = yaml.safe_load(template)
    manager = config['Visualization Manager']
    manager['Global Options']['Fixed Frame'] = view.fixed_frame
    for display in manager['Displays']:
        if display['Class'] == 'rviz_default_plugins/RobotModel':
            display['Description Topic']['Value'] = view.description_topic
            display['TF Prefix'] = view.tf_prefix
    return yaml.safe_dump(config, sort_keys=False, default_flow_style=False)


def launch_arguments(namespace_description: str) -> list:
    """The DeclareLaunchArgument actions of urdf_state_publisher.launch.py, in order.

    display.launch.py declares the same and forwards them. Every argument defaults to ''
    meaning "not given": then the params_file's value, else the node's default, stands
    (for `model`: the params_file's description, else the bundled sample robot).
    """
    from launch.actions import DeclareLaunchArgument

    overrides = [
        DeclareLaunchArgument(
            spec.name, default_value='',
            description=f"{spec.description} (default: the params_file's, else "
                        f'{launch_default_text(spec)})')
        for spec in DOCUMENTED if spec.launch_argument]
    return [
        DeclareLaunchArgument(
            'model', default_value='',
            description='Robot description: a .urdf file, or a .xacro file expanded with '
                        "xacro_args; given, it overrides the params_file's robot_description "
                        "and description_file (default: the params_file's description, else "
                        'the bundled sample robot).'),
        DeclareLaunchArgument(
            'xacro_args', default_value='',
            description="Space-separated 'name:=value' arguments for a .xacro model, or for "
                        "the params_file's description_file."),
        DeclareLaunchArgument(
            'namespace', default_value='', description=namespace_description),
        *overrides,
        DeclareLaunchArgument(
            'params_file', default_value='',
            description='Optional YAML file of urdf_state_publisher parameters: its values win '
                        'over the defaults, the arguments above that are given win over it.'),
    ]
