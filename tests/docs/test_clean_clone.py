"""The README's two commands leave a fresh clone clean (issue 28, part 2): ``karmactl demo`` works
in a state directory of its own, not the committed ``state/`` sample, and the test command passes
after it, without ``../shared`` beside the clone; ``git status`` shows nothing afterwards.

The test clones this repository's HEAD into a scratch directory (no ``../shared`` beside it), runs
the README's demo line as written (the ``pip install`` part left out: the clone runs through
``PYTHONPATH``) and the README's test command on a small subset of the suite."""
from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path

import pytest

from tests.docs.test_readme import ROOT, commands_of, sh_blocks


def _readme_command(containing: str) -> list[str]:
    """The README's command line containing ``containing``, without its ``pip install`` (the clone
    runs through PYTHONPATH)."""
    lines = [ln for b in sh_blocks((ROOT / "README.md").read_text()) for ln in b if containing in ln]
    assert len(lines) == 1, lines
    return [c for c in commands_of(lines[0]) if "pip install" not in c]


def _status(repo: Path) -> str:
    return subprocess.run(["git", "status", "--porcelain", "--ignore-submodules"], cwd=repo, capture_output=True,
                          text=True, check=True).stdout


@pytest.fixture
def clone(tmp_path):
    repo = tmp_path / "clone" / "karmactl"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(repo)], check=True, capture_output=True)
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("KARMACTL_STATE", "XDG_CACHE_HOME", "PYTHONPATH")}
    env.update(HOME=str(home), PYTHONPATH=str(repo), KARMACTL_TEST_LARGE_PATHS="0")
    yield repo, env, home / ".cache" / "karmactl" / "demo"
    from tests.e2e.conftest import _kill_local_members

    for state in (home / ".cache" / "karmactl" / "demo", repo / "state"):
        if state.exists():
            _kill_local_members(state)


def test_the_readme_commands_leave_a_fresh_clone_clean(clone):
    repo, env, demo_state = clone
    assert not (repo.parent / "shared").exists()
    assert _status(repo) == ""
    demo = _readme_command("karmactl demo")
    assert [shlex.split(c)[-1] for c in demo] == ["demo"], demo
    proc = subprocess.run(["bash", "-c", " && ".join(demo)], cwd=repo, env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert f"The demo's state directory is {demo_state}" in proc.stdout
    assert (demo_state / "computed" / "resourcebindings" / "default" / "nginx-deployment.json").is_file()
    assert _status(repo) == "", "the demo wrote into the clone"

    # the README's test command, on the tests of the committed sample and one that needs ../shared
    test = _readme_command("pytest")[-1]
    subset = ["tests/statedir/test_example_state.py",
              "tests/interpreter/test_lua_guestbook.py::test_interpreter_webhooks_are_refused_even_with_their_crd"]
    proc = subprocess.run(shlex.split(test) + ["-q", "-rs", *subset], cwd=repo, env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "skipped" in proc.stdout and "../shared" in proc.stdout  # skipped, with one line, without ../shared
    assert _status(repo) == "", "the tests wrote into the clone"
