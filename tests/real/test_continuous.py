"""The continuous loop (``karmactl reconcile --watch``, issue 25) against real kube-apiservers: the
loop runs as its own process on the wall clock (thresholds of 2 s), a template is edited while it
runs, member2's API server stops answering (SIGSTOP) and its replicas move to member1 with no command
run, then it comes back (SIGCONT) and is Ready again; SIGTERM ends the loop with 143."""
from __future__ import annotations

import json

from tests.continuous.test_watch import Loop, until

from .conftest import MANIFESTS, replicas, sample, settings


def _ready(state, name: str) -> str:
    path = state / "computed" / "status" / "clusters.cluster.karmada.io" / f"{name}.json"
    if not path.exists():
        return ""
    conds = (json.loads(path.read_text()).get("status") or {}).get("conditions") or []
    return next((c["status"] for c in conds if c["type"] == "Ready"), "")


def test_watch_fails_over_a_stopped_real_member_and_takes_it_back(cli, state, joined, ns, tmp_path):
    m1, m2 = joined["member1"], joined["member2"]
    src = sample(MANIFESTS / "nginx", ns, tmp_path / "in")
    settings(src / "settings.yaml", memberRequestTimeout="2s", clusterFailureThreshold="2s",
             clusterSuccessThreshold="2s", clusterStatusUpdateFrequency="1s")
    cli.ok("apply", "-f", str(src))
    loop = Loop(state, "--resync", "1h")
    try:
        until("the first placement (1:2)", lambda: (replicas(m1, ns, "nginx"), replicas(m2, ns, "nginx")) == (1, 2),
              loop)
        deploy = next(p for p in state.rglob("*.yaml") if p.read_text().lstrip().startswith("apiVersion: apps/v1"))
        deploy.write_text(deploy.read_text().replace("replicas: 3", "replicas: 6"))
        until("the edit on the members (2:4)", lambda: (replicas(m1, ns, "nginx"), replicas(m2, ns, "nginx")) == (2, 4),
              loop)
        m2.pause()
        try:
            until("every replica on member1", lambda: replicas(m1, ns, "nginx") == 6, loop, limit=120)
            until("member2 NotReady in the files", lambda: _ready(state, "member2") == "False", loop)
        finally:
            m2.unpause()
        until("member2 Ready again", lambda: _ready(state, "member2") == "True", loop, limit=120)
    finally:
        code = loop.stop()
    assert code == 143, loop.text()
    assert "evicted" in loop.text() and "cluster status: member2" in loop.text()
