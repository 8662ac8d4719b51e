"""The package as bloom releases it: package.xml, the version and the changelog.

catkin_pkg reads package.xml and CHANGELOG.rst as bloom and `catkin_prepare_release` do;
`catkin_prepare_release` bumps package.xml and setup.py together, and the installed package
reports that version. Whether every key resolves with rosdep needs rosdistro's data: that is the
release check, `make release-check` (tools/release_check.py, test/test_release_check.py).
"""

from __future__ import annotations

import ast

from catkin_pkg.changelog import get_changelog_from_path
from catkin_pkg.package import parse_package
from conftest import REPO
import pytest

import urdf_state_publisher

pytestmark = pytest.mark.ros_free


def manifest():
    warnings: list[str] = []
    package = parse_package(str(REPO / 'package.xml'), warnings=warnings)
    return package, warnings


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
