"""doc/ builds as docs.ros.org builds it, warnings as errors, and documents the public API.

docs.ros.org runs rosdoc2, which runs Sphinx over doc/ with doc/conf.py executed inside its own
configuration; it keeps only the extensions on its list and drops the others, so a page that
needs another would break there and not here. This builds doc/ alone with Sphinx, `-W`: a
broken link, a bad directive or a docstring autodoc cannot read fails the test.
"""

from __future__ import annotations

import ast
import subprocess
import sys

from conftest import REPO
import pytest

import urdf_state_publisher

pytestmark = pytest.mark.ros_free

DOC = REPO / 'doc'
# The extensions rosdoc2 keeps from a package's conf.py (rosdoc2, sphinx_builder.py,
# `allowed_extensions`); it adds autodoc itself, and myst_parser for Markdown pages.
ROSDOC2_ALLOWED = {
    'sphinx.ext.autodoc', 'sphinx.ext.autosectionlabel', 'sphinx.ext.autosummary',
    'sphinx.ext.coverage', 'sphinx.ext.doctest', 'sphinx.ext.duration', 'sphinx.ext.extlinks',
    'sphinx.ext.githubpages', 'sphinx.ext.graphviz', 'sphinx.ext.ifconfig',
    'sphinx.ext.imgconverter', 'sphinx.ext.inheritance_diagram', 'sphinx.ext.intersphinx',
    'sphinx.ext.linkcode', 'sphinx.ext.napoleon', 'sphinx.ext.todo', 'sphinx.ext.viewcode',
    'sphinx.ext.imgmath', 'sphinx.ext.mathjax', 'myst_parser', 'sphinx_rtd_theme',
}


@pytest.fixture(scope='module')
def html(tmp_path_factory):
    out = tmp_path_factory.mktemp('doc_html')
    result = subprocess.run(
        [sys.executable, '-m', 'sphinx', '-W', '--keep-going', '-q', '-b', 'html', str(DOC),
         str(out), '-d', str(out / '.doctrees')],
        capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    return out


def test_doc_builds_with_sphinx_without_a_warning(html):
    assert (html / 'index.html').is_file()


def test_the_api_page_documents_every_public_name(html):
    page = (html / 'api.html').read_text(encoding='utf-8')
    missing = [name for name in urdf_state_publisher.__all__
               if f'<span class="pre">{name}</span>' not in page]
    assert missing == []


def test_conf_py_uses_only_extensions_rosdoc2_keeps():
    tree = ast.parse((DOC / 'conf.py').read_text())
    [extensions] = [ast.literal_eval(node.value) for node in tree.body
                    if isinstance(node, ast.Assign)
                    and [target.id for target in node.targets] == ['extensions']]
    assert set(extensions) <= ROSDOC2_ALLOWED


def test_the_table_of_contents_is_an_index_rst_as_rosdoc2_links_it():
    # rosdoc2 links doc/index.rst from the package's front page; with no index.rst it globs
    # every page instead, in the order of their file names.
    assert (DOC / 'index.rst').is_file()
