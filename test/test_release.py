"""The package as bloom releases it: package.xml, the version and the changelog.

The build farm installs what package.xml's keys resolve to with rosdep, on each distro's
platform, and nothing else; a key that resolves to pip cannot be released. The keys are
resolved here against the rosdistro snapshot beside the CI clone (`../shared/rosdistro`, its
README), with no network. catkin_pkg reads package.xml and CHANGELOG.rst as bloom and
`catkin_prepare_release` do; `catkin_prepare_release` bumps package.xml and setup.py together,
and the installed package reports that version.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path
import subprocess
import sys

from catkin_pkg.changelog import get_changelog_from_path
from catkin_pkg.package import parse_package
from conftest import REPO
import pytest

import urdf_state_publisher

pytestmark = pytest.mark.ros_free

ROSDISTRO = REPO.parent / 'shared' / 'rosdistro'
# The distros this package is released for, each with the platform the farm builds it on.
PLATFORMS = {'jazzy': 'ubuntu:noble', 'kilted': 'ubuntu:noble', 'lyrical': 'ubuntu:resolute'}


def manifest():
    warnings: list[str] = []
    package = parse_package(str(REPO / 'package.xml'), warnings=warnings)
    return package, warnings


def keys() -> list[str]:
    package, _ = manifest()
    return sorted({d.name for group in (
        package.buildtool_depends, package.build_depends, package.build_export_depends,
        package.exec_depends, package.test_depends, package.doc_depends) for d in group})


def test_catkin_pkg_reads_package_xml_without_a_warning():
    package, warnings = manifest()
    assert warnings == []
    package.validate()  # raises InvalidPackage with every problem
    assert package.package_format == 3
    assert package.name == 'urdf_state_publisher'


def test_the_licence_is_the_spdx_id_of_the_licence_file():
    package, _ = manifest()
    head = (REPO / 'LICENSE').read_text().split()[:3]
    assert head == ['Apache', 'License', 'Version'] and '2.0,' in (REPO / 'LICENSE').read_text()
    assert [str(licence) for licence in package.licenses] == ['Apache-2.0']


def setup_py_version() -> str:
    tree = ast.parse((REPO / 'setup.py').read_text())
    [version] = [keyword.value.value for node in ast.walk(tree) if isinstance(node, ast.Call)
                 for keyword in node.keywords if keyword.arg == 'version']
    return version


def test_one_version_in_package_xml_setup_py_the_module_and_the_changelog():
    package, _ = manifest()
    changelog = get_changelog_from_path(str(REPO / 'CHANGELOG.rst'))
    newest = next(changelog.foreach_version())[0]  # catkin's changelog: newest first
    assert {'package.xml': package.version, 'setup.py': setup_py_version(),
            'urdf_state_publisher.__version__': urdf_state_publisher.__version__,
            'CHANGELOG.rst': newest} == dict.fromkeys(
        ('package.xml', 'setup.py', 'urdf_state_publisher.__version__', 'CHANGELOG.rst'),
        package.version)


@pytest.fixture(scope='module')
def rosdep_env(tmp_path_factory) -> dict[str, str]:
    """An environment in which rosdep reads the snapshot only, its cache updated once."""
    assert (ROSDISTRO / 'index-v4.yaml').is_file(), (
        f'no rosdistro snapshot at {ROSDISTRO} (beside the clone, as in CI)')
    home = tmp_path_factory.mktemp('rosdep')
    sources = home / 'sources.list.d'
    sources.mkdir()
    (sources / '20-default.list').write_text(''.join(
        f'yaml file://{ROSDISTRO}/rosdep/{name}.yaml\n' for name in ('base', 'python')))
    env = {k: v for k, v in os.environ.items() if not k.startswith('ROS_')}
    env.update(ROSDEP_SOURCE_PATH=str(sources), ROS_HOME=str(home / 'ros'),
               ROSDISTRO_INDEX_URL=f'file://{ROSDISTRO}/index-v4.yaml')
    rosdep('update', env=env)
    return env


def rosdep(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    executable = Path(sys.executable).with_name('rosdep')
    assert executable.is_file(), f'rosdep is not installed next to {sys.executable}'
    return subprocess.run([str(executable), *args], env=env, capture_output=True, text=True,
                          timeout=300)


def resolved(output: str) -> dict[str, tuple[str, ...]]:
    """`rosdep resolve`'s output as key -> (installer, package, ...)."""
    table: dict[str, list[str]] = {}
    key = None
    for line in output.splitlines():
        if line.startswith('#ROSDEP['):
            key = line[len('#ROSDEP['):-1]
            table[key] = []
        elif key is not None:
            table[key].append(line.removeprefix('#'))
    return {key: tuple(value) for key, value in table.items()}


@pytest.mark.parametrize('distro', PLATFORMS)
def test_every_rosdep_key_resolves_on_each_distro(rosdep_env, distro):
    result = rosdep('resolve', *keys(), '--rosdistro', distro, '--os', PLATFORMS[distro],
                    env=rosdep_env)
    table = resolved(result.stdout)
    print(f'rosdep resolve <{len(keys())} keys> --rosdistro {distro} --os {PLATFORMS[distro]}: '
          + ', '.join(f'{key} -> {" ".join(value) or "?"}' for key, value in table.items()))
    # Every key, with apt: a key that resolves to pip (`python3-yourdfpy-pip`) or to
    # nothing cannot be released.
    assert {key: value[0] if value else 'unresolved' for key, value in table.items()
            if value[:1] != ('apt',)} == {}, result.stderr
    assert sorted(table) == keys()
    assert result.returncode == 0, result.stderr
