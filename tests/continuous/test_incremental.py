"""Incremental online passes of ``karmactl reconcile --watch`` (issue 25): a template edited, a member
copy changed by hand, a bad edit, SIGTERM inside a partial pass; each time the files and the member
objects are what a full pass gives. The loop runs against emulated members, as a process of its own
(as an operator runs it) or in this process where a signal must land at one exact point."""
from __future__ import annotations

import fcntl
import json
import os
import re
import time
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import write
from tests.continuous.test_watch import Loop, cli, fleet, replicas, until  # noqa: F401 - fleet is a fixture


def web(state: Path) -> None:
    """A second template and the policy naming it: what a change to nginx must not touch."""
    write(state / "apps" / "web.yaml", """
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: web, namespace: default, labels: {app: web}}
        spec:
          replicas: 2
          selector: {matchLabels: {app: web}}
          template:
            metadata: {labels: {app: web}}
            spec: {containers: [{name: web, image: nginx:1.25}]}
        """)
    write(state / "policies" / "web.yaml", """
        apiVersion: policy.karmada.io/v1alpha1
        kind: PropagationPolicy
        metadata: {name: web, namespace: default}
        spec:
          resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
          placement: {clusterAffinity: {clusterNames: [member1, member2]}}
        """)


def web_files(state: Path) -> dict:
    """mtime of every computed file of the web binding (binding, Works, template status)."""
    return {p: p.stat().st_mtime_ns for p in (state / "computed").rglob("*.json") if "web" in p.name}


def pass_line(loop: Loop, trigger: str) -> str:
    """The last pass line whose trigger starts with ``trigger``."""
    lines = [ln for ln in loop.text().splitlines() if re.match(rf"pass \d+ \({re.escape(trigger)}", ln)]
    return lines[-1] if lines else ""


def in_pass(state: Path) -> bool:
    """Whether the loop holds the state lock (a pass is running)."""
    try:
        fd = os.open(state / ".karmactl" / "lock", os.O_RDWR)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # (releases it)
    return False


def quiet(loop: Loop, state: Path, seconds: float = 1.5) -> None:
    """Wait until no pass has been logged for ``seconds`` and none is running (a settle pass
    follows its pass within 1 s)."""
    last = [loop.text(), time.monotonic()]

    def still() -> bool:
        text = loop.text()
        if text != last[0] or in_pass(state):
            last[:] = [text, time.monotonic()]
        return time.monotonic() - last[1] >= seconds

    until("the loop idle", still, loop)


def lists_of_deployments(srv) -> list:
    """The LISTs of Deployments (not watches) the member served."""
    return [r for r in srv.request_log if r["method"] == "GET" and "watch" not in (r.get("query") or "")
            and re.search(r"/apis/apps/v1/(namespaces/[^/]+/)?deployments$", r["path"])]


def hand_edit(srv, replicas_: int) -> None:
    req = urllib.request.Request(f"{srv.url}/apis/apps/v1/namespaces/default/deployments/nginx", method="PATCH",
                                 data=json.dumps({"spec": {"replicas": replicas_}}).encode(),
                                 headers={"Content-Type": "application/merge-patch+json"})
    urllib.request.urlopen(req, timeout=10).read()


def test_incremental_passes_touch_one_binding_and_match_a_full_pass(state, fleet):
    web(state)
    loop = Loop(state, "--resync", "1h")
    try:
        until("the first placement", lambda: replicas(fleet) == {"member1": 1, "member2": 2}, loop)
        until("the first pass logged", lambda: "full: the loop started" in pass_line(loop, "start"), loop)
        quiet(loop, state)
        before = web_files(state)
        assert before

        # a member copy changed by hand: that binding alone, its copies read one GET each
        for srv in fleet.values():
            srv.clear_request_log()
        hand_edit(fleet["member2"], 9)
        until("the hand edit undone", lambda: replicas(fleet) == {"member1": 1, "member2": 2}
              and "partial" in pass_line(loop, "member: member2 Deployment default/nginx"), loop)
        assert "partial: 1 template(s)" in pass_line(loop, "member: member2 Deployment default/nginx")
        assert not [lists_of_deployments(srv) for srv in fleet.values() if lists_of_deployments(srv)], loop.text()
        # a template edited: a partial pass of that template
        deploy = state / "apps" / "nginx.yaml"
        deploy.write_text(deploy.read_text().replace("replicas: 3", "replicas: 6"))
        until("the edit on the members", lambda: replicas(fleet) == {"member1": 2, "member2": 4}, loop)
        until("the edit's pass", lambda: pass_line(loop, "files: apps/nginx.yaml"), loop)
        assert "partial: 1 template(s)" in pass_line(loop, "files: apps/nginx.yaml"), loop.text()
        assert not [lists_of_deployments(srv) for srv in fleet.values() if lists_of_deployments(srv)], loop.text()
        quiet(loop, state)
        assert web_files(state) == before  # nothing of the other binding was written

        # a bad edit: one clear error line, the loop goes on, and the fix reaches the members
        deploy.write_text(deploy.read_text().replace("replicas: 6", 'replicas: "six"'))
        until("the error logged", lambda: "spec.replicas" in loop.text(), loop)
        deploy.write_text(deploy.read_text().replace('replicas: "six"', "replicas: 9"))
        until("the fix on the members", lambda: replicas(fleet) == {"member1": 3, "member2": 6}, loop)
        quiet(loop, state)
    finally:
        code = loop.stop()
    assert code == 143, loop.text()
    errors = [ln for ln in loop.text().splitlines() if ln.startswith("error:")]
    assert len(errors) == 1 and "apps/nginx.yaml" in errors[0], loop.text()

    # what the passes left is what a full pass computes and applies: nothing to change
    (state / ".karmactl" / "run-index.json").unlink()
    full = cli(state, "-v", "reconcile", "--offline")
    assert full.returncode == 0 and "full: no valid index" in full.stderr, full.stderr
    assert "reconciled: 0 file(s) changed" in full.stderr, full.stderr
    plan = cli(state, "plan", "--online")
    assert plan.returncode == 0, plan.stdout + plan.stderr


def test_sigterm_inside_a_partial_pass_leaves_the_state_as_before(state, fleet):
    from karmactl.continuous import ControlLoop, LoopOptions
    from karmactl.members.layer import MemberLayer
    from karmactl.store.fsio import Terminated, state_lock
    from karmactl.store.state import StateStore

    store = StateStore(state)
    layer = MemberLayer(state)
    records = []
    clock = lambda: time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())  # noqa: E731
    loop = ControlLoop(store, layer, clock, LoopOptions(resync=3600), locked=lambda: state_lock(store.root, wait=True),
                       on_pass=records.append)
    past = time.time() - 60  # files written this second would be read again (runindex: "racily clean")
    for p in state.rglob("*.yaml"):
        os.utime(p, (past, past))
    try:
        assert loop.one_pass("start", ["start"]).report.incremental == "full: the loop started"
        files = {p: p.read_bytes() for p in state.rglob("*") if p.is_file() and "events" not in p.parts
                 and p.name != "lock"}  # (the lock file names its last holder)
        deploy = state / "apps" / "nginx.yaml"
        deploy.write_text(deploy.read_text().replace("replicas: 3", "replicas: 6"))
        files[deploy] = deploy.read_bytes()
        act = layer.act

        def act_then_signal(*args, **kwargs):  # SIGTERM once the members were written, before the files
            act(*args, **kwargs)
            raise Terminated()

        layer.act = act_then_signal
        loop.on_pass = lambda rec: pytest.fail(f"the pass ended: {rec}")
        with pytest.raises(Terminated):
            loop.one_pass("files: apps/nginx.yaml", ["files: apps/nginx.yaml"])
        now = {p: p.read_bytes() for p in state.rglob("*") if p.is_file() and "events" not in p.parts
               and p.name != "lock"}
        assert {p for p in now if now[p] != files.get(p)} == set()
        assert replicas(fleet) == {"member1": 2, "member2": 4}  # what was sent before the signal stays

        # the next loop picks it up: its first pass is full, and then a full pass has nothing to do
        layer.act = act
        again = ControlLoop(store, layer, clock, LoopOptions(resync=3600),
                            locked=lambda: state_lock(store.root, wait=True), on_pass=records.append)
        assert again.one_pass("start", ["start"]).report.incremental.startswith("full")
        rb = json.loads((state / "computed" / "resourcebindings" / "default" / "nginx-deployment.json").read_text())
        assert rb["spec"]["replicas"] == 6
    finally:
        loop.close()
        layer.close()
    (state / ".karmactl" / "run-index.json").unlink()
    full = cli(state, "reconcile", "--offline")
    assert full.returncode == 0 and "reconciled: 0 file(s) changed" in full.stderr, full.stderr


def test_sigterm_inside_a_full_pass_in_its_process(state, fleet):
    """A full pass runs in a forked process: SIGTERM to the loop reaches it, the pass completes
    or rolls back, and the loop exits 143 with the state directory consistent."""
    fleet["member1"].set_hang(True, 30)  # every full pass waits a request timeout (1 s) on member1
    loop = Loop(state, "--resync", "1h")
    try:
        until("a pass running", lambda: in_pass(state), loop)
    finally:
        code = loop.stop()
        fleet["member1"].set_hang(False)
    assert code == 143, loop.text()
    assert not in_pass(state)  # the pass's process ended with the loop
    assert "interrupted" in loop.text()
    assert not (state / ".karmactl" / "journal.json").exists()
    assert not list((state / ".karmactl").glob("staging*"))
    again = cli(state, "reconcile", "--offline")
    assert again.returncode == 0, again.stderr
