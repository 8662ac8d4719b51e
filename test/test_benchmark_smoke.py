"""The benchmark's CI-sized mode runs and prints every table, so the script cannot rot."""

from pathlib import Path
import re
import subprocess
import sys

import pytest

REPO = Path(__file__).resolve().parent.parent


def test_benchmark_smoke_prints_every_section():
    pytest.importorskip('jvrc_description', reason='the benchmark runs on jvrc1 from PyPI')
    pytest.importorskip('psutil', reason='the benchmark measures CPU and memory with psutil')
    result = subprocess.run([sys.executable, str(REPO / 'bench' / 'benchmark.py'), '--smoke'],
                            capture_output=True, text=True, timeout=240, cwd=REPO)
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    # 1-3: one row per robot with a ratio to the floor
    ratios = re.findall(r'^(\S+) \(.*?\)\s+\d+\s+\d+\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+'
                        r'([\d.]+)', out, re.MULTILINE)
    assert [name for name, _ in ratios] == ['sample_arm', 'jvrc1', 'many_hands'], out
    assert all(float(ratio) > 0 for _, ratio in ratios)
    # 4-5: our node and the relay both received /tf at the driven rate
    e2e = re.findall(r'^\s+\d+ (urdf_state_publisher|relay \(floor\))\s+(\d+)\s+([\d.]+)', out,
                     re.MULTILINE)
    assert {name for name, _, _ in e2e} == {'urdf_state_publisher', 'relay (floor)'}, out
    assert all(float(rate) > 0 for _, _, rate in e2e), out
    assert re.search(r'^6\. Start-up.*: [\d.]+ s', out, re.MULTILINE), out
    assert re.search(r'RSS after\s+[\d,]+ messages:\s+[\d.]+ MiB', out), out
