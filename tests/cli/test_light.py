"""`get` and `describe` without typer (karmactl/cli/light.py) and from the parse cache
(StateStore.load_cached): the same flags, the same output, what changed on disk always seen."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from karmactl.cli import light
from karmactl.cli.cmd import describe, get, reconcile
from karmactl.cli.main import hoist_global_options
from karmactl.store import fsio
from karmactl.store.state import StateStore, validation_tag
from tests.conftest import NOW, cluster_yaml, write
from tests.statedir.samples import NGINX

REPO = Path(__file__).resolve().parents[2]

CRD = """
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.io}
spec:
  group: example.io
  scope: Namespaced
  names: {kind: Widget, plural: widgets, singular: widget}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
---
apiVersion: example.io/v1
kind: Widget
metadata: {name: w1, namespace: default}
spec: {size: 3}
"""


def _record(monkeypatch) -> list:
    """Replace the functions both parsers call with recorders: ``[(command, context fields, kwargs)]``."""
    calls = []

    def recorder(command):
        def record(c, **kwargs):
            calls.append((command, (c._state, c.now_text, c.verbose, c.command), kwargs))
        return record

    monkeypatch.setattr(get, "get_from_flags", recorder("get"))
    monkeypatch.setattr(describe, "describe_from_args", recorder("describe"))
    monkeypatch.setattr(reconcile, "reconcile_cmd", recorder("reconcile"))
    monkeypatch.setattr(fsio, "LOCK_TIMEOUT", fsio.LOCK_TIMEOUT)  # restored after the test
    return calls


def _normal(kwargs: dict) -> dict:
    """Lists as lists, and an empty list of a repeatable parameter as absent (None), as both
    implementations pass them on (``get_from_flags`` reads them alike)."""
    return {k: (list(v) or None) if isinstance(v, (list, tuple)) else v for k, v in kwargs.items()}


LINES = [
    ["get", "deploy"],
    ["get", "deploy", "nginx", "other", "-n", "prod"],
    ["get", "deploy/nginx", "svc/web"],
    ["get", "deploy,svc", "-A", "-o", "wide", "--show-labels"],
    ["get", "rb", "-ojson"],
    ["get", "rb", "--output=yaml", "--no-headers", "--sort-by", ".metadata.name"],
    ["get", "deploy", "-L", "app,tier", "-L", "team", "--label-columns=x"],
    ["get", "-l", "app=nginx", "deploy", "--field-selector", "metadata.name=nginx"],
    ["get", "deploy", "-s", "members", "-C", "member1,member2", "--ignore-not-found"],
    ["get", "deploy", "-w", "--watch-only"],
    ["get", "deploy", "-n", "a", "-n", "b"],
    ["--state", "elsewhere", "--now", NOW, "-v", "get", "pp"],
    ["get", "pp", "--state=elsewhere", "--lock-timeout", "30s", "--verbose"],
    ["get", "-", "deploy"],
    ["describe", "deploy", "nginx"],
    ["describe", "deploy/nginx", "-A"],
    ["describe", "-n", "prod", "rb"],
    ["describe", "cluster", "member1", "--namespace=x", "--all-namespaces"],
    ["reconcile"],
    ["reconcile", "--offline"],
    ["--state", "elsewhere", "reconcile", "--offline", "--now", NOW, "-v"],
    ["reconcile", "--dry-run", "--offline"],
    ["reconcile", "--wait", "--timeout", "90s"],
    ["reconcile", "--timeout=2m", "--wait", "--lock-timeout", "5s"],
]


@pytest.mark.parametrize("line", LINES, ids=" ".join)
def test_the_light_parser_passes_what_typer_passes(line, monkeypatch):
    calls = _record(monkeypatch)
    monkeypatch.delenv("KARMACTL_STATE", raising=False)
    argv = hoist_global_options(line)
    assert light.run(argv) is True
    from karmactl.cli.app import app

    app(args=argv, prog_name="karmactl", standalone_mode=False)
    (cmd_a, ctx_a, kw_a), (cmd_b, ctx_b, kw_b) = calls
    assert (cmd_a, ctx_a) == (cmd_b, ctx_b)
    assert _normal(kw_a) == _normal(kw_b)


def test_the_state_directory_comes_from_the_environment_as_with_typer(monkeypatch):
    calls = _record(monkeypatch)
    monkeypatch.setenv("KARMACTL_STATE", "from-env")
    assert light.run(["get", "deploy"])
    assert calls[0][1][0] == Path("from-env")
    monkeypatch.setenv("KARMACTL_STATE", "")  # empty: the default, as click reads it
    assert light.run(["get", "deploy"])
    assert calls[1][1][0] == Path("state")


@pytest.mark.parametrize("line", [
    ["get", "-Aw", "deploy"],             # combined short flags
    ["get", "deploy", "-n"],              # a missing value
    ["get", "deploy", "-n", "-A"],        # a value that looks like a flag
    ["get", "deploy", "--", "x"],
    ["get", "deploy", "--bogus"],
    ["get", "deploy", "--all-namespaces=true"],
    ["get", "deploy", "-h"],
    ["describe"],                         # a required argument missing
    ["describe", "deploy", "a", "b"],     # one argument too many
    ["--version"],
    ["--version", "get", "deploy"],
    ["apply", "-f", "x.yaml"],            # not a light command
    ["reconcile", "extra"],               # reconcile takes no argument
    ["reconcile", "--offline=yes"],
    [],
], ids=lambda line: " ".join(line) or "(nothing)")
def test_lines_only_click_should_judge_are_left_to_typer(line, monkeypatch):
    calls = _record(monkeypatch)
    assert light.parse(line) is None
    assert light.run(line) is False and calls == []


def test_an_unchanged_offline_reconcile_imports_no_typer(tmp_path):
    # the incremental engine's cheapest answer (karmactl/incremental/runindex.py) goes without the CLI framework
    state = tmp_path / "state"
    write(state / "nginx.yaml", NGINX)
    write(state / "member1.yaml", cluster_yaml("member1"))
    for f in state.iterdir():  # written a minute ago: not "racily clean" (runindex.RACY_NS)
        os.utime(f, (time.time() - 60, time.time() - 60))
    probe = ("import sys\nfrom karmactl.cli.main import main_exit_code\n"
             "code = main_exit_code(sys.argv[1:])\n"
             "print('loaded:', sorted(m for m in sys.modules if m.split('.')[0] in ('typer', 'pydantic', 'rich')))\n"
             "sys.exit(code)\n")
    outs = []
    for _ in range(2):
        proc = subprocess.run([sys.executable, "-c", probe, "--state", str(state), "reconcile", "--offline", "--now", NOW,
                               "-v"], cwd=REPO, capture_output=True, text=True,
                              env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
        assert proc.returncode == 0, proc.stderr
        outs.append((proc.stdout, proc.stderr))
    assert "run: unchanged" in outs[1][1] and outs[1][0].strip() == "loaded: []", outs[1]


def test_get_and_describe_import_neither_typer_nor_the_control_plane(tmp_path):
    state = tmp_path / "state"
    write(state / "nginx.yaml", NGINX)
    write(state / "member1.yaml", cluster_yaml("member1"))
    heavy = ("typer", "pydantic", "yaml", "karmactl.reconcile", "kubernetes", "ruamel", "lupa", "jsonschema", "rich")
    probe = ("import sys\nfrom karmactl.cli.main import main_exit_code\n"
             "code = main_exit_code(sys.argv[1:])\n"
             f"print('loaded:', sorted(m for m in sys.modules if m.split('.')[0] in {heavy!r} or m in {heavy!r}))\n"
             "sys.exit(code)\n")

    def run(*args):
        proc = subprocess.run([sys.executable, "-c", probe, "--state", str(state), *args], cwd=REPO,
                              capture_output=True, text=True, env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    first = run("get", "deploy")  # parses the files (the store's checks import what they need), no typer
    assert "nginx" in first and "'typer'" not in first
    for args in (["get", "deploy"], ["get", "clusters", "-o", "wide"], ["describe", "deploy", "nginx"]):
        out = run(*args)
        assert "nginx" in out or "member1" in out
        assert out.rstrip().endswith("loaded: []"), out


def test_get_from_the_cache_sees_every_change_to_the_files(cli, state):
    write(state / "nginx.yaml", NGINX)
    write(state / "member1.yaml", cluster_yaml("member1"))
    cli.ok("reconcile", "--offline", "--now", NOW)
    before = cli.ok("get", "deploy", "nginx", "-o", "json")
    assert cli.ok("get", "deploy", "nginx", "-o", "json") == before  # from the cache, the same object
    # an edited file is read again
    text = (state / "nginx.yaml").read_text()
    assert "replicas: 3" in text
    (state / "nginx.yaml").write_text(text.replace("replicas: 3", "replicas: 5"))
    assert json.loads(cli.ok("get", "deploy", "nginx", "-o", "json"))["spec"]["replicas"] == 5
    # a new file with the same object again is refused, naming both places
    write(state / "copy.yaml", (state / "nginx.yaml").read_text())
    code, _out, err = cli("get", "deploy")
    assert code == 2 and "duplicate object" in err and "copy.yaml" in err
    (state / "copy.yaml").unlink()
    # an invalid edit is reported by get as by any command
    (state / "nginx.yaml").write_text((state / "nginx.yaml").read_text().replace("replicas: 5", "replicas: many"))
    code, _out, err = cli("describe", "deploy", "nginx")
    assert code == 2 and "nginx.yaml" in err


def test_a_misplaced_computed_file_of_the_kind_shown_is_still_reported(cli, state):
    write(state / "nginx.yaml", NGINX)
    write(state / "member1.yaml", cluster_yaml("member1"))
    cli.ok("reconcile", "--offline", "--now", NOW)
    cli.ok("get", "rb")
    rb = next((state / "computed" / "resourcebindings" / "default").glob("*.json"))
    rb.rename(rb.with_name("elsewhere.json"))
    code, _out, err = cli("get", "rb")
    assert code == 2 and "does not hold the object its path names" in err


def test_load_cached_answers_only_for_unchanged_files_and_reads_only_the_kinds_asked(cli, state):
    write(state / "nginx.yaml", NGINX)
    write(state / "member1.yaml", cluster_yaml("member1"))
    write(state / "widgets.yaml", CRD)
    assert StateStore(state).load_cached(validation_tag(), lambda registry: []) is None  # no cache yet
    cli.ok("reconcile", "--offline", "--now", NOW)
    from karmactl.reconcile import load

    full = load(StateStore(state))
    asked = []

    def kinds_of(registry):
        asked.append(registry.by_group_kind("example.io", "Widget") is not None)  # the CRDs are registered
        return [("apps", "Deployment")]

    part = StateStore(state).load_cached(validation_tag(), kinds_of)
    assert asked == [True]
    assert part.user == full.user and part.sources == full.sources
    assert part.overlays == {k: v for k, v in full.overlays.items()
                             if k[:2] in (("apps", "Deployment"), ("cluster.karmada.io", "Cluster"))}
    assert full.bindings and not part.bindings
    assert StateStore(state).load_cached(validation_tag(), lambda r: [("", "Namespace")]).bindings == full.bindings
    one = next(iter(full.bindings))  # one object by name: its file only
    assert StateStore(state).load_cached(validation_tag(), lambda r: [one]).bindings == {one: full.bindings[one]}
    missing = (*one[:3], "no-such-binding")
    assert StateStore(state).load_cached(validation_tag(), lambda r: [missing]).bindings == {}
    assert StateStore(state).load_cached("another-tag", kinds_of) is None
    (state / "widgets.yaml").write_text((state / "widgets.yaml").read_text() + "\n")
    assert StateStore(state).load_cached(validation_tag(), kinds_of) is None
    assert "w1" in cli.ok("get", "widgets")  # a full load, which writes the cache again
    assert StateStore(state).load_cached(validation_tag(), kinds_of) is not None
