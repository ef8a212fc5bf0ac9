"""The README's install-and-test command, the one CI runs (``.ci/run`` reads it from the README):
tests run in parallel workers, and the README says how long they take on a small machine."""

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_ci_installs_pytest_xdist_and_runs_a_worker_per_core():
    cmd = subprocess.run(["bash", str(ROOT / ".ci" / "run"), "--print"], capture_output=True, text=True,
                         check=True).stdout.strip()
    install, _, test = cmd.partition("pip install")[2].rpartition("&&")
    assert "pytest-xdist" in install.split() and test.split() == ["pytest", "-q", "-n", "auto"]


def test_the_readme_says_how_long_the_tests_take_on_two_cores():
    said = re.search(r"take at most about (\d+) minutes on a 2-core\s+machine", (ROOT / "README.md").read_text())
    assert said and int(said.group(1)) <= 17, "the README states the tests' time on a 2-core machine (<= 17 min)"
