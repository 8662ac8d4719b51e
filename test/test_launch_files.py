"""Checks of the launch files, parameter file, RViz config and bundled sample robot.

Nothing here imports launch or launch_ros (not installable here): the launch files are read as
Python syntax trees, or run with stand-ins for launch and launch_ros that record what the
launch files construct (`run_launch_file`), their OpaqueFunction included (`launch_setup`).
What they decide comes from urdf_state_publisher.ros.launch_support (test_launch_support.py).
"""

import ast
from collections.abc import Iterable, Iterator
import dataclasses
import logging
from pathlib import Path
import runpy
import sys
from sys import stdlib_module_names
from types import ModuleType, SimpleNamespace
from xml.etree import ElementTree

import pytest
from urdf_parser_py import urdf
import xacro
import yaml

from urdf_state_publisher.engine.parameters import LAUNCH_OVERRIDES
from urdf_state_publisher.ros.launch_support import DISPLAY_PACKAGES, SAMPLE_MODEL

PACKAGE = 'urdf_state_publisher'
PACKAGE_ROOT = Path(__file__).resolve().parents[1]
SETUP_PY = PACKAGE_ROOT / 'setup.py'
LAUNCH_DIR = PACKAGE_ROOT / 'launch'
LAUNCH_FILES = sorted(LAUNCH_DIR.glob('*.launch.py'))
MAIN_LAUNCH = LAUNCH_DIR / 'urdf_state_publisher.launch.py'
DISPLAY_LAUNCH = LAUNCH_DIR / 'display.launch.py'
PARAMS_FILE = PACKAGE_ROOT / 'config' / 'urdf_state_publisher.yaml'
RVIZ_CONFIG = PACKAGE_ROOT / 'config' / 'display.rviz'
SAMPLE_XACRO = 'urdf/sample_arm.urdf.xacro'
SAMPLE_URDF = PACKAGE_ROOT / 'urdf' / 'sample_arm.urdf'
SAMPLE_XACRO_PATH = PACKAGE_ROOT / SAMPLE_XACRO

PARAMETERS_PY = PACKAGE_ROOT / PACKAGE / 'engine/parameters.py'

# The launch files may import this package's parameters and ros.launch_support modules (they import
# neither rclpy nor launch at load: test_launch_modules_load_without_ros checks that), and
# ament_index_python, which launch_ros itself depends on.
ALLOWED_LAUNCH_IMPORTS = frozenset(
    {'launch', 'launch_ros', 'ament_index_python', PACKAGE}) | stdlib_module_names


# --- Syntax-tree helpers --------------------------------------------------------------------

def _parse(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding='utf-8'), filename=str(path))


def _callee(call: ast.Call) -> str | None:
    """Return the last name of what a call calls: 'Node' for Node(...) and x.actions.Node(...)."""
    if isinstance(call.func, ast.Name):
        return call.func.id
    if isinstance(call.func, ast.Attribute):
        return call.func.attr
    return None


def _calls(tree: ast.AST, name: str) -> Iterator[ast.Call]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _callee(node) == name:
            yield node


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    for keyword in call.keywords:
        if keyword.arg == name:
            return keyword.value
    return None


def _argument(call: ast.Call, position: int, name: str) -> ast.expr | None:
    """Return the argument given by keyword `name` or at `position`."""
    value = _keyword(call, name)
    if value is None and len(call.args) > position:
        value = call.args[position]
    return value


def _module_strings(tree: ast.Module) -> dict[str, str]:
    """Return the module-level `NAME = 'text'` constants."""
    constants = {}
    for statement in tree.body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target = statement.targets[0]
            value = _string(statement.value, constants)
            if isinstance(target, ast.Name) and value is not None:
                constants[target.id] = value
    return constants


def _string(node: ast.expr | None, constants: dict[str, str]) -> str | None:
    """Evaluate a string literal, a module constant, an f-string or a sum of those; else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        return constants.get(node.id)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _string(node.left, constants), _string(node.right, constants)
        return None if left is None or right is None else left + right
    if isinstance(node, ast.JoinedStr):
        parts = []
        for value in node.values:
            if isinstance(value, ast.FormattedValue):
                if value.conversion != -1 or value.format_spec is not None:
                    return None
                value = value.value
            part = _string(value, constants)
            if part is None:
                return None
            parts.append(part)
        return ''.join(parts)
    return None


# --- What the launch files say --------------------------------------------------------------

def module_level_imports(path: Path) -> set[str]:
    """Return the top-level package of every import a file makes outside functions and classes.

    A relative import is returned as '.'.
    """
    found = set()
    pending: list[ast.AST] = list(_parse(path).body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Import):
            found.update(alias.name.split('.')[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            found.add('.' if node.level else node.module.split('.')[0])
        pending.extend(ast.iter_child_nodes(node))
    return found


class Made:
    """Something a launch file made with a launch or launch_ros class: its name and arguments."""

    def __init__(self, kind: str, *args, **kwargs):
        self.kind, self.args, self.kwargs = kind, args, kwargs

    @property
    def name(self):
        """The first argument, as DeclareLaunchArgument.name and LaunchConfiguration name it."""
        return self.kwargs.get('name', self.args[0] if self.args else None)

    def __repr__(self) -> str:
        return f'{self.kind}{self.args}{self.kwargs}'


class _StandIn(ModuleType):
    """A launch or launch_ros module whose every name makes a recorder of its calls.

    Names in `behaviours` are those functions instead: what a launch file needs to get a value
    back from launch (a package's share directory, launch_ros' namespace rules).
    """

    def __init__(self, name: str, made: list[Made], behaviours: dict):
        super().__init__(name)
        self._made, self._behaviours = made, behaviours

    def __getattr__(self, kind: str):
        if kind.startswith('__'):
            raise AttributeError(kind)
        if kind in self._behaviours:
            return self._behaviours[kind]
        made = self._made

        def make(*args, **kwargs) -> Made:
            thing = Made(kind, *args, **kwargs)
            made.append(thing)
            return thing
        return make


class _FindPackageShare:
    """Stands in for launch_ros' FindPackageShare: this checkout is laid out as the share."""

    def __init__(self, package: str):
        assert package == PACKAGE, package

    def perform(self, context) -> str:
        return str(PACKAGE_ROOT)


def _prefix_namespace(base, namespace):
    """launch_ros' rule: a relative namespace goes under the pushed one; no trailing /."""
    if base is None and namespace is None:
        return None
    if namespace is None:
        combined = base
    elif not base or namespace.startswith('/'):
        combined = namespace
    else:
        combined = ('' if base == '/' else base) + '/' + namespace
    return combined if combined == '/' else combined.rstrip('/')


def _make_namespace_absolute(namespace):
    return namespace if namespace is None or namespace.startswith('/') else '/' + namespace


# launch.logging's loggers are Python's, named as launch names them.
BEHAVIOURS = {'FindPackageShare': _FindPackageShare, 'prefix_namespace': _prefix_namespace,
              'make_namespace_absolute': _make_namespace_absolute,
              'get_logger': logging.getLogger}
STAND_IN_MODULES = (
    'launch', 'launch.actions', 'launch.conditions', 'launch.event_handlers', 'launch.logging',
    'launch.launch_description_sources', 'launch.substitutions', 'launch_ros',
    'launch_ros.actions', 'launch_ros.parameter_descriptions', 'launch_ros.substitutions',
    'launch_ros.utilities')


def run_launch_file(path: Path, monkeypatch) -> tuple[dict, list[Made]]:
    """Run a launch file with stand-ins for launch and launch_ros; its globals and what it made.

    generate_launch_description() has run; functions run later by launch (OpaqueFunction) have
    not.
    """
    made: list[Made] = []
    for name in STAND_IN_MODULES:
        monkeypatch.setitem(sys.modules, name, _StandIn(name, made, BEHAVIOURS))
    namespace = runpy.run_path(str(path))
    namespace['generate_launch_description']()
    return namespace, made


def declared_launch_arguments(path: Path, monkeypatch) -> dict[str, Made]:
    """Return each argument a launch file declares, by name, as its DeclareLaunchArgument."""
    namespace, _ = run_launch_file(path, monkeypatch)
    return {argument.name: argument for argument in namespace['declare_arguments']()}


class _ReadConfigurations(dict):
    """Launch configurations that remember which names were read."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.read: set[str] = set()

    def __getitem__(self, name):
        self.read.add(name)
        return super().__getitem__(name)

    def get(self, name, default=None):
        self.read.add(name)
        return super().get(name, default)


def prepared_setup(path: Path, monkeypatch, **arguments: str):
    """A launch file's OpaqueFunction, the context launch would give it, and a record of makes.

    The context holds these arguments given and the others at their defaults.
    """
    namespace, made = run_launch_file(path, monkeypatch)
    (opaque,) = [thing for thing in made if thing.kind == 'OpaqueFunction']
    defaults = {argument.name: argument.kwargs['default_value']
                for argument in namespace['declare_arguments']()}
    context = SimpleNamespace(launch_configurations=_ReadConfigurations(defaults, **arguments))
    del made[:]
    return opaque.kwargs['function'], context, made


def launch_setup(path: Path, monkeypatch, **arguments: str) -> tuple[list, list[Made]]:
    """Run a launch file as launch does with these arguments given (the others at default).

    Returns what its OpaqueFunction returned, and everything it made on the way.
    """
    function, context, made = prepared_setup(path, monkeypatch, **arguments)
    return function(context), made


def nodes(actions: Iterable) -> dict[str, Made]:
    """The Node actions among `actions`, by package."""
    return {thing.kwargs['package']: thing for thing in actions if thing.kind == 'Node'}


def parameter_values(node: Made) -> tuple[list[str], dict]:
    """A Node's params files, and its other parameters as {name: (value, value_type)}."""
    files = [entry for entry in node.kwargs['parameters'] if isinstance(entry, str)]
    values = {}
    for entry in node.kwargs['parameters']:
        if isinstance(entry, dict):
            for name, value in entry.items():
                assert value.kind == 'ParameterValue', (name, value)
                values[name] = (value.args[0], value.kwargs['value_type'])
    return files, values


def launch_configurations(path: Path) -> set[str]:
    """Return the names read with LaunchConfiguration('literal') in a launch file."""
    tree = _parse(path)
    constants = _module_strings(tree)
    names = set()
    for call in _calls(tree, 'LaunchConfiguration'):
        name = _string(_argument(call, 0, 'variable_name'), constants)
        if name is not None:
            names.add(name)
    return names


# --- What the other files say ---------------------------------------------------------------

def yaml_parameter_names(path: Path) -> set[str]:
    """Return the parameter names set in a ROS 2 params file, nested keys joined with '.'."""
    document = yaml.safe_load(path.read_text(encoding='utf-8'))
    names = set()

    def collect(mapping: dict, prefix: str) -> None:
        for key, value in mapping.items():
            if isinstance(value, dict):
                collect(value, f'{prefix}{key}.')
            else:
                names.add(f'{prefix}{key}')

    for node_name, sections in document.items():
        assert isinstance(sections, dict) and 'ros__parameters' in sections, (
            f'{path.name}: {node_name!r} has no ros__parameters')
        collect(sections['ros__parameters'], '')
    return names


def console_scripts(setup_py: Path) -> dict[str, str]:
    """Return the console_scripts entry points of a setup.py, name to 'module:function'."""
    tree = _parse(setup_py)
    constants = _module_strings(tree)
    for call in _calls(tree, 'setup'):
        entry_points = _keyword(call, 'entry_points')
        if isinstance(entry_points, ast.Name):
            entry_points = next(
                (statement.value for statement in tree.body
                 if isinstance(statement, ast.Assign)
                 and any(isinstance(target, ast.Name) and target.id == entry_points.id
                         for target in statement.targets)),
                None)
        if not isinstance(entry_points, ast.Dict):
            continue
        for key, value in zip(entry_points.keys, entry_points.values):
            if _string(key, constants) != 'console_scripts':
                continue
            assert isinstance(value, (ast.List, ast.Tuple)), 'console_scripts is not a list'
            scripts = {}
            for element in value.elts:
                text = _string(element, constants)
                assert text is not None and '=' in text, (
                    f'setup.py:{element.lineno}: cannot read a console script')
                name, target = text.split('=', 1)
                scripts[name.strip()] = target.strip()
            return scripts
    return {}


def undeclared_parameters(used: Iterable[str], declared: Iterable[str]) -> list[str]:
    """Return, sorted and once each, the names in `used` that are not in `declared`."""
    return sorted(set(used) - set(declared))


# --- Fixtures -------------------------------------------------------------------------------

def parameter_names(make_node) -> frozenset[str]:
    """Return the names of the parameters `make_node(context)` declares, in a fresh context."""
    import rclpy

    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        node = make_node(context)
        names = frozenset(node.list_parameters([], 0).names)
        node.destroy_node()
    finally:
        rclpy.try_shutdown(context=context)
    return names


@pytest.fixture(scope='module')
def declared_parameters() -> frozenset[str]:
    """Return the names of the parameters a real node instance declares (rclpy, in-process)."""
    from rclpy.parameter import Parameter

    from urdf_state_publisher.ros.node import UrdfStatePublisher

    description = Parameter('robot_description', value=SAMPLE_URDF.read_text(encoding='utf-8'))
    return parameter_names(lambda context: UrdfStatePublisher(
        context=context, parameter_overrides=[description]))


@pytest.fixture(scope='module')
def rclpy_standard_parameters() -> frozenset[str]:
    """Return the names every rclpy node declares (use_sim_time, ...), from a bare node."""
    import rclpy

    return parameter_names(lambda context: rclpy.create_node('bare', context=context))


@pytest.fixture(scope='module')
def sample() -> ElementTree.Element:
    """Return the root <robot> element of the bundled sample robot."""
    return ElementTree.parse(SAMPLE_URDF).getroot()


# --- Launch files ---------------------------------------------------------------------------

def test_launch_files_exist():
    """Both launch files are in launch/."""
    assert MAIN_LAUNCH in LAUNCH_FILES
    assert DISPLAY_LAUNCH in LAUNCH_FILES


@pytest.mark.parametrize('path', LAUNCH_FILES, ids=lambda path: path.name)
def test_launch_file_imports_only_launch_and_standard_library(path):
    """A launch file imports only launch, launch_ros and the standard library at load."""
    outside = module_level_imports(path) - ALLOWED_LAUNCH_IMPORTS
    assert not outside, f'{path.name} imports {sorted(outside)} at module level'


def test_launch_modules_load_without_ros():
    """The modules the launch files import load neither rclpy, launch nor the XML tools."""
    import subprocess

    for module in ('urdf_state_publisher.engine.parameters',
                   'urdf_state_publisher.ros.launch_support'):
        loaded = subprocess.run(
            [sys.executable, '-c', f'import sys; import {module}; '
             'print(sorted({m.split(".")[0] for m in sys.modules}))'],
            capture_output=True, text=True, check=True, cwd=PACKAGE_ROOT).stdout
        for heavy in ('rclpy', 'launch', 'launch_ros', 'xacro', 'lxml', 'yaml'):
            assert f"'{heavy}'" not in loaded, f'importing {module} loads {heavy}'


def test_import_check_reports_a_third_party_import(tmp_path):
    """The import check sees third-party and relative imports, not those in functions."""
    path = tmp_path / 'bad.launch.py'
    path.write_text(
        'import os\nimport xacro\nfrom launch import LaunchDescription\n'
        'from . import helpers\n\n\ndef later():\n    import yaml\n')
    assert module_level_imports(path) - ALLOWED_LAUNCH_IMPORTS == {'xacro', '.'}


def test_console_scripts_reader(tmp_path):
    """console_scripts are read from literals, f-strings and module constants."""
    setup_py = tmp_path / 'setup.py'
    setup_py.write_text(
        "from setuptools import setup\n"
        "package_name = 'pkg'\n"
        "setup(name=package_name, entry_points={'console_scripts': [\n"
        "    'tool = pkg.tool:main',\n"
        "    f'other={package_name}.other:main',\n"
        "]})\n")
    assert console_scripts(setup_py) == {'tool': 'pkg.tool:main', 'other': 'pkg.other:main'}


@pytest.fixture
def viewers_installed(tmp_path, monkeypatch) -> Path:
    """An ament prefix where RViz 2 is found, as after apt."""
    prefix = tmp_path / 'opt_ros'
    index = prefix / 'share' / 'ament_index' / 'resource_index' / 'packages'
    index.mkdir(parents=True)
    for package in DISPLAY_PACKAGES:
        (index / package).touch()
    monkeypatch.setenv('AMENT_PREFIX_PATH', str(prefix))
    return index


def _remove_rendered_configs(actions: Iterable) -> None:
    """Run the shutdown handlers display.launch.py registered (they remove its temp files)."""
    for action in actions:
        if action.kind == 'RegisterEventHandler':
            (handler,) = action.args
            assert handler.kind == 'OnShutdown'
            handler.kwargs['on_shutdown']()


def display_setup(monkeypatch, **arguments: str) -> tuple[list, list[Made]]:
    """launch_setup of display.launch.py, its rendered RViz config removed again."""
    actions, made = launch_setup(DISPLAY_LAUNCH, monkeypatch, **arguments)
    _remove_rendered_configs(actions)
    return actions, made


def test_our_nodes_run_console_scripts_of_setup_py(monkeypatch, viewers_installed):
    """Every executable of this package that a launch file starts is a console script."""
    scripts = console_scripts(SETUP_PY)
    main = nodes(launch_setup(MAIN_LAUNCH, monkeypatch)[0])
    assert main[PACKAGE].kwargs['executable'] in scripts
    display = nodes(display_setup(monkeypatch)[0])
    assert PACKAGE not in display, 'display.launch.py starts the node through the main file'


@pytest.mark.parametrize('path', LAUNCH_FILES, ids=lambda path: path.name)
def test_launch_configurations_are_declared(path, monkeypatch, viewers_installed):
    """Every launch configuration a launch file reads, itself or through ros.launch_support, is
    declared in it (or is launch_ros' pushed namespace)."""
    _, made = run_launch_file(path, monkeypatch)
    read = launch_configurations(path) | {
        thing.name for thing in made if thing.kind == 'LaunchConfiguration'}
    function, context, made = prepared_setup(path, monkeypatch, gui='true')
    actions = function(context)
    _remove_rendered_configs(actions)
    read |= context.launch_configurations.read - {'ros_namespace'}
    read |= {thing.name for thing in made if thing.kind == 'LaunchConfiguration'}
    undeclared = read - set(declared_launch_arguments(path, monkeypatch))
    assert not undeclared, f'{path.name} reads undeclared arguments {sorted(undeclared)}'
    assert 'model' in read and 'params_file' in read


def test_main_launch_file_arguments(monkeypatch):
    """urdf_state_publisher.launch.py declares its arguments, every one empty = not given."""
    declared = declared_launch_arguments(MAIN_LAUNCH, monkeypatch)
    assert list(declared) == [
        'model', 'xacro_args', 'namespace', 'publish_frequency', 'frame_prefix',
        'publish_joint_states', 'use_sim_time', 'params_file']
    assert {argument.kwargs['default_value'] for argument in declared.values()} == {''}


@pytest.mark.parametrize('path', LAUNCH_FILES, ids=lambda path: path.name)
def test_parameter_arguments_name_the_defaults_of_parameters(path, monkeypatch):
    """The description of a parameter's launch argument names the default in PARAMETERS.

    Checked with a changed default too: the launch files take it from the table, so the
    change alone changes what they say.
    """
    from urdf_state_publisher.engine import parameters
    from urdf_state_publisher.ros import launch_support

    expected = {'publish_frequency': 'else 20.0)', 'frame_prefix': 'else empty)',
                'use_sim_time': 'else false)'}
    declared = declared_launch_arguments(path, monkeypatch)
    for name, ending in expected.items():
        assert declared[name].kwargs['description'].endswith(ending), (path.name, name)

    changed = tuple(dataclasses.replace(spec, default=30.0) if spec.name == 'publish_frequency'
                    else spec for spec in parameters.DOCUMENTED)
    monkeypatch.setattr(launch_support, 'DOCUMENTED', changed)  # where launch_arguments reads it
    description = declared_launch_arguments(path, monkeypatch)['publish_frequency'].kwargs[
        'description']
    assert description.endswith("(default: the params_file's, else 30.0)")


def _params_file(tmp_path: Path, parameters: dict, name: str = 'params.yaml') -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump({'/**': {'ros__parameters': parameters}}), encoding='utf-8')
    return str(path)


def test_main_launch_gives_the_params_file_then_the_arguments_given(monkeypatch, tmp_path):
    """The params file goes first and so loses to what follows: only arguments given."""
    params = _params_file(tmp_path, {'publish_frequency': 100.0,
                                     'description_file': str(SAMPLE_URDF)})
    (node,) = launch_setup(MAIN_LAUNCH, monkeypatch, params_file=params)[0]
    assert parameter_values(node) == ([params], {})

    (node,) = launch_setup(MAIN_LAUNCH, monkeypatch, params_file=params, namespace='ns',
                           publish_frequency='50', frame_prefix='left/', use_sim_time='true',
                           model=str(SAMPLE_URDF))[0]
    files, values = parameter_values(node)
    assert files == [params]
    assert values == {
        'robot_description': (SAMPLE_URDF.read_text(encoding='utf-8'), str),
        'publish_frequency': (50.0, float), 'frame_prefix': ('left/', str),
        'use_sim_time': (True, bool)}
    assert node.kwargs['namespace'].name == 'namespace'


def test_main_launch_gives_the_sample_when_nothing_names_a_description(monkeypatch):
    (node,) = launch_setup(MAIN_LAUNCH, monkeypatch)[0]
    files, values = parameter_values(node)
    assert files == []
    description, value_type = values.pop('robot_description')
    assert value_type is str and '<robot name="sample_arm">' in description
    assert values == {}


@pytest.mark.parametrize('path', LAUNCH_FILES, ids=lambda path: path.name)
@pytest.mark.parametrize(('arguments', 'message'), [
    ({'publish_frequency': 'fast'},
     "launch argument publish_frequency: expected a positive, finite number of Hz, got 'fast'"),
    ({'use_sim_time': 'yes'}, "launch argument use_sim_time: expected true or false, got 'yes'"),
    ({'model': '/no/such/robot.urdf.xacro'},
     "launch argument model: no file at '/no/such/robot.urdf.xacro'"),
])
def test_a_bad_argument_ends_the_launch_with_one_line_before_any_node(
        path, arguments, message, monkeypatch, viewers_installed):
    """launch prints the exception's message on one line; nothing was made to start."""
    from urdf_state_publisher.ros.launch_support import LaunchArgumentError

    function, context, made = prepared_setup(path, monkeypatch, **arguments)
    with pytest.raises(LaunchArgumentError) as raised:
        function(context)
    assert str(raised.value) == message
    assert made == [], f'made before the check: {made}'


def test_display_without_rviz_needs_gui_and_without_the_view_extra_starts_nothing(
        monkeypatch, viewers_installed):
    from urdf_state_publisher.ros import launch_support
    from urdf_state_publisher.ros.launch_support import LaunchArgumentError, VIEW_HINT

    (viewers_installed / 'rviz2').unlink()
    monkeypatch.setenv('ROS_DISTRO', 'jazzy')
    # Without RViz, gui:=true still shows the robot: in the browser.
    actions, _ = display_setup(monkeypatch, gui='true')
    started = nodes(actions)
    assert set(started) == {PACKAGE}
    assert started[PACKAGE].kwargs['executable'] == 'urdf_state_publisher_view'

    function, context, made = prepared_setup(DISPLAY_LAUNCH, monkeypatch)
    with pytest.raises(LaunchArgumentError) as raised:
        function(context)
    assert str(raised.value).startswith(
        'display.launch.py needs rviz2, not found in the sourced ROS environment: install '
        'with `sudo apt install ros-jazzy-rviz2`')
    assert made == [], f'made before the check: {made}'

    monkeypatch.setattr(launch_support, 'VIEW_MODULE', 'no_view_library_here')
    function, context, made = prepared_setup(DISPLAY_LAUNCH, monkeypatch, gui='true')
    with pytest.raises(LaunchArgumentError) as raised:
        function(context)
    assert str(raised.value) == VIEW_HINT
    assert made == [], f'made before the check: {made}'


def test_display_starts_rviz_and_the_view_only_with_gui(monkeypatch, viewers_installed):
    """RViz starts where installed; urdf_state_publisher_view only with gui:=true, in the
    namespace, as a console script of setup.py."""
    actions, _ = display_setup(monkeypatch)
    assert set(nodes(actions)) == {'rviz2'}
    actions, _ = display_setup(monkeypatch, gui='true', namespace='robot1')
    started = nodes(actions)
    assert set(started) == {'rviz2', PACKAGE}
    assert started[PACKAGE].kwargs['executable'] in console_scripts(SETUP_PY)
    assert started[PACKAGE].kwargs['executable'] == 'urdf_state_publisher_view'
    assert started[PACKAGE].kwargs['namespace'].name == 'namespace'


def test_display_passes_use_sim_time_to_its_viewers_only_when_given(
        monkeypatch, viewers_installed):
    actions, _ = display_setup(monkeypatch, gui='true')
    for node in nodes(actions).values():
        assert node.kwargs['parameters'] == [], node.kwargs['package']
    actions, _ = display_setup(monkeypatch, gui='true', use_sim_time='true')
    for node in nodes(actions).values():
        (parameters,) = node.kwargs['parameters']
        value = parameters['use_sim_time']
        assert (value.args, value.kwargs) == ((True,), {'value_type': bool})


def test_display_declares_and_forwards_every_argument_of_the_main_launch_file(
        monkeypatch, viewers_installed):
    """display.launch.py declares, with the same defaults, and forwards every argument."""
    main = declared_launch_arguments(MAIN_LAUNCH, monkeypatch)
    display = declared_launch_arguments(DISPLAY_LAUNCH, monkeypatch)
    assert list(display) == [*main, 'gui', 'rviz_config']
    for name, argument in main.items():
        assert argument.kwargs['default_value'] == display[name].kwargs['default_value'], name
    assert display['gui'].kwargs['default_value'] == 'false'
    actions, _ = display_setup(monkeypatch)
    (include,) = [thing for thing in actions if thing.kind == 'IncludeLaunchDescription']
    (source,) = include.args
    assert source.args == (str(MAIN_LAUNCH),)
    pairs = dict(include.kwargs['launch_arguments'])
    # without the sliders the node publishes joint_states itself (joint_state_publisher's role)
    assert pairs.pop('publish_joint_states') == 'true'
    assert {name: value.name for name, value in pairs.items()
            if value.kind == 'LaunchConfiguration'} == {
        name: name for name in main if name != 'publish_joint_states'}


@pytest.mark.parametrize('arguments, expected', [
    ({}, 'true'),
    ({'publish_joint_states': 'false'}, 'false'),  # bring your own joint_states
    ({'gui': 'true'}, ''),  # the sliders publish them; the node reads them
    ({'gui': 'true', 'publish_joint_states': 'false'}, 'false'),
], ids=['alone', 'own_joint_states', 'sliders', 'sliders_and_false'])
def test_display_lets_the_node_publish_joint_states_unless_the_sliders_do(
        monkeypatch, viewers_installed, arguments, expected):
    actions, _ = display_setup(monkeypatch, **arguments)
    (include,) = [thing for thing in actions if thing.kind == 'IncludeLaunchDescription']
    assert dict(include.kwargs['launch_arguments'])['publish_joint_states'] == expected


def test_display_refuses_the_sliders_and_the_node_both_publishing_joint_states(
        monkeypatch, viewers_installed):
    from urdf_state_publisher.ros.launch_support import LaunchArgumentError

    function, context, made = prepared_setup(DISPLAY_LAUNCH, monkeypatch, gui='true',
                                             publish_joint_states='true')
    with pytest.raises(LaunchArgumentError, match='^launch argument publish_joint_states: '):
        function(context)


def _rendered_config(actions: list) -> dict:
    (rviz,) = [thing for thing in actions
               if thing.kind == 'Node' and thing.kwargs['package'] == 'rviz2']
    flag, path = rviz.kwargs['arguments']
    assert flag == '-d'
    return yaml.safe_load(Path(path).read_text(encoding='utf-8'))


def test_display_renders_the_rviz_config_for_the_node_and_removes_it(
        monkeypatch, viewers_installed):
    """RViz looks at the namespaced description and the prefixed root link; the file goes."""
    actions, _ = launch_setup(DISPLAY_LAUNCH, monkeypatch, namespace='robot1',
                              frame_prefix='robot1/',
                              model=str(PACKAGE_ROOT / 'test' / 'fixtures' / 'mixed_joints.urdf'))
    config = _rendered_config(actions)
    manager = config['Visualization Manager']
    assert manager['Global Options']['Fixed Frame'] == 'robot1/world'
    (model,) = [display for display in manager['Displays']
                if display['Class'] == 'rviz_default_plugins/RobotModel']
    assert model['Description Topic']['Value'] == '/robot1/robot_description'
    assert model['TF Prefix'] == 'robot1'
    (rviz,) = [thing for thing in actions if thing.kind == 'Node'
               and thing.kwargs['package'] == 'rviz2']
    path = Path(rviz.kwargs['arguments'][1])
    _remove_rendered_configs(actions)
    assert not path.exists()


def test_display_uses_a_given_rviz_config_as_it_is(monkeypatch, viewers_installed, tmp_path):
    own = tmp_path / 'mine.rviz'
    own.write_text(RVIZ_CONFIG.read_text(encoding='utf-8'), encoding='utf-8')
    actions, _ = display_setup(monkeypatch, rviz_config=str(own), namespace='robot1')
    (rviz,) = [thing for thing in actions if thing.kind == 'Node'
               and thing.kwargs['package'] == 'rviz2']
    assert rviz.kwargs['arguments'] == ['-d', str(own)]
    from urdf_state_publisher.ros.launch_support import LaunchArgumentError

    with pytest.raises(LaunchArgumentError, match="^launch argument rviz_config: no file at '"):
        display_setup(monkeypatch, rviz_config=str(tmp_path / 'missing.rviz'))


# What the launch files read from this package's share directory.
SHARED_FILES = (SAMPLE_MODEL, 'config/display.rviz', 'launch/urdf_state_publisher.launch.py')


def test_shared_files_exist_and_setup_py_installs_their_folders():
    """The files the launch files read from share/ are in the source and installed."""
    strings = [
        node.value for node in ast.walk(_parse(SETUP_PY))
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    ]
    for shared in SHARED_FILES:
        assert (PACKAGE_ROOT / shared).is_file(), shared
        folder = shared.split('/')[0]
        assert any(folder in Path(text).parts for text in strings), (
            f'setup.py does not seem to install {folder}/ into share/{PACKAGE}')


# --- Parameter names ------------------------------------------------------------------------

def given_parameter_names(monkeypatch, tmp_path) -> set[str]:
    """Every parameter name the main launch file gives the node, over its kinds of setup."""
    text = {bool: 'true', float: '1.0', str: 'x/'}
    everything = {name: text[kind] for name, kind in LAUNCH_OVERRIDES.items()}
    cases = [
        {},
        {'params_file': _params_file(tmp_path, {'use_robot_description_topic': True},
                                     'by_topic.yaml'),
         'model': str(SAMPLE_URDF), **everything},
        {'params_file': _params_file(tmp_path, {'description_file': str(SAMPLE_XACRO_PATH)},
                                     'by_file.yaml'),
         'xacro_args': 'prefix:=a_'},
    ]
    names = set()
    for arguments in cases:
        (node,) = launch_setup(MAIN_LAUNCH, monkeypatch, **arguments)[0]
        names |= set(parameter_values(node)[1])
    return names


def test_launch_files_give_our_node_parameters(monkeypatch, tmp_path):
    """The main launch file sets the description and the parameters it has arguments for."""
    assert given_parameter_names(monkeypatch, tmp_path) == {
        'robot_description', 'use_robot_description_topic', 'xacro_args', *LAUNCH_OVERRIDES}


def test_launch_parameters_are_declared_and_in_the_params_file(
        monkeypatch, tmp_path, declared_parameters):
    """The launch file gives only parameters the node declares and the params file lists."""
    given = given_parameter_names(monkeypatch, tmp_path)
    assert undeclared_parameters(given, declared_parameters) == []
    assert undeclared_parameters(given, yaml_parameter_names(PARAMS_FILE) | {'xacro_args'}) == []


def test_params_file_comments_the_empty_array_example():
    """xacro_args is a commented example: an empty YAML list has no type."""
    text = PARAMS_FILE.read_text(encoding='utf-8')
    assert '# xacro_args:' in text
    assert 'xacro_args' not in yaml_parameter_names(PARAMS_FILE)


def test_params_file_keys_are_declared_by_the_node(declared_parameters):
    """The params file sets only parameters the node declares."""
    assert undeclared_parameters(yaml_parameter_names(PARAMS_FILE), declared_parameters) == []


def test_params_file_sets_every_declared_parameter(declared_parameters,
                                                    rclpy_standard_parameters):
    """The params file lists every parameter the node declares beyond rclpy's own."""
    # The empty string arrays are in the file as commented examples: YAML's [] has no type.
    listed = yaml_parameter_names(PARAMS_FILE) | {'xacro_args', 'source_list'}
    # The QoS-override parameters of the subscriptions are rclpy's standard read-only ones,
    # documented in doc/topics.md rather than listed.
    ours = {n for n in declared_parameters - rclpy_standard_parameters
            if not n.startswith('qos_overrides.')}
    assert ours, 'the node declares no parameters of its own?'
    assert sorted(ours - listed) == []


def test_checker_reports_a_misspelt_parameter(tmp_path):
    """A misspelt parameter name is reported, from a list or a YAML file."""
    declared = ['robot_description', 'publish_frequency', 'frame_prefix', 'use_sim_time']
    assert undeclared_parameters(['publish_frequncy', 'frame_prefix'], declared) == [
        'publish_frequncy']

    params_file = tmp_path / 'typo.yaml'
    params_file.write_text(
        '/**:\n  ros__parameters:\n    publish_frequncy: 50.0\n'
        '    qos_overrides:\n      depth: 3\n')
    assert undeclared_parameters(yaml_parameter_names(params_file), declared) == [
        'publish_frequncy', 'qos_overrides.depth']


# --- RViz -----------------------------------------------------------------------------------

def _root_link(robot: ElementTree.Element) -> str:
    links = {link.get('name') for link in robot.findall('link')}
    children = {joint.find('child').get('link') for joint in robot.findall('joint')}
    (root,) = links - children
    return root


def test_rviz_config_shows_the_sample_robot(sample):
    """The RViz config shows the robot model from /robot_description, TF and a grid."""
    config = yaml.safe_load(RVIZ_CONFIG.read_text(encoding='utf-8'))
    manager = config['Visualization Manager']
    assert manager['Global Options']['Fixed Frame'] == 'base_footprint' == _root_link(sample)
    displays = {display['Class']: display for display in manager['Displays']}
    model = displays['rviz_default_plugins/RobotModel']
    assert model['Description Source'] == 'Topic'
    assert model['Description Topic']['Value'] == '/robot_description'
    # robot_description is published transient local: a volatile reader misses it.
    assert model['Description Topic']['Durability Policy'] == 'Transient Local'
    assert 'rviz_default_plugins/TF' in displays
    assert 'rviz_default_plugins/Grid' in displays
    assert manager['Views']['Current']['Class'] == 'rviz_default_plugins/Orbit'
    assert {'Panels', 'Window Geometry'} <= set(config)


# --- The sample robot -----------------------------------------------------------------------

def _canonical(xml_text: str) -> str:
    return ElementTree.canonicalize(xml_text, with_comments=True, strip_text=True)


def _expand_xacro(monkeypatch, **mappings: str) -> str:
    # xacro names its input in a banner comment: expand the same relative path as the
    # regeneration command in the .xacro header does.
    monkeypatch.chdir(PACKAGE_ROOT)
    return xacro.process_file(SAMPLE_XACRO, mappings=mappings).toprettyxml(indent='  ')


def test_sample_urdf_is_the_expansion_of_the_xacro(monkeypatch):
    """sample_arm.urdf is the expansion of sample_arm.urdf.xacro with default arguments."""
    expanded = _expand_xacro(monkeypatch)
    assert _canonical(expanded) == _canonical(SAMPLE_URDF.read_text(encoding='utf-8')), (
        'urdf/sample_arm.urdf is stale: regenerate it as the header of the .xacro says')


def test_sample_xacro_arguments(monkeypatch):
    """The prefix argument prefixes every name and reference; with_sensors:=false drops sensors."""
    default = ElementTree.fromstring(_expand_xacro(monkeypatch))
    prefixed = ElementTree.fromstring(
        _expand_xacro(monkeypatch, prefix='left_', with_sensors='false'))
    assert prefixed.findall('sensor') == []
    assert len(default.findall('sensor')) == 2
    names = [
        *(link.get('name') for link in prefixed.findall('link')),
        *(joint.get('name') for joint in prefixed.findall('joint')),
        *(element.get('link') for element in prefixed.iter() if element.tag in
          ('parent', 'child')),
        *(mimic.get('joint') for mimic in prefixed.iter('mimic')),
    ]
    assert names and all(name.startswith('left_') for name in names)
    assert len(default.findall('joint')) == len(prefixed.findall('joint'))


def _joints(robot: ElementTree.Element) -> dict[str, ElementTree.Element]:
    return {joint.get('name'): joint for joint in robot.findall('joint')}


def test_sample_is_one_tree(sample):
    """The sample is a single tree rooted at base_footprint."""
    links = [link.get('name') for link in sample.findall('link')]
    assert len(links) == len(set(links))
    assert sample.get('name') == 'sample_arm'
    parent_of = {}
    for joint in sample.findall('joint'):
        parent, child = joint.find('parent').get('link'), joint.find('child').get('link')
        assert parent in links and child in links, joint.get('name')
        assert child not in parent_of, f'{child} has two parent joints'
        parent_of[child] = parent
    assert _root_link(sample) == 'base_footprint'
    for link in links:
        seen = {link}
        while link in parent_of:
            link = parent_of[link]
            assert link not in seen, 'cycle'
            seen.add(link)
        assert link == 'base_footprint'


SAMPLE_JOINTS = {
    'base_joint': 'fixed',
    'laser_joint': 'fixed',
    'torso_lift_joint': 'prismatic',
    'shoulder_pan_joint': 'continuous',
    'shoulder_lift_joint': 'revolute',
    'elbow_joint': 'revolute',
    'wrist_roll_joint': 'continuous',
    'tool0_joint': 'fixed',
    'gripper_base_joint': 'fixed',
    'left_finger_joint': 'prismatic',
    'right_finger_joint': 'prismatic',
    'right_finger_tip_joint': 'revolute',
    'camera_joint': 'fixed',
}


def test_sample_joints(sample):
    """The sample has the intended joints, several with tilted origins."""
    joints = _joints(sample)
    assert {name: joint.get('type') for name, joint in joints.items()} == SAMPLE_JOINTS
    rotated = [
        name for name, joint in joints.items()
        if any(float(angle) for angle in joint.find('origin').get('rpy', '0 0 0').split())
    ]
    assert len(rotated) >= 3, 'forward kinematics needs tilted origins to be a real test'


def test_sample_safety_controller_is_narrower_than_the_limit(sample):
    """shoulder_lift_joint's soft limits lie strictly inside its <limit>."""
    joint = _joints(sample)['shoulder_lift_joint']
    limit, safety = joint.find('limit'), joint.find('safety_controller')
    lower, upper = float(limit.get('lower')), float(limit.get('upper'))
    soft_lower = float(safety.get('soft_lower_limit'))
    soft_upper = float(safety.get('soft_upper_limit'))
    assert lower < soft_lower < soft_upper < upper
    assert safety.get('k_position') and safety.get('k_velocity')


def _mimic_range(joints: dict[str, ElementTree.Element], name: str) -> tuple[float, float]:
    """Return the range a joint takes: its <limit>, or for a mimic follower its leader's mapped."""
    joint = joints[name]
    mimic = joint.find('mimic')
    if mimic is None:
        limit = joint.find('limit')
        return float(limit.get('lower')), float(limit.get('upper'))
    lower, upper = _mimic_range(joints, mimic.get('joint'))
    multiplier = float(mimic.get('multiplier', '1'))
    offset = float(mimic.get('offset', '0'))
    ends = sorted((multiplier * lower + offset, multiplier * upper + offset))
    return ends[0], ends[1]


def test_sample_mimic_chain(sample):
    """The gripper has a two-step mimic chain whose last follower gets clamped."""
    joints = _joints(sample)
    leaders = {
        name: joint.find('mimic').get('joint')
        for name, joint in joints.items() if joint.find('mimic') is not None
    }
    assert leaders == {
        'right_finger_joint': 'left_finger_joint',
        'right_finger_tip_joint': 'right_finger_joint',
    }
    for follower in leaders:
        own = joints[follower].find('limit')
        lower, upper = float(own.get('lower')), float(own.get('upper'))
        computed_lower, computed_upper = _mimic_range(joints, follower)
        # Plausible: the computed range overlaps the joint's own limit.
        assert computed_lower < upper and lower < computed_upper, follower
    # The end of the chain computes a range wider than its own limit, so clamping shows.
    tip = joints['right_finger_tip_joint'].find('limit')
    computed = _mimic_range(joints, 'right_finger_tip_joint')
    assert computed[0] < float(tip.get('lower')) or computed[1] > float(tip.get('upper'))


def test_sample_sensors(sample):
    """The sample has a camera and a laser <sensor> on existing links."""
    links = {link.get('name') for link in sample.findall('link')}
    sensors = {sensor.get('name'): sensor for sensor in sample.findall('sensor')}
    assert set(sensors) == {'wrist_camera', 'base_laser'}
    camera, laser = sensors['wrist_camera'], sensors['base_laser']
    assert (camera.get('type'), camera.get('update_rate')) == ('camera', '30')
    assert (laser.get('type'), laser.get('update_rate')) == ('ray', '10')
    for sensor in sensors.values():
        assert sensor.find('parent').get('link') in links
        assert sensor.find('origin') is not None
    image = camera.find('camera/image')
    assert {'width', 'height', 'format'} <= set(image.attrib)
    horizontal = laser.find('ray/horizontal')
    assert {'samples', 'resolution', 'min_angle', 'max_angle'} <= set(horizontal.attrib)


def test_sample_loads_with_the_ros_urdf_parser(sample):
    """urdf_parser_py loads the sample (it only warns about <sensor>)."""
    robot = urdf.URDF.from_xml_string(SAMPLE_URDF.read_bytes())
    assert robot.get_root() == 'base_footprint'
    assert {joint.name for joint in robot.joints} == set(SAMPLE_JOINTS)
    assert not any(element.find('mesh') is not None for element in sample.iter('geometry'))


# --- Package metadata -----------------------------------------------------------------------

def _exec_depends() -> set[str]:
    package = ElementTree.parse(PACKAGE_ROOT / 'package.xml').getroot()
    return {element.text.strip() for tag in ('exec_depend', 'depend')
            for element in package.findall(tag)}


def test_the_display_tools_are_no_run_dependency():
    """rosdep installs exec_depends on every robot: none of them may be a GUI tool."""
    assert not _exec_depends() & set(DISPLAY_PACKAGES)


def test_what_the_launch_files_import_is_a_run_dependency():
    """The packages the launch files (and ros.launch_support) import come with the node."""
    imported = set().union(*(module_level_imports(path) for path in LAUNCH_FILES))
    imported -= stdlib_module_names | {PACKAGE}
    assert imported == {'launch', 'launch_ros', 'ament_index_python'}
    assert imported | {'python3-yaml'} <= _exec_depends()


def test_the_docs_say_how_to_install_the_display_tools():
    from urdf_state_publisher.ros.launch_support import install_hint

    page = (PACKAGE_ROOT / 'doc' / 'launch.md').read_text(encoding='utf-8')
    section = page.split('\n## Installing the display tools\n', 1)[1].split('\n## ', 1)[0]
    command = install_hint(DISPLAY_PACKAGES, None).split('`')[1]
    assert command in section


def test_an_xacro_argument_the_model_does_not_take_is_logged_as_a_warning(monkeypatch, caplog):
    """The node gets the expanded text: the launch file itself says what it could not see."""
    # Read at the launch file's logger itself, which propagates nothing here: once the real
    # launch.logging is imported (as launch_testing's pytest plugin does wherever it is
    # installed), every logger made after is a LaunchLogger, which does not propagate to the
    # root logger that caplog reads; without launch, it would, and caplog would see it twice.
    logger = logging.getLogger('urdf_state_publisher.launch.py')
    monkeypatch.setattr(logger, 'propagate', False)
    monkeypatch.setattr(logger, 'handlers', [*logger.handlers, caplog.handler])
    with caplog.at_level(logging.WARNING, logger=logger.name):
        launch_setup(MAIN_LAUNCH, monkeypatch, xacro_args='prefx:=left_')
    assert [record.getMessage() for record in caplog.records] == [
        'launch argument model: prefx:=left_: not an argument of sample_arm.urdf.xacro; did '
        'you mean prefix?']
