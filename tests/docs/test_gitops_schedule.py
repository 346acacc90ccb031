"""The scheduled pipeline of docs/gitops.md (issue 25): with a member down, each scheduled job on a
fresh clone commits its observations (exit 3 included), so the next job continues the failure clock
and the workload moves off the dead member within two scheduled runs; a job whose commit is no
longer the branch tip applies nothing."""
from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from karmactl.emulator import MemberServer

from tests.docs.test_gitops import SCRIPT, _ci_checkout, _git, _run, dev_repository

SETTINGS = """apiVersion: v1
kind: ConfigMap
metadata: {name: karmactl-config, namespace: karmada-system}
data:
  clusterFailureThreshold: 8s
  clusterSuccessThreshold: 8s
  memberRequestTimeout: 1s
"""


@pytest.fixture
def two_members(tmp_path):
    servers = [MemberServer(name=f"member{i}", port=0, fake_controller=True, fake_delay=0.05, nodes=3).start()
               for i in (1, 2)]
    yield servers
    for srv in servers:
        srv.close()


def _replicas(srv) -> int | None:
    d = srv.get_object("apps/v1", "Deployment", "default", "nginx")
    return None if d is None else d["spec"]["replicas"]


def _ready_record(clone: Path, name: str) -> dict:
    path = clone / "state" / "computed" / "status" / "clusters.cluster.karmada.io" / f"{name}.json"
    return json.loads(path.read_text())


def test_scheduled_runs_fail_over_a_dead_member_and_a_stale_job_applies_nothing(tmp_path, two_members):
    m1, m2 = two_members
    origin, dev = dev_repository(tmp_path, two_members, {"settings.yaml": SETTINGS})
    _git(dev, "add", "-A")
    _git(dev, "commit", "-q", "-m", "nginx on member1 and member2, short thresholds")
    _git(dev, "push", "-q", "origin", "main")

    assert "karmactl-ci: committed" in _run([str(SCRIPT), "apply"], _ci_checkout(origin, tmp_path / "ci1", "main",
                                                                                  two_members)).stdout
    assert (_replicas(m1), _replicas(m2)) == (1, 2)

    # member2 dies; the first scheduled job sees it fail, exits 3 (or 4: not settled in its time),
    # and still commits what it observed: the first failure time
    m2.stop()
    ci2 = _ci_checkout(origin, tmp_path / "ci2", "main", two_members)
    # (the job reconciles for about KARMACTL_TIMEOUT, far less than the 8 s threshold)
    first = _run([str(SCRIPT), "apply"], ci2, check=False, KARMACTL_TIMEOUT="1s")
    assert first.returncode in (3, 4), first.stderr
    assert "karmactl-ci: committed" in first.stdout, first.stdout + first.stderr
    record = _ready_record(ci2, "member2")["observed"]["readyThreshold"]
    assert record["lastObservedStatus"] == "False" and record["since"], "the failure clock was not committed"
    assert _replicas(m1) == 1

    # the next scheduled job, on a fresh clone after the threshold: the clock continues from git,
    # member2 goes NotReady, is tainted, and its replicas run on member1
    time.sleep(8.5)
    ci3 = _ci_checkout(origin, tmp_path / "ci3", "main", two_members)
    second = _run([str(SCRIPT), "apply"], ci3, check=False, KARMACTL_TIMEOUT="1s")
    assert second.returncode in (3, 4), second.stderr
    assert _replicas(m1) == 3, second.stderr
    assert "evicted default/nginx-deployment from member2" in second.stderr
    conds = {c["type"]: c["status"] for c in _ready_record(ci3, "member2")["status"]["conditions"]}
    assert conds["Ready"] == "False"

    # a job that started on a commit which is no longer the tip applies nothing
    stale = _ci_checkout(origin, tmp_path / "stale", "main", two_members)
    _git(dev, "pull", "-q", "origin", "main")
    deploy = dev / "state" / "nginx" / "deployment.yaml"
    deploy.write_text(deploy.read_text().replace("replicas: 3", "replicas: 5"))
    _git(dev, "commit", "-q", "-am", "nginx: 5 replicas")
    _git(dev, "push", "-q", "origin", "main")
    m1.clear_request_log()
    out = _run([str(SCRIPT), "apply"], stale).stdout
    assert "is no longer the tip of main" in out and "nothing applied" in out
    assert not [e for e in m1.request_log if e["method"] in ("POST", "PUT", "PATCH", "DELETE")]
    assert _replicas(m1) == 3
