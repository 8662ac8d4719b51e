"""Sphinx configuration of doc/, the package's documentation as docs.ros.org builds it.

rosdoc2 finds doc/ (a standard location), copies it next to its own generated pages (the
package.xml summary, the README, the Python API from sphinx-apidoc), and runs this file inside
its own conf.py, which sets the project, the version and the theme. So this file holds only
what the pages need, with extensions rosdoc2 allows: autodoc for the API reference from the
docstrings, and myst_parser (rosdoc2's Markdown support) for the pages, which are Markdown.

Built alone, warnings as errors, by test/test_docs.py:
    python -m sphinx -W --keep-going -b html doc /tmp/urdf_state_publisher_doc
"""

project = 'urdf_state_publisher'
extensions = ['sphinx.ext.autodoc', 'myst_parser']
# Links to a heading of another page, `engine.parameters.md#topics`, as GitHub renders them too.
myst_heading_anchors = 3
autodoc_member_order = 'bysource'
exclude_patterns = ['_build']
