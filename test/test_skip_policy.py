"""The suite's skip policy (test/pytest_skip_policy.py), run on small suites of its own.

Each case runs pytest in a subprocess on a test file written here, with the two plugins this
suite loads, and checks the exit status and the closing `suite:` line.
"""

from pathlib import Path
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.ros_free  # also runs where no ROS 2 is installed

TEST_DIR = Path(__file__).resolve().parent


def run_suite(tmp_path: Path, body: str, *args: str) -> subprocess.CompletedProcess:
    (tmp_path / 'test_case.py').write_text(textwrap.dedent(body))
    (tmp_path / 'pytest.ini').write_text(
        '[pytest]\nmarkers =\n    slow: a long variant\n')
    return subprocess.run(
        [sys.executable, '-m', 'pytest', '-p', 'pytest_slow', '-p', 'pytest_skip_policy',
         '-p', 'no:randomly', '-p', 'no:cacheprovider', str(tmp_path), *args],
        capture_output=True, text=True, cwd=tmp_path,
        env={'PYTHONPATH': str(TEST_DIR), 'PATH': ''})


def closing_line(result: subprocess.CompletedProcess) -> str:
    (line,) = [x for x in result.stdout.splitlines() if x.startswith('suite: ')]
    return line


def counts(result: subprocess.CompletedProcess) -> str:
    """The closing line's counts, for a run in file order."""
    line = closing_line(result)
    assert line.endswith('; file order'), line
    return line.removeprefix('suite: ').removesuffix('; file order')


def test_a_skip_for_a_missing_dependency_fails_the_run(tmp_path):
    result = run_suite(tmp_path, """
        import pytest

        def test_passes():
            pass

        def test_needs_an_oracle():
            pytest.importorskip('a_module_that_is_not_installed')
        """)
    assert result.returncode == 1, result.stdout
    assert 'test_case.py::test_needs_an_oracle' in result.stdout
    assert counts(result) == '1 passed, 0 failed, 1 skipped (1 unexpected)'


def test_a_module_skipped_at_collection_fails_the_run(tmp_path):
    result = run_suite(tmp_path, """
        import pytest

        pytest.importorskip('a_module_that_is_not_installed')

        def test_never_collected():
            pass
        """)
    assert result.returncode == 1, result.stdout
    assert counts(result) == '0 passed, 0 failed, 1 skipped (1 unexpected)'


def test_slow_variants_are_the_allowed_skip(tmp_path):
    body = """
        import pytest

        def test_passes():
            pass

        @pytest.mark.slow
        def test_long_variant():
            pass
        """
    result = run_suite(tmp_path, body)
    assert result.returncode == 0, result.stdout
    assert counts(result) == '1 passed, 0 failed, 1 skipped (0 unexpected)'
    result = run_suite(tmp_path, body, '--run-slow')
    assert result.returncode == 0, result.stdout
    assert counts(result) == '2 passed, 0 failed, 0 skipped (0 unexpected)'


def test_failures_and_errors_are_counted_as_failed(tmp_path):
    result = run_suite(tmp_path, """
        import pytest

        @pytest.fixture
        def broken():
            raise RuntimeError('set-up fails')

        def test_fails():
            assert False

        def test_errors(broken):
            pass
        """)
    assert result.returncode == 1, result.stdout
    assert counts(result) == '0 passed, 2 failed, 0 skipped (0 unexpected)'


def test_the_random_order_seed_is_named(tmp_path):
    (tmp_path / 'test_case.py').write_text('def test_passes():\n    pass\n')
    result = subprocess.run(
        [sys.executable, '-m', 'pytest', '-p', 'pytest_slow', '-p', 'pytest_skip_policy',
         '-p', 'no:cacheprovider', '--randomly-seed=4242', str(tmp_path)],
        capture_output=True, text=True, cwd=tmp_path, env={'PYTHONPATH': str(TEST_DIR)})
    assert result.returncode == 0, result.stdout
    assert closing_line(result).endswith('; random order, --randomly-seed=4242')
