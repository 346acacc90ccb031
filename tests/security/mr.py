"""Shared tools of the hostile-merge-request suite (``tests/security``).

Each test plays a stranger who opens a merge request: it writes what the MR would commit into a
state directory, runs karmactl as the documented pipeline does (a separate process, with a time
limit), and checks what a reviewer of the job would care about:

- no code ran: :func:`canary` names a file outside the state directory that the attack would create;
  it must not exist afterwards;
- no secret leaked: :data:`SECRET` sits in a file beside the state directory (as a CI secret would)
  and must appear in no output and no file the run wrote;
- no hang: every run has a timeout (:data:`LIMIT` seconds) and its elapsed time is returned;
- no exit 70: hostile input is bad input (exit 2) or an environment error, never an internal error.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

SECRET = "s3cr3t-ci-token-7f1c2a"
"""The content of the fake CI secret: no output or written file may contain it."""

LIMIT = 60.0
"""Seconds any one hostile run may take before the test fails as a hang."""

REPO = Path(__file__).resolve().parents[2]


@dataclass
class Result:
    """One finished karmactl process: exit code, stdout, stderr and wall seconds."""

    code: int
    out: str
    err: str
    seconds: float

    @property
    def text(self) -> str:
        return self.out + self.err


def run(state: Path, *args: str, timeout: float = LIMIT, env: dict | None = None,
        cwd: Path | None = None) -> Result:
    """Run ``python -m karmactl --state STATE ARGS`` in a new process; fail the test on a hang."""
    full_env = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    full_env.pop("KARMACTL_STATE", None)
    start = time.monotonic()
    try:
        proc = subprocess.run([sys.executable, "-m", "karmactl", "--state", str(state), *args],
                              capture_output=True, text=True, timeout=timeout, env=full_env,
                              cwd=str(cwd or state.parent), stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as exc:  # pragma: no cover - the failure being tested for
        raise AssertionError(f"karmactl {' '.join(args)} hung (over {timeout} s)") from exc
    return Result(proc.returncode, proc.stdout, proc.stderr, time.monotonic() - start)


def secret_file(base: Path) -> Path:
    """A file holding :data:`SECRET` outside the state directory (as a CI job's secret file)."""
    path = base / "ci-secret"
    path.write_text(SECRET + "\n")
    return path


def canary(base: Path) -> Path:
    """A path outside the state directory that an attack would create; it must stay absent."""
    return base / "pwned-canary"


def assert_no_secret(result: Result, *roots: Path) -> None:
    """:data:`SECRET` is in neither output of ``result`` nor any file under ``roots``."""
    assert SECRET not in result.text, result.text
    for root in roots:
        for path in root.rglob("*"):
            if path.is_file() and not path.is_symlink() and path.name != "ci-secret":
                try:
                    data = path.read_bytes()
                except OSError:
                    continue
                assert SECRET.encode() not in data, f"the secret landed in {path}"


def assert_refused(result: Result, *phrases: str, codes: tuple = (2,)) -> None:
    """The run exited with one of ``codes`` (never 70) and its stderr names every phrase."""
    assert result.code != 70, result.err
    assert result.code in codes, f"exit {result.code}: {result.err}"
    for phrase in phrases:
        assert phrase in result.err, result.err
