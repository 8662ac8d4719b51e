"""Pytest plugin: a skip the suite does not expect fails the run, and every run ends with a
one-line account of itself.

A skipped test is a check that did not happen. A missing test dependency would otherwise turn
every comparison with an independent oracle into a quiet skip, and a green run would hide it.
So a skip passes only when its reason is on `ALLOWED`, or is test/pytest_oracles.py's skip of a
test whose oracle is missing in a run without `--require-oracles`; any other skip, of a test or
of a whole module at collection, is listed and the run exits 1.

The last line of the run, `suite: N passed, N failed, N skipped; ...`, is what .ci/run reads for
its table; it also names the random order's seed (pytest-randomly), so a failure can be replayed
with `--randomly-seed=N`.
"""

from __future__ import annotations

import pytest
from pytest_oracles import is_allowed_skip
from pytest_slow import SKIP_REASON as SLOW

# Reasons a skip may give, and why each is acceptable.
ALLOWED = {
    SLOW: 'the long fuzzing and big-input variants; `make test-long` runs them',
}

_unexpected: list[tuple[str, str]] = []
_config: list[pytest.Config] = []  # the run's, for the reports, which do not carry it


def pytest_configure(config: pytest.Config) -> None:
    _config[:] = [config]


def _reason(report: pytest.TestReport | pytest.CollectReport) -> str:
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    return reason.removeprefix('Skipped: ')


def _note(report: pytest.TestReport | pytest.CollectReport) -> None:
    if report.skipped and not hasattr(report, 'wasxfail'):
        reason = _reason(report)
        if reason not in ALLOWED and not is_allowed_skip(reason, _config[0]):
            _unexpected.append((report.nodeid, reason))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    _note(report)


def pytest_collectreport(report: pytest.CollectReport) -> None:
    _note(report)


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    # A run whose only module was skipped at collection would otherwise end as 'no tests'.
    if _unexpected and session.exitstatus in (pytest.ExitCode.OK,
                                              pytest.ExitCode.NO_TESTS_COLLECTED):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter, config: pytest.Config) -> None:
    if _unexpected:
        terminalreporter.section('unexpected skips (each fails the run)', red=True)
        for nodeid, reason in _unexpected:
            terminalreporter.write_line(f'{nodeid}: {reason}')
        terminalreporter.write_line(
            'A skip is allowed only for these reasons (test/pytest_skip_policy.py): '
            + '; '.join(f'{reason!r} ({why})' for reason, why in ALLOWED.items()))

    def count(*keys: str) -> int:  # as pytest's own closing line counts
        return sum(getattr(report, 'count_towards_summary', True)
                   for key in keys for report in terminalreporter.stats.get(key, ()))

    seed = getattr(config.option, 'randomly_seed', None)
    order = f'random order, --randomly-seed={seed}' if isinstance(seed, int) else 'file order'
    terminalreporter.write_line(
        f'suite: {count("passed")} passed, {count("failed", "error")} failed, '
        f'{count("skipped")} skipped ({len(_unexpected)} unexpected); {order}')
