"""Lint as a test, in the spirit of ament_flake8 and ament_pep257 (configured in ruff.toml)."""

from pathlib import Path
import shutil
import subprocess
import sys

import pytest

pytestmark = pytest.mark.ros_free  # also runs where no ROS 2 is installed

REPO = Path(__file__).resolve().parent.parent


def test_ruff_reports_nothing():
    ruff = shutil.which('ruff', path=str(Path(sys.executable).parent)) or shutil.which('ruff')
    assert ruff is not None, 'ruff is not installed: `pip install -r requirements/dev.txt`'
    result = subprocess.run([ruff, 'check', '--output-format', 'concise', str(REPO)],
                            capture_output=True, text=True, cwd=REPO)
    assert result.returncode == 0, result.stdout + result.stderr
