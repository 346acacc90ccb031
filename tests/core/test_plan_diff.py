"""`karmactl plan` / `diff`: unified diffs of what a run would change, with kubectl diff's exit codes."""
from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import NOW, cluster_yaml, write
from tests.core.test_offline_run import NGINX as OFFLINE_NGINX, STATIC_PP

NGINX = OFFLINE_NGINX.replace("image: nginx\n", "image: nginx:1.0\n")
PP = STATIC_PP  # nginx 1:2 to member1, member2

WORK1 = "work.karmada.io/v1alpha1, Kind=Work karmada-es-member1/nginx-687f7fb96f"
WORK2 = "work.karmada.io/v1alpha1, Kind=Work karmada-es-member2/nginx-687f7fb96f"


@pytest.fixture
def reconciled(cli, state) -> Path:
    """A state directory with nginx propagated 1:2 to member1/member2, reconciled offline."""
    for name in ("member1", "member2"):
        write(state / "clusters" / f"{name}.yaml", cluster_yaml(name))
    write(state / "pp.yaml", PP)
    deploy = write(state / "nginx.yaml", NGINX)
    cli.ok("reconcile", "--offline", "--now", NOW)
    return deploy


def computed_files(state: Path) -> dict:
    return {p: p.read_bytes() for p in sorted((state / "computed").rglob("*")) if p.is_file()}


def test_new_image_shows_as_a_hunk_in_each_work_and_writes_nothing(cli, state, reconciled):
    reconciled.write_text(NGINX.replace("nginx:1.0", "nginx:1.1"))
    files = computed_files(state)
    code, out, _err = cli("plan", "--now", NOW)
    assert code == 1
    for header in (WORK1, WORK2):
        assert f"--- a/{header}\n+++ b/{header}\n" in out
    assert out.count("\n-            - image: nginx:1.0\n+            - image: nginx:1.1\n") == 2
    # the binding (resourceVersion) and the template's status overlay (generation, specHash) change only
    # bookkeeping: counted, not shown
    assert "--- a/apps/v1, Kind=Deployment default/nginx (status)\n" not in out
    assert "2 object(s) with bookkeeping changes only (--show-managed shows them)" in out
    assert "--- a/apps/v1, Kind=Deployment default/nginx (status)\n" in cli("plan", "--show-managed", "--now", NOW)[1]
    assert "\x1b[" not in out  # no colour when stdout is not a terminal
    assert computed_files(state) == files


def test_no_changes_exit_0_and_print_nothing(cli, reconciled):
    assert cli("plan", "--now", NOW)[:2] == (0, "")
    assert cli("diff", "--now", NOW)[:2] == (0, "")


def test_diff_is_plan(cli, reconciled):
    reconciled.write_text(NGINX.replace("replicas: 3", "replicas: 6"))
    plan = cli("plan", "--now", NOW)
    assert plan[0] == 1 and "-        replicas: 2\n+        replicas: 4\n" in plan[1]
    assert cli("diff", "--now", NOW) == plan


def test_reconciling_the_plan_leaves_nothing_to_diff(cli, reconciled):
    reconciled.write_text(NGINX.replace("nginx:1.0", "nginx:1.1"))
    assert cli("plan", "--now", NOW)[0] == 1
    cli.ok("reconcile", "--offline", "--now", NOW)
    assert cli("plan", "--now", NOW)[:2] == (0, "")


def test_created_and_deleted_objects_diff_against_nothing(cli, state, reconciled):
    reconciled.unlink()
    code, out, _err = cli("plan", "-o", "diff", "--now", NOW)
    assert code == 1
    assert f"--- a/{WORK1}\n+++ b/{WORK1}\n@@ -1," in out and "-kind: Work\n" in out
    assert "+" not in "".join(line[0] for line in out.splitlines() if not line.startswith("+++"))

    write(state / "nginx.yaml", NGINX)
    cli.ok("reconcile", "--offline", "--now", NOW)
    write(state / "web.yaml", NGINX.replace("name: nginx\n", "name: web\n", 1))
    write(state / "pp.yaml", PP.replace("    name: nginx\n", ""))  # the policy now selects every Deployment
    code, out, _err = cli("plan", "--now", NOW)
    header = "work.karmada.io/v1alpha1, Kind=Work karmada-es-member1/web-"
    assert code == 1 and f"--- a/{header}" in out
    created = out[out.index(f"--- a/{header}"):]
    assert "\n@@ -0,0 +1," in created and "\n+kind: Work\n" in created


def test_names_only(cli, reconciled):
    reconciled.write_text(NGINX.replace("nginx:1.0", "nginx:1.1"))
    code, out, _err = cli("plan", "-o", "name", "--now", NOW)
    assert (code, out.splitlines()) == (1, [
        "work.karmada.io.v1alpha2.ResourceBinding.default.nginx-deployment",
        "work.karmada.io.v1alpha1.Work.karmada-es-member1.nginx-687f7fb96f",
        "work.karmada.io.v1alpha1.Work.karmada-es-member2.nginx-687f7fb96f",
        "apps.v1.Deployment.default.nginx",
    ])
    cli.ok("reconcile", "--offline", "--now", NOW)
    assert cli("diff", "-o", "name", "--now", NOW)[:2] == (0, "")


def test_unknown_output_format_is_a_usage_error(cli, reconciled):
    code, out, err = cli("plan", "-o", "yaml", "--now", NOW)
    assert (code, out) == (2, "") and 'output format "yaml"' in err


def test_invalid_input_exits_2_naming_file_and_field(cli, state, reconciled):
    write(state / "pp.yaml", PP.replace("replicaSchedulingType: Divided", "replicaSchedulingType: Split"))
    code, out, err = cli("plan", "--now", NOW)
    assert (code, out) == (2, "")
    assert "pp.yaml" in err and "PropagationPolicy default/nginx-propagation" in err
    assert "spec.placement.replicaScheduling.replicaSchedulingType" in err


def test_external_diff_program_compares_live_and_merged_directories(cli, reconciled, monkeypatch):
    reconciled.write_text(NGINX.replace("nginx:1.0", "nginx:1.1"))
    monkeypatch.setenv("KARMACTL_EXTERNAL_DIFF", "diff -u -N")
    code, out, _err = cli("plan", "--now", NOW)
    assert code == 1
    assert "/LIVE/work.karmada.io.v1alpha1.Work.karmada-es-member1.nginx-687f7fb96f\t" in out
    assert "/MERGED/work.karmada.io.v1alpha1.Work.karmada-es-member1.nginx-687f7fb96f\t" in out
    assert out.count("\n-            - image: nginx:1.0\n+            - image: nginx:1.1\n") == 2

    monkeypatch.setenv("KARMACTL_EXTERNAL_DIFF", "sh -c 'exit 3'")
    code, _out, err = cli("plan", "--now", NOW)
    assert code == 2 and "sh exited with status 3" in err
    monkeypatch.setenv("KARMACTL_EXTERNAL_DIFF", "no-such-diff-program")
    code, _out, err = cli("plan", "--now", NOW)
    assert code == 2 and "cannot run no-such-diff-program" in err


# ---------------------------------------------------------------------------- member copies
def _deployment(replicas: int, **server) -> dict:
    obj = {"apiVersion": "apps/v1", "kind": "Deployment",
           "metadata": {"name": "nginx", "namespace": "default", "labels": {"app": "nginx"}},
           "spec": {"replicas": replicas}}
    obj["metadata"].update(server)
    return obj


LIVE = {"resourceVersion": "4711", "uid": "0b7c", "generation": 7, "creationTimestamp": "2025-12-01T00:00:00Z",
        "managedFields": [{"manager": "karmactl", "operation": "Apply"}]}


@pytest.fixture
def member_changes(monkeypatch):
    """Runs plan's real dry run, then adds the given member changes to its report (as an online
    dry run fills them)."""
    from karmactl import reconcile

    changes: list = []
    real_run = reconcile.run

    def run(store, options, members=None):
        report = real_run(store, options, members)
        report.member_changes = changes
        return report

    monkeypatch.setattr(reconcile, "run", run)
    return changes


def test_member_changes_render_per_cluster_without_server_fields(cli, reconciled, member_changes):
    live = {**_deployment(1, **LIVE), "status": {"replicas": 1, "readyReplicas": 1}}
    member_changes.extend([
        {"cluster": "member2", "action": "create", "ref": "Deployment default/nginx", "current": None,
         "desired": _deployment(2)},
        {"cluster": "member1", "action": "update", "ref": "Deployment default/nginx", "current": live,
         "desired": _deployment(3)},
        {"cluster": "member3", "action": "delete", "ref": "ClusterRole nginx-reader",
         "current": {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                     "metadata": {"name": "nginx-reader", "uid": "9f1e"}, "rules": []}, "desired": None},
    ])
    code, out, _err = cli("plan", "--now", NOW)
    assert code == 1
    m1, m2 = "member1/apps/v1, Kind=Deployment default/nginx", "member2/apps/v1, Kind=Deployment default/nginx"
    m3 = "member3/rbac.authorization.k8s.io/v1, Kind=ClusterRole nginx-reader"
    assert out.index(f"--- {m1}\n+++ {m1}\n") < out.index(f"--- {m2}\n+++ {m2}\n") < out.index(f"--- {m3}\n")
    assert "\n-  replicas: 1\n+  replicas: 3\n" in out
    assert f"--- {m2}\n+++ {m2}\n@@ -0,0 +1,9 @@\n+apiVersion: apps/v1\n" in out
    assert f"--- {m3}\n+++ {m3}\n@@ -1,5 +0,0 @@\n" in out and "-  name: nginx-reader\n" in out
    for server_field in ("resourceVersion", "managedFields", "4711", "creationTimestamp: '2025", "readyReplicas", "9f1e"):
        assert server_field not in out
    assert cli("plan", "-o", "name", "--now", NOW)[1].splitlines() == [
        "member1.apps.v1.Deployment.default.nginx", "member2.apps.v1.Deployment.default.nginx",
        "member3.rbac.authorization.k8s.io.v1.ClusterRole..nginx-reader"]


def test_member_copy_differing_only_in_server_fields_is_no_difference(cli, reconciled, member_changes):
    member_changes.append({"cluster": "member1", "action": "update", "ref": "Deployment default/nginx",
                           "current": {**_deployment(1, **LIVE), "status": {"replicas": 1}},
                           "desired": _deployment(1)})
    assert cli("plan", "--now", NOW)[:2] == (0, "")


def test_malformed_member_change_is_refused(cli, reconciled, member_changes):
    member_changes.append({"cluster": "member1", "action": "patch", "ref": "Deployment default/nginx",
                           "current": None, "desired": _deployment(1)})
    code, _out, err = cli("plan", "--now", NOW)
    assert code > 1 and "malformed member change 'member1' 'patch'" in err


# ---------------------------------------------------------------------------- colour
def _plan_on_a_terminal(state: Path, **env) -> bytes:
    main, tty = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "karmactl", "--state", str(state), "plan", "--now", NOW],
                            stdout=tty, stderr=subprocess.DEVNULL, env={**os.environ, "TERM": "xterm", **env})
    os.close(tty)
    data = b""
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:  # the terminal closes when the process exits
            break
        if not chunk:
            break
        data += chunk
    os.close(main)
    assert proc.wait() == 1
    return data


def test_colour_only_on_a_terminal_and_not_with_no_color(state, reconciled):
    reconciled.write_text(NGINX.replace("nginx:1.0", "nginx:1.1"))
    coloured = _plan_on_a_terminal(state)
    assert b"\x1b[31m-            - image: nginx:1.0\x1b[0m" in coloured
    assert b"\x1b[32m+            - image: nginx:1.1\x1b[0m" in coloured
    plain = _plan_on_a_terminal(state, NO_COLOR="1")
    assert b"\x1b[" not in plain and b"+            - image: nginx:1.1" in plain
