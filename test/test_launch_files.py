"""Checks of the launch files, parameter file, RViz config and bundled sample robot.

Nothing here imports launch or launch_ros (not installable here): the launch files are read as
Python syntax trees, or run with stand-ins for launch and launch_ros that record what the
launch files construct (`run_launch_file`).
"""

import ast
from collections.abc import Iterable, Iterator
import dataclasses
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

PARAMETERS_PY = PACKAGE_ROOT / PACKAGE / 'parameters.py'

# The launch files may import this package's parameters module (it imports neither rclpy nor
# launch at load: test_parameters_module_loads_without_ros checks that).
ALLOWED_LAUNCH_IMPORTS = frozenset({'launch', 'launch_ros', PACKAGE}) | stdlib_module_names


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


def launch_nodes(path: Path) -> list[tuple[str | None, str | None]]:
    """Return (package, executable) of every Node(...) in a launch file; None where not literal."""
    tree = _parse(path)
    constants = _module_strings(tree)
    return [
        (_string(_keyword(call, 'package'), constants),
         _string(_keyword(call, 'executable'), constants))
        for call in _calls(tree, 'Node')
    ]


def launch_parameter_names(path: Path, package: str = PACKAGE) -> set[str]:
    """Return the names of the parameters a launch file gives to the nodes of `package`.

    Every dict literal inside a `parameters=` argument counts, and the package's
    LAUNCH_OVERRIDES where it is named there; a key that is not a string
    literal or constant raises ValueError, since it could not be checked.
    """
    tree = _parse(path)
    constants = _module_strings(tree)
    names = set()
    for call in _calls(tree, 'Node'):
        parameters = _keyword(call, 'parameters')
        if _string(_keyword(call, 'package'), constants) != package or parameters is None:
            continue
        for node in ast.walk(parameters):
            if isinstance(node, ast.Name) and node.id == 'LAUNCH_OVERRIDES':
                from urdf_state_publisher.parameters import LAUNCH_OVERRIDES

                names.update(LAUNCH_OVERRIDES)
            if not isinstance(node, ast.Dict):
                continue
            for key in node.keys:
                name = _string(key, constants)
                if name is None:
                    raise ValueError(
                        f'{path.name}:{node.lineno}: a parameter name that is not a literal')
                names.add(name)
    return names


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
    """A launch or launch_ros module whose every name makes a recorder of its calls."""

    def __init__(self, name: str, made: list[Made]):
        super().__init__(name)
        self._made = made

    def __getattr__(self, kind: str):
        if kind.startswith('__'):
            raise AttributeError(kind)
        made = self._made

        def make(*args, **kwargs) -> Made:
            thing = Made(kind, *args, **kwargs)
            made.append(thing)
            return thing
        return make


def run_launch_file(path: Path, monkeypatch) -> tuple[dict, list[Made]]:
    """Run a launch file with stand-ins for launch and launch_ros; its globals and what it made.

    generate_launch_description() has run; functions run later by launch (OpaqueFunction) have
    not.
    """
    made: list[Made] = []
    for name in ('launch', 'launch.actions', 'launch.conditions',
                 'launch.launch_description_sources', 'launch.substitutions', 'launch_ros',
                 'launch_ros.actions', 'launch_ros.parameter_descriptions',
                 'launch_ros.substitutions'):
        monkeypatch.setitem(sys.modules, name, _StandIn(name, made))
    namespace = runpy.run_path(str(path))
    namespace['generate_launch_description']()
    return namespace, made


def declared_launch_arguments(path: Path, monkeypatch) -> dict[str, Made]:
    """Return each argument a launch file declares, by name, as its DeclareLaunchArgument."""
    namespace, _ = run_launch_file(path, monkeypatch)
    return {argument.name: argument for argument in namespace['declare_arguments']()}


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


def own_share_paths(path: Path, package: str = PACKAGE) -> list[tuple[str, ...]]:
    """Return the parts after FindPackageShare(package) of every PathJoinSubstitution."""
    tree = _parse(path)
    constants = _module_strings(tree)
    found = []
    for call in _calls(tree, 'PathJoinSubstitution'):
        parts = _argument(call, 0, 'substitutions')
        if not isinstance(parts, (ast.List, ast.Tuple)) or not parts.elts:
            continue
        head, *rest = parts.elts
        if not (isinstance(head, ast.Call) and _callee(head) == 'FindPackageShare'
                and _string(_argument(head, 0, 'package'), constants) == package):
            continue
        strings = tuple(_string(part, constants) for part in rest)
        assert None not in strings, f'{path.name}:{call.lineno}: a path part is not a literal'
        found.append(strings)
    return found


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

    from urdf_state_publisher.node import UrdfStatePublisher

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


def test_parameters_module_loads_without_ros():
    """The launch files' import of the parameters module loads neither rclpy nor launch."""
    import subprocess

    loaded = subprocess.run(
        [sys.executable, '-c', 'import sys; import urdf_state_publisher.parameters; '
         'print(sorted({m.split(".")[0] for m in sys.modules}))'],
        capture_output=True, text=True, check=True, cwd=PACKAGE_ROOT).stdout
    for heavy in ('rclpy', 'launch', 'launch_ros', 'xacro', 'lxml'):
        assert f"'{heavy}'" not in loaded, f'importing parameters loads {heavy}'


def test_import_check_reports_a_third_party_import(tmp_path):
    """The import check sees third-party and relative imports, not those in functions."""
    path = tmp_path / 'bad.launch.py'
    path.write_text(
        'import os\nimport xacro\nfrom launch import LaunchDescription\n'
        'from . import helpers\n\n\ndef later():\n    import yaml\n')
    assert module_level_imports(path) - ALLOWED_LAUNCH_IMPORTS == {'xacro', '.'}


def test_our_nodes_run_console_scripts_of_setup_py():
    """Every executable of this package that a launch file starts is a console script."""
    scripts = console_scripts(SETUP_PY)
    ours = [
        (path.name, executable)
        for path in LAUNCH_FILES
        for package, executable in launch_nodes(path)
        if package == PACKAGE
    ]
    assert ours, 'no launch file starts a node of this package'
    missing = [(name, executable) for name, executable in ours if executable not in scripts]
    assert not missing, f'executables not in setup.py console_scripts: {missing}'


@pytest.mark.parametrize('path', LAUNCH_FILES, ids=lambda path: path.name)
def test_every_node_names_package_and_executable(path):
    """Every Node names its package and executable as literals."""
    assert launch_nodes(path), f'{path.name} starts no Node'
    for package, executable in launch_nodes(path):
        assert package and executable, f'{path.name}: a Node without literal package/executable'


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


@pytest.mark.parametrize('path', LAUNCH_FILES, ids=lambda path: path.name)
def test_launch_configurations_are_declared(path, monkeypatch):
    """Every LaunchConfiguration a launch file reads, literal or made, is declared in it."""
    _, made = run_launch_file(path, monkeypatch)
    read = launch_configurations(path) | {
        thing.name for thing in made if thing.kind == 'LaunchConfiguration'}
    undeclared = read - set(declared_launch_arguments(path, monkeypatch))
    assert not undeclared, f'{path.name} reads undeclared arguments {sorted(undeclared)}'


def test_main_launch_file_arguments(monkeypatch):
    """urdf_state_publisher.launch.py declares its arguments with their defaults."""
    declared = declared_launch_arguments(MAIN_LAUNCH, monkeypatch)
    assert list(declared) == [
        'model', 'xacro_args', 'namespace', 'publish_frequency', 'frame_prefix', 'use_sim_time',
        'params_file']
    literal_defaults = {
        name: argument.kwargs['default_value'] for name, argument in declared.items()
        if isinstance(argument.kwargs['default_value'], str)}
    assert literal_defaults == {
        'xacro_args': '', 'namespace': '', 'frame_prefix': '', 'use_sim_time': '',
        'publish_frequency': '', 'params_file': ''}
    model = declared['model'].kwargs['default_value']
    assert model.kind == 'PathJoinSubstitution'
    share, *path = model.args[0]
    assert (share.kind, share.args, path) == (
        'FindPackageShare', (PACKAGE,), ['urdf', 'sample_arm.urdf.xacro'])
    assert (PACKAGE_ROOT / 'urdf' / 'sample_arm.urdf.xacro').exists()


@pytest.mark.parametrize('path', LAUNCH_FILES, ids=lambda path: path.name)
def test_parameter_arguments_name_the_defaults_of_parameters(path, monkeypatch):
    """The description of a parameter's launch argument names the default in PARAMETERS.

    Checked with a changed default too: the launch files take it from the table, so the
    change alone changes what they say.
    """
    from urdf_state_publisher import parameters

    expected = {'publish_frequency': 'else 20.0)', 'frame_prefix': 'else empty)',
                'use_sim_time': 'else false)'}
    declared = declared_launch_arguments(path, monkeypatch)
    for name, ending in expected.items():
        assert declared[name].kwargs['description'].endswith(ending), (path.name, name)

    changed = tuple(dataclasses.replace(spec, default=30.0) if spec.name == 'publish_frequency'
                    else spec for spec in parameters.DOCUMENTED)
    monkeypatch.setattr(parameters, 'DOCUMENTED', changed)
    description = declared_launch_arguments(path, monkeypatch)['publish_frequency'].kwargs[
        'description']
    assert description.endswith("(default: the params_file's, else 30.0)")


PARAMETER_ARGUMENTS = ('publish_frequency', 'frame_prefix', 'use_sim_time')


class _Text:
    """Stands in for launch's TextSubstitution."""

    def __init__(self, text: str):
        self.text = text


def _parameter_value(value, value_type):
    """Stands in for launch_ros' ParameterValue, with its rule for plain values.

    launch_ros converts text to `value_type` only when it comes as a substitution; a plain
    value must already be of that type (TypeError "value='50.0' is not an instance of
    <class 'float'>" otherwise, which stops the launch).
    """
    if isinstance(value, _Text):
        return value.text, value_type
    if not isinstance(value, value_type):
        raise TypeError(f'value={value!r} is not an instance of {value_type}')
    return value, value_type


def _launch_file_function(path: Path, name: str):
    """Compile one function of a launch file alone, with stand-ins for what it uses of launch.

    launch is not installed here.
    """
    (function,) = [node for node in _parse(path).body
                   if isinstance(node, ast.FunctionDef) and node.name == name]
    namespace = {'LaunchContext': object, 'ParameterValue': _parameter_value,
                 'TextSubstitution': _Text}
    exec(compile(ast.Module(body=[function], type_ignores=[]), str(path), 'exec'), namespace)
    return namespace[name]


def test_parameter_arguments_go_last_and_only_when_given():
    """A params file's value stands unless the launch argument of that name is given."""
    (node,) = list(_calls(_parse(MAIN_LAUNCH), 'Node'))
    first, *_, last = _keyword(node, 'parameters').elts
    assert isinstance(first, ast.Starred) and _callee(first.value) == '_params_files'
    assert isinstance(last, ast.Call) and _callee(last) == '_given'
    assert ast.unparse(last.args[1]) == 'LAUNCH_OVERRIDES'
    from urdf_state_publisher.parameters import LAUNCH_OVERRIDES
    assert LAUNCH_OVERRIDES == {'publish_frequency': float, 'frame_prefix': str,
                                'use_sim_time': bool}

    given = _launch_file_function(MAIN_LAUNCH, '_given')
    types = {'frame_prefix': str, 'use_sim_time': bool, 'publish_frequency': float}
    context = SimpleNamespace(launch_configurations=dict.fromkeys(PARAMETER_ARGUMENTS, ''))
    assert given(context, types) == {}
    context.launch_configurations.update(publish_frequency='100.0', frame_prefix=' left/ ')
    assert given(context, types) == {'publish_frequency': ('100.0', float),
                                     'frame_prefix': ('left/', str)}


def test_display_passes_use_sim_time_to_its_viewers_only_when_given():
    sim_time = _launch_file_function(DISPLAY_LAUNCH, '_sim_time')
    assert sim_time(SimpleNamespace(launch_configurations={'use_sim_time': ''})) == []
    assert sim_time(SimpleNamespace(launch_configurations={'use_sim_time': 'true'})) == [
        {'use_sim_time': ('true', bool)}]


def test_display_declares_and_forwards_every_argument_of_the_main_launch_file(monkeypatch):
    """display.launch.py declares, with the same defaults, and forwards every argument."""
    main = declared_launch_arguments(MAIN_LAUNCH, monkeypatch)
    display = declared_launch_arguments(DISPLAY_LAUNCH, monkeypatch)
    assert list(display) == [*main, 'gui', 'rviz_config']
    for name, argument in main.items():
        assert repr(argument.kwargs['default_value']) == repr(
            display[name].kwargs['default_value']), f'default of {name!r} differs'
    assert display['gui'].kwargs['default_value'] == 'false'

    _, made = run_launch_file(DISPLAY_LAUNCH, monkeypatch)
    (include,) = [thing for thing in made if thing.kind == 'IncludeLaunchDescription']
    pairs = {}
    for name, value in include.kwargs['launch_arguments']:
        assert value.kind == 'LaunchConfiguration'
        pairs[name] = value.name
    assert pairs == {name: name for name in main}


def test_display_starts_rviz_and_an_optional_slider_gui():
    """RViz always starts; joint_state_publisher_gui only with gui:=true."""
    nodes = launch_nodes(DISPLAY_LAUNCH)
    assert ('rviz2', 'rviz2') in nodes
    assert ('joint_state_publisher_gui', 'joint_state_publisher_gui') in nodes
    tree = _parse(DISPLAY_LAUNCH)
    for call in _calls(tree, 'Node'):
        condition = _keyword(call, 'condition')
        if _string(_keyword(call, 'package'), {}) == 'joint_state_publisher_gui':
            assert condition is not None and 'gui' in ast.unparse(condition)
        else:
            assert condition is None


# What each file finds with FindPackageShare(PACKAGE): the default model, the main launch file
# that display includes, and RViz's config.
SHARE_PATHS = {
    'urdf_state_publisher.launch.py': set(),
    'display.launch.py': {('launch', 'urdf_state_publisher.launch.py'),
                          ('config', 'display.rviz')},
    'parameters.py': {('urdf', 'sample_arm.urdf.xacro')},
}


@pytest.mark.parametrize('path', [*LAUNCH_FILES, PARAMETERS_PY], ids=lambda path: path.name)
def test_share_paths_exist_in_the_package(path):
    """Every file a launch file finds in this package's share exists in the source."""
    found = own_share_paths(path)
    assert set(found) == SHARE_PATHS[path.name]
    for parts in found:
        assert PACKAGE_ROOT.joinpath(*parts).exists(), f'{path.name}: {"/".join(parts)} missing'


def test_setup_py_installs_the_shared_folders():
    """setup.py installs the folders the launch files look up in share/."""
    folders = {parts[0] for path in [*LAUNCH_FILES, PARAMETERS_PY]
               for parts in own_share_paths(path)}
    assert folders == {'launch', 'config', 'urdf'}
    strings = [
        node.value for node in ast.walk(_parse(SETUP_PY))
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    ]
    for folder in folders:
        assert any(folder in Path(text).parts for text in strings), (
            f'setup.py does not seem to install {folder}/ into share/{PACKAGE}')


# --- Parameter names ------------------------------------------------------------------------

def test_launch_files_give_our_node_parameters():
    """The main launch file sets the four parameters it has arguments for."""
    assert launch_parameter_names(MAIN_LAUNCH) == {
        'robot_description', 'frame_prefix', 'use_sim_time', 'publish_frequency'}


def test_launch_parameters_are_in_the_params_file():
    """The params file lists every parameter, so it covers what the launch files set."""
    listed = yaml_parameter_names(PARAMS_FILE)
    for path in LAUNCH_FILES:
        assert undeclared_parameters(launch_parameter_names(path), listed) == [], path.name


def test_params_file_comments_the_empty_array_example():
    """xacro_args is a commented example: an empty YAML list has no type."""
    text = PARAMS_FILE.read_text(encoding='utf-8')
    assert '# xacro_args:' in text
    assert 'xacro_args' not in yaml_parameter_names(PARAMS_FILE)


@pytest.mark.parametrize('path', LAUNCH_FILES, ids=lambda path: path.name)
def test_launch_parameters_are_declared_by_the_node(path, declared_parameters):
    """The launch files give the node only parameters it declares."""
    assert undeclared_parameters(launch_parameter_names(path), declared_parameters) == []


def test_params_file_keys_are_declared_by_the_node(declared_parameters):
    """The params file sets only parameters the node declares."""
    assert undeclared_parameters(yaml_parameter_names(PARAMS_FILE), declared_parameters) == []


def test_params_file_sets_every_declared_parameter(declared_parameters,
                                                    rclpy_standard_parameters):
    """The params file lists every parameter the node declares beyond rclpy's own."""
    listed = yaml_parameter_names(PARAMS_FILE) | {'xacro_args'}
    # The QoS-override parameters of the subscriptions are rclpy's standard read-only ones,
    # documented in the README rather than listed.
    ours = {n for n in declared_parameters - rclpy_standard_parameters
            if not n.startswith('qos_overrides.')}
    assert ours, 'the node declares no parameters of its own?'
    assert sorted(ours - listed) == []


def test_checker_reports_a_misspelt_parameter(tmp_path):
    """A misspelt parameter name is reported, from a list, a launch file or a YAML file."""
    declared = ['robot_description', 'publish_frequency', 'frame_prefix', 'use_sim_time']
    assert undeclared_parameters(['publish_frequncy', 'frame_prefix'], declared) == [
        'publish_frequncy']

    launch_file = tmp_path / 'typo.launch.py'
    launch_file.write_text(
        'from launch_ros.actions import Node\n'
        f"Node(package='{PACKAGE}', executable='{PACKAGE}',\n"
        "     parameters=['extra.yaml', {'publish_frequncy': 50.0, 'frame_prefix': 'a/'}])\n"
        "Node(package='other', executable='other', parameters=[{'not_ours': 1}])\n")
    assert undeclared_parameters(launch_parameter_names(launch_file), declared) == [
        'publish_frequncy']

    params_file = tmp_path / 'typo.yaml'
    params_file.write_text(
        '/**:\n  ros__parameters:\n    publish_frequncy: 50.0\n'
        '    qos_overrides:\n      depth: 3\n')
    assert undeclared_parameters(yaml_parameter_names(params_file), declared) == [
        'publish_frequncy', 'qos_overrides.depth']


def test_parameter_names_that_are_not_literals_are_refused(tmp_path):
    """A parameter name that cannot be read statically fails loudly."""
    launch_file = tmp_path / 'computed.launch.py'
    launch_file.write_text(
        f"Node(package='{PACKAGE}', executable='x', parameters=[{{name: 1}}])\n")
    with pytest.raises(ValueError, match='not a literal'):
        launch_parameter_names(launch_file)


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
