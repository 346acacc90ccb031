"""The README's command examples run as written (issue 14, part 8): every line of its ``sh`` blocks,
in a real bash, in a throwaway directory with local member clusters."""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
# the only parts not run here: installing karmactl (the test runs the checkout), the suite itself, and
# the demo (tests/docs/test_clean_clone.py runs it, and a subset of the suite, in a fresh clone)
NOT_RUN = ("python3 -m pip install -e .", "python3 -m pip install -e '.[test]'", "python3 -m pytest",
           "python3 -m karmactl demo")


def sh_blocks(text: str) -> list[list[str]]:
    """The command lines of each ```sh block (continuation-only comment lines dropped)."""
    blocks = []
    for body in re.findall(r"```sh\n(.*?)```", text, re.S):
        lines = [ln for ln in body.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
        blocks.append(lines)
    return blocks


def _words(text: str) -> str:
    return " ".join(shlex.split(text, comments=True))


def commands_of(line: str) -> list[str]:
    """``a && b  # note`` -> [a, b] as written (bash runs them), the comment dropped."""
    code = line if "#" not in line else line[: line.index("  #")] if "  #" in line else line
    return [part.strip() for part in code.split(" && ")]


def _runs(command: str) -> bool:
    return _words(command) not in {_words(c) for c in NOT_RUN}


def test_every_readme_block_is_found():
    blocks = sh_blocks((ROOT / "README.md").read_text())
    assert len(blocks) >= 3
    assert any(b[0].startswith("export KARMACTL_STATE") for b in blocks)
    skipped = [_words(c) for b in blocks for ln in b for c in commands_of(ln) if not _runs(c)]
    assert sorted(set(skipped)) == sorted(_words(c) for c in NOT_RUN)  # nothing else is left out


def _workspace(tmp_path: Path) -> dict:
    """A directory with the repository's inputs (read-only links) and ``karmactl`` on PATH running
    this checkout."""
    for name in ("manifests", "tests"):
        (tmp_path / name).symlink_to(ROOT / name)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "karmactl"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m karmactl "$@"\n')
    shim.chmod(0o755)
    env = dict(os.environ)
    env.pop("KARMACTL_STATE", None)
    env.pop("XDG_CACHE_HOME", None)  # `demo` works in HOME/.cache/karmactl/demo, under tmp_path
    env["PATH"] = os.pathsep.join([str(bin_dir), os.path.dirname(sys.executable), env.get("PATH", "")])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    env["HOME"] = str(tmp_path / "home")
    return env


def _run_block(lines: list[str], cwd: Path, env: dict) -> list[tuple[str, int, str]]:
    """Run the lines in one bash (so ``export`` and variables carry over); ``[(line, exit code,
    output)]``."""
    rc_file = cwd / ".rc"
    script = []
    for i, line in enumerate(lines):
        parts = [c for c in commands_of(line) if _runs(c)]
        if not parts:
            continue
        script.append(f"echo '@@ {i}' >&2\n{' && '.join(parts)} </dev/null\necho \"{i} $?\" >> {rc_file}")
    if not script:
        return []
    proc = subprocess.run(["bash", "-c", "\n".join(script)], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=600)
    codes = dict(tuple(map(int, ln.split())) for ln in rc_file.read_text().splitlines())
    chunks = dict(re.findall(r"@@ (\d+)\n(.*?)(?=@@ \d+\n|\Z)", proc.stderr, re.S))
    return [(lines[i], codes.get(i, -1), chunks.get(str(i), "")) for i in range(len(lines)) if i in codes]


def _expected(line: str) -> set[int]:
    # plan/diff exit 1 when there are differences (README, exit codes)
    return {0, 1} if re.search(r"karmactl (plan|diff)\b", line) else {0}


@pytest.fixture
def local_members_stopped():
    dirs: list[Path] = []
    yield dirs
    from tests.e2e.conftest import _kill_local_members
    for state in dirs:
        if state.exists():
            _kill_local_members(state)


def test_readme_examples_run_as_written(tmp_path, local_members_stopped):
    blocks = sh_blocks((ROOT / "README.md").read_text())
    failures = []
    for n, lines in enumerate(blocks):
        cwd = tmp_path / f"block{n}"
        cwd.mkdir()
        env = _workspace(cwd)
        local_members_stopped.append(cwd / "state")
        results = _run_block(lines, cwd, env)
        ran = [line for line, _c, _o in results]
        assert len(ran) == len([ln for ln in lines if [c for c in commands_of(ln) if _runs(c)]]), ran
        for line, code, output in results:
            if code not in _expected(line) or "error:" in output or "Traceback" in output:
                failures.append(f"{line}\n  exit {code}\n{output}")
    assert not failures, "\n".join(failures)
    # the tour's `export KARMACTL_STATE=./state` held for every later line: all of it went there
    tour = next(tmp_path / f"block{n}" for n, b in enumerate(blocks) if b[0].startswith("export KARMACTL_STATE"))
    assert (tour / "state" / "clusters" / "member3.yaml").is_file()
    assert (tour / "state" / "computed" / "resourcebindings" / "default" / "nginx-deployment.json").is_file()
