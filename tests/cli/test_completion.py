"""Completion of names, driven through a real bash; the scripts in completions/ and the static data stay
in sync with the commands; completion and --help import nothing heavy (issue 14, items 3 and 7)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from karmactl.cli import completing
from tests.conftest import NOW, cluster_yaml, write

ROOT = Path(__file__).resolve().parents[2]

APPS = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: nginx, namespace: default}
spec:
  replicas: 2
  selector: {matchLabels: {app: nginx}}
  template:
    metadata: {labels: {app: nginx}}
    spec: {containers: [{name: nginx, image: nginx}]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx}]}
---
apiVersion: policy.karmada.io/v1alpha1
kind: ClusterPropagationPolicy
metadata: {name: everything}
spec:
  resourceSelectors:
  - {apiVersion: apps/v1, kind: Deployment}
  placement:
    clusterAffinity: {clusterNames: [member1, member2]}
"""


@pytest.fixture
def fleet(tmp_path, cli, state):
    """A state directory after an offline reconcile: Clusters, Deployments in two namespaces, bindings."""
    write(state / "clusters.yaml", "---".join(cluster_yaml(f"member{i}") for i in (1, 2)))
    write(state / "apps.yaml", APPS)
    cli.ok("reconcile", "--offline", "--now", NOW)
    (tmp_path / "manifest.yaml").write_text("")
    (tmp_path / "manuals").mkdir()
    bindir = tmp_path / "bin"
    bindir.mkdir()
    shim = bindir / "karmactl"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m karmactl "$@"\n')
    shim.chmod(0o755)
    return tmp_path


def bash_complete(cwd: Path, line: str) -> list[str]:
    """COMPREPLY of the completions/ bash script for ``line`` (the cursor at its end), in a real bash."""
    words = line.split(" ")
    script = (f"source {ROOT / 'completions' / 'karmactl.bash'}\n"
              f"COMP_WORDS=({' '.join(repr(w) if w else repr('') for w in words)})\n"
              f"COMP_CWORD={len(words) - 1}\n"
              "_karmactl\n"
              "printf '%s\\n' \"${COMPREPLY[@]}\"\n")
    env = dict(os.environ, PATH=f"{cwd / 'bin'}{os.pathsep}{os.environ['PATH']}")
    env.pop("KARMACTL_STATE", None)
    proc = subprocess.run(["bash", "--norc", "--noprofile", "-c", script], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return [w for w in proc.stdout.split("\n") if w]


def test_bash_completes_binding_names(fleet):
    assert bash_complete(fleet, "karmactl get rb ") == ["nginx-deployment"]
    assert bash_complete(fleet, "karmactl get rb -n shop ") == ["web-deployment"]
    assert bash_complete(fleet, "karmactl get rb -A ") == ["nginx-deployment", "web-deployment"]


def test_bash_completes_kinds_names_and_forms(fleet):
    assert bash_complete(fleet, "karmactl get propa") == ["propagationpolicies"]
    assert bash_complete(fleet, "karmactl get deploy ") == ["nginx"]
    assert bash_complete(fleet, "karmactl get deploy/") == ["deploy/nginx"]
    assert bash_complete(fleet, "karmactl get cpp,deploy") == ["cpp,deployments", "cpp,deploy"] or \
        sorted(bash_complete(fleet, "karmactl get cpp,deploy")) == ["cpp,deploy", "cpp,deployments"]
    assert bash_complete(fleet, "karmactl describe cpp ") == ["everything"]
    assert bash_complete(fleet, "karmactl --state state delete deploy -n shop ") == ["web"]


def test_bash_completes_namespaces_clusters_outputs(fleet):
    assert bash_complete(fleet, "karmactl get deploy -n ") == ["default", "karmada-es-member1", "karmada-es-member2", "shop"]
    assert bash_complete(fleet, "karmactl get deploy -s members -C ") == ["member1", "member2"]
    assert bash_complete(fleet, "karmactl get deploy -s members -C member1,") == ["member1,member2"]
    assert bash_complete(fleet, "karmactl unjoin mem") == ["member1", "member2"]
    assert bash_complete(fleet, "karmactl get deploy -o y") == ["yaml"]
    assert bash_complete(fleet, "karmactl get deploy -s a") == ["all"]


def test_bash_completes_files_for_apply(fleet):
    assert bash_complete(fleet, "karmactl apply -f man") == ["manifest.yaml", "manuals"]
    assert bash_complete(fleet, "karmactl apply --filename man") == ["manifest.yaml", "manuals"]


def test_bash_completes_commands_and_flags(fleet):
    assert bash_complete(fleet, "karmactl recon") == ["reconcile"]
    assert "--show-labels" in bash_complete(fleet, "karmactl get deploy --sh")
    assert bash_complete(fleet, "karmactl cluster condition s") == ["set"]


def test_missing_state_completes_nothing_quietly(tmp_path, fleet):
    assert bash_complete(fleet, "karmactl --state nowhere get deploy ") == []


def test_static_data_and_scripts_are_in_sync():
    """Regenerate with: python -m karmactl.cli.completing --write"""
    assert json.loads(completing.STATIC_FILE.read_text()) == json.loads(json.dumps(completing.generate())), \
        "static_cli.json is stale: run python -m karmactl.cli.completing --write"
    for shell, name in completing.SCRIPT_FILES.items():
        assert (ROOT / "completions" / name).read_text() == completing.script(shell), \
            f"completions/{name} is stale: run python -m karmactl.cli.completing --write"


@pytest.mark.parametrize("shell, marker", [("bash", "complete -F _karmactl karmactl"), ("zsh", "compdef _karmactl"),
                                           ("fish", "complete --command karmactl")])
def test_completion_command_prints_the_scripts(cli, shell, marker):
    text = cli.ok("completion", shell)
    assert marker in text and text.rstrip("\n") == completing.script(shell).rstrip("\n")


def test_unknown_shell(cli):
    code, _out, err = cli("completion", "tcsh")
    assert code == 2 and "unsupported shell" in err


def test_fish_keeps_files_for_apply():
    # the fish script turns file completion off globally and back on where karmactl says :files
    assert "__fish_complete_path" in completing.script("fish")


@pytest.mark.parametrize("argv", [["--help"], ["get", "--help"], ["cluster", "condition", "set", "-h"],
                                  ["__complete", "get", "deploy", ""]])
def test_help_and_completion_import_nothing_heavy(argv, tmp_path):
    code = ("import sys; from karmactl.cli.main import main_exit_code; rc = main_exit_code(sys.argv[1:]); "
            "heavy = sorted(m for m in ('typer', 'click', 'karmactl.reconcile', 'kubernetes', 'rich', "
            "'karmactl.store.state', 'orjson') if m in sys.modules); "
            "print('HEAVY', heavy, file=sys.stderr); sys.exit(rc or (1 if heavy else 0))")
    env = dict(os.environ, COLUMNS="120")
    proc = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip()


def test_help_matches_typers(capsys):
    """The fast --help prints exactly what typer prints for a wide terminal."""
    from karmactl.cli.main import main_exit_code

    os.environ["COLUMNS"] = "120"
    try:
        main_exit_code(["get", "--help"])
        fast = capsys.readouterr().out
    finally:
        del os.environ["COLUMNS"]
    assert "--show-labels" in fast and fast == completing.static_data()["help"]["get"]


def test_names_follow_files_changed_since_the_last_run(fleet, state):
    assert (state / ".karmactl" / "cache" / "parsed.json").is_file()  # the run left its parse cache
    assert bash_complete(fleet, "karmactl get deploy ") == ["nginx"]
    write(state / "apps.yaml", APPS.replace("name: nginx, namespace: default", "name: renamed, namespace: default"))
    assert bash_complete(fleet, "karmactl get deploy ") == ["renamed"]
    write(state / "more" / "extra.yaml", APPS.split("---")[0].replace("name: nginx", "name: extra"))
    assert bash_complete(fleet, "karmactl get deploy ") == ["extra", "renamed"]
