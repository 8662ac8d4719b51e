"""Pytest plugin: the `--run-slow` option; tests marked `slow` are skipped without it.

Registered by `pytest_plugins` in conftest.py (or `-p pytest_slow` with the test directory on
sys.path). The `slow` marker itself is declared in pytest.ini.
"""

import pytest

OPTION = '--run-slow'
SKIP_REASON = f'slow: run with {OPTION}'


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        OPTION, action='store_true', default=False,
        help='also run the tests marked slow (long fuzzing, big inputs, long node runs)')


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption(OPTION):
        return
    skip = pytest.mark.skip(reason=SKIP_REASON)
    for item in items:
        if item.get_closest_marker('slow') is not None:
            item.add_marker(skip)
