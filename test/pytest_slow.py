"""Pytest plugin: the `--run-slow` option; tests marked `slow` are skipped without it.

Registered by `pytest_plugins = ['pytest_slow']` in conftest.py (or `-p pytest_slow` with the
test directory on sys.path). The `slow` marker itself is declared in pytest.ini.
"""

import pytest

OPTION = '--run-slow'


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        OPTION, action='store_true', default=False,
        help='also run the tests marked slow (long fuzzing, big inputs, long node runs)')


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption(OPTION):
        return
    skip = pytest.mark.skip(reason=f'slow: run with {OPTION}')
    for item in items:
        if item.get_closest_marker('slow') is not None:
            item.add_marker(skip)
