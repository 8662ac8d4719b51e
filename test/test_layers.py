"""The package's layers: each folder one layer, imports only downward, no ROS below the shells.

Read from the source (AST): every import of every module, also the ones inside functions and
under TYPE_CHECKING, so a lazy import counts as much as one at the top.
"""

import ast
from pathlib import Path

import pytest

pytestmark = pytest.mark.ros_free

PACKAGE = 'urdf_state_publisher'
PACKAGE_DIR = Path(__file__).resolve().parent.parent / PACKAGE
# The floors, bottom up. A module imports its own folder and the floors below; folders on one
# floor (the ROS shell and the recorded-data shell) do not import each other.
FLOORS = [
    ('base',),  # the root's base modules below, which every layer may import
    ('description',),  # text to a validated description
    ('kinematics',),  # the kinematic model
    ('wire',),  # wire formats and the topics' QoS facts; below the engine, which writes them
    ('engine',),  # joint values in, what to publish out, with health
    ('ros', 'recorded'),  # the shells: the node and container; the bag command
    ('view',),  # the robot in a browser (it may read bags and run ROS links)
    ('tools',),  # the demo and inspect (the demo runs the node, and says where the view is)
]
BASE = {'cli', 'errors', 'exit_status', 'geometry', 'quoting', 'stop_signals', 'words',
        'xacro_arguments'}
# The package's face (the lazy public API) and `python -m`: they import the layers, no layer
# imports them.
FACE = {'__init__', '__main__'}
SHELLS = {'ros', 'recorded', 'tools', 'view'}
ROS_PACKAGES = {'rclpy', 'launch', 'launch_ros', 'launch_testing', 'rosidl_runtime_py',
                'ament_index_python', 'rcl_interfaces', 'tf2_ros', 'rosbag2_py'}
FLOOR_OF = {layer: number for number, layers in enumerate(FLOORS) for layer in layers}


def is_ros(module: str) -> bool:
    top = module.split('.')[0]
    return top in ROS_PACKAGES or top.endswith(('_msgs', '_srvs', '_interfaces'))


def layer_of(module: str) -> str:
    """`urdf_state_publisher.engine.stream` -> engine; a root module -> base or face."""
    parts = module.split('.')[1:]
    if not parts:
        return 'face'
    if (PACKAGE_DIR / parts[0]).is_dir():
        return parts[0]
    return 'face' if parts[0] in FACE else 'base' if parts[0] in BASE else f'root:{parts[0]}'


def modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE_DIR.rglob('*.py')):
        parts = path.relative_to(PACKAGE_DIR.parent).with_suffix('').parts
        if parts[-1] == '__init__' and len(parts) > 1:
            parts = parts[:-1]
        found['.'.join(parts)] = path
    return found


def imports(source: str, module: str, is_package: bool) -> list[tuple[int, str]]:
    """(line, module imported) for every import in `source`, relative ones made absolute."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split('.')
                base = base[:len(base) - node.level + (1 if is_package else 0)]
                target = '.'.join(base + ([node.module] if node.module else []))
            else:
                target = node.module
            found.append((node.lineno, target))
            # `from package import module` imports the module.
            found += [(node.lineno, f'{target}.{alias.name}') for alias in node.names
                      if target.startswith(PACKAGE) and _is_module(f'{target}.{alias.name}')]
    return found


def _is_module(name: str) -> bool:
    path = PACKAGE_DIR.parent.joinpath(*name.split('.'))
    return path.with_suffix('.py').is_file() or (path / '__init__.py').is_file()


def package_imports():
    """(module, its layer, line, imported module) for every import of the package's modules."""
    for module, path in modules().items():
        for line, target in imports(path.read_text(), module, path.name == '__init__.py'):
            yield module, layer_of(module), f'{path.relative_to(PACKAGE_DIR.parent)}:{line}', \
                target


def test_the_scan_sees_lazy_relative_and_from_imports():
    source = ('from __future__ import annotations\n'
              'def f():\n    import rclpy.node\n'
              'from . import resolved\n'
              'from ..wire.tf import x\n')
    found = imports(source, f'{PACKAGE}.kinematics.model', is_package=False)
    assert (3, 'rclpy.node') in found
    assert (4, f'{PACKAGE}.kinematics.resolved') in found
    assert (5, f'{PACKAGE}.wire.tf') in found


def test_every_module_is_in_a_layer():
    """Each folder is a layer of FLOORS; a module at the root is the face or a base module."""
    folders = {path.name for path in PACKAGE_DIR.iterdir()
               if path.is_dir() and (path / '__init__.py').is_file()}
    assert folders == set(FLOOR_OF) - {'base'}
    unplaced = sorted(module for module in modules()
                      if layer_of(module) not in FLOOR_OF and layer_of(module) != 'face')
    assert unplaced == [], 'put it in a folder, or name it in BASE'
    for layer in FLOOR_OF:  # no empty layer: the rules below check something in each
        assert any(layer_of(module) == layer for module in modules()), layer


def test_imports_run_only_downward():
    upward = []
    for _, layer, where, target in package_imports():
        if layer == 'face' or not target.startswith(PACKAGE):
            continue
        imported = layer_of(target)
        if imported == layer:
            continue
        if imported == 'face' or FLOOR_OF[imported] >= FLOOR_OF[layer]:
            upward.append(f'{where}: {layer}/ imports {target} ({imported})')
    assert upward == []


def test_nothing_below_the_shells_imports_ros():
    below = {layer for layer, floor in FLOOR_OF.items() if floor < min(
        FLOOR_OF[shell] for shell in SHELLS)}
    ros = [f'{where}: {target}' for _, layer, where, target in package_imports()
           if layer in below | {'face'} and is_ros(target)]
    assert ros == []
