"""The committed example ``state/`` (issue 14, part 7): what a fresh clone shows with the default
``--state ./state``. The tests work on a copy, so the repository's directory is never written."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from karmactl.cli.main import main_exit_code

ROOT = Path(__file__).resolve().parent.parent.parent


def _fresh_clone_state(tmp_path: Path) -> Path:
    """The tracked files of ``state/`` only (what a clone has), copied under ``tmp_path``."""
    tracked = subprocess.run(["git", "ls-files", "--", "state"], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout.split()
    assert tracked, "state/ is not committed"
    for rel in tracked:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, tmp_path / rel)
    return tmp_path / "state"


def test_default_state_of_a_fresh_clone_shows_the_nginx_sample(tmp_path, monkeypatch, capsys):
    _fresh_clone_state(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("KARMACTL_STATE", raising=False)
    assert main_exit_code(["get", "pp"]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].split() == ["NAME", "CONFLICT-RESOLUTION", "PRIORITY", "AGE"]
    # no fake age: nothing computed is committed, so the age is unknown (as kubectl shows it)
    assert table[1].split()[0] == "nginx-propagation" and table[1].split()[-1] == "<unknown>"
    assert main_exit_code(["get", "deploy", "nginx"]) == 0
    assert "nginx" in capsys.readouterr().out
    # a plan computes the binding and the Works for member1 and member2 without any member
    assert main_exit_code(["plan", "-o", "name"]) == 1
    planned = capsys.readouterr().out
    assert "nginx-deployment" in planned


def test_example_state_is_the_sample_demo_propagates():
    for sample in sorted((ROOT / "manifests" / "nginx").glob("*.yaml")):
        assert (ROOT / "state" / "nginx" / sample.name).read_text() == sample.read_text(), sample.name


def test_the_sample_commits_nothing_computed():
    tracked = subprocess.run(["git", "ls-files", "--", "state"], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout.split()
    assert [p for p in tracked if p.startswith("state/computed/")] == []


def test_runtime_directory_of_the_example_state_is_ignored_by_git():
    ignored = subprocess.run(["git", "check-ignore", "-q", "state/.karmactl/cache/parsed.json"], cwd=ROOT)
    assert ignored.returncode == 0
