"""The release check (tools/release_check.py) against snapshots of rosdistro written here.

Each snapshot has the layout of the ros/rosdistro repository and maps the keys of this
package.xml as the test chooses: ROS packages through each distro's distribution file, the
others through rosdep/base.yaml. rosdep itself resolves them, offline.
"""

from __future__ import annotations

from pathlib import Path
import subprocess
import sys

from catkin_pkg.package import parse_package
from conftest import REPO
import pytest
import yaml

pytestmark = pytest.mark.ros_free

PLATFORMS = {'jazzy': 'noble', 'kilted': 'noble', 'lyrical': 'resolute'}


def package_keys() -> list[str]:
    package = parse_package(str(REPO / 'package.xml'))
    return sorted({d.name for group in (
        package.buildtool_depends, package.build_depends, package.build_export_depends,
        package.exec_depends, package.test_depends, package.doc_depends) for d in group})


def write_snapshot(root: Path, base: dict[str, dict], ros_packages: list[str]) -> Path:
    """A rosdistro snapshot: `base` as rosdep/base.yaml, `ros_packages` released on each distro."""
    (root / 'rosdep').mkdir(parents=True)
    (root / 'rosdep' / 'base.yaml').write_text(yaml.safe_dump(base))
    (root / 'rosdep' / 'python.yaml').write_text('{}\n')
    distributions = {}
    for distro, codename in PLATFORMS.items():
        (root / distro).mkdir()
        (root / distro / 'distribution.yaml').write_text(yaml.safe_dump({
            'type': 'distribution', 'version': 2,
            'release_platforms': {'ubuntu': [codename]},
            'repositories': {name: {'release': {
                'packages': [name], 'url': f'https://example.invalid/{name}-release.git',
                'tags': {'release': 'release/' + distro + '/{package}/{version}'},
                'version': '1.0.0-1'}} for name in ros_packages}}))
        distributions[distro] = {'distribution': [f'{distro}/distribution.yaml'],
                                 'distribution_status': 'active',
                                 'distribution_type': 'ros2', 'python_version': 3}
    (root / 'index-v4.yaml').write_text(yaml.safe_dump(
        {'type': 'index', 'version': 4, 'distributions': distributions}))
    return root


def released_snapshot(root: Path, *, pip: str = '', missing: str = '') -> Path:
    """Every key of package.xml resolvable to apt, but `pip` to pip and `missing` to nothing."""
    keys = [key for key in package_keys() if key != missing]
    others = [key for key in keys if key.startswith('python3-')]
    base = {key: {'ubuntu': {'pip': {'packages': [key.removeprefix('python3-')]}} if key == pip
                  else [key]} for key in others}
    return write_snapshot(root, base, [key for key in keys if key not in others])


def release_check(snapshot: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(REPO / 'tools' / 'release_check.py'), '--rosdistro', str(snapshot)],
        capture_output=True, text=True, timeout=300)


def test_every_key_resolving_to_apt_passes(tmp_path):
    result = release_check(released_snapshot(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert 'every key resolves to apt on jazzy, kilted, lyrical' in result.stdout
    # As rosdep resolved them: ROS packages to each distro's package, the others as they are.
    assert 'rclpy -> apt ros-lyrical-rclpy' in result.stdout
    assert 'python3-numpy -> apt python3-numpy' in result.stdout


def test_a_key_that_resolves_to_pip_fails_naming_it(tmp_path):
    result = release_check(released_snapshot(tmp_path, pip='python3-psutil'))
    assert result.returncode == 1
    assert ('release_check: jazzy (ubuntu:noble): python3-psutil resolves with pip (psutil), '
            'which the build farm cannot install') in result.stderr
    assert 'every key resolves' not in result.stdout


def test_a_key_that_resolves_to_nothing_fails_naming_it(tmp_path):
    result = release_check(released_snapshot(tmp_path, missing='xacro'))
    assert result.returncode == 1
    for distro, codename in PLATFORMS.items():
        assert f'release_check: {distro} (ubuntu:{codename}): xacro does not resolve' in (
            result.stderr)


def test_a_folder_that_is_no_snapshot_is_refused_in_one_line(tmp_path):
    result = release_check(tmp_path)
    assert result.returncode == 2
    assert f'--rosdistro {tmp_path}: no index-v4.yaml there' in result.stderr
