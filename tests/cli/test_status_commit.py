"""Status worth committing (issue 28, item 4): what a run writes under computed/ is what a reviewer
reads in ``git log -p``: a condition, a cluster's aggregated status, an Event, a group version of a
member's apiEnablements each one line; every reader still gets the whole object."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import yaml

from tests.e2e.conftest import members  # noqa: F401 - the fixture

MANIFESTS = Path(__file__).resolve().parents[2] / "manifests"


def _lines(state: Path) -> int:
    return sum(len(p.read_text().splitlines()) for p in (state / "computed").rglob("*.json"))


def test_first_status_commit_of_the_nginx_sample_is_compact_and_reads_back_whole(cli, state, members):  # noqa: F811
    shutil.copytree(MANIFESTS / "nginx", state / "nginx")
    for name in ("member1", "member2"):
        members.start(name)
    code, _out, err = cli("reconcile", "--wait", "--timeout", "60s")
    assert code == 0, err
    assert _lines(state) < 500, _lines(state)  # 1,260 lines before (256 per Cluster, 146 in one Event file)

    text = (state / "computed" / "status" / "clusters.cluster.karmada.io" / "member1.json").read_text()
    stored = json.loads(text)["status"]["apiEnablements"]
    lines = [ln.strip().rstrip(",") for ln in text.splitlines()]
    assert [json.loads(ln) for ln in lines if ln.startswith('{"groupVersion":')] == stored  # one line each
    shown = yaml.safe_load(cli.ok("get", "clusters", "member1", "-o", "yaml"))["status"]
    assert shown["apiEnablements"] == stored and any(e["groupVersion"] == "apps/v1" and
                                                     {"name": "deployments", "kind": "Deployment"} in e["resources"]
                                                     for e in shown["apiEnablements"])
    assert [c["type"] for c in shown["conditions"]] and '"conditions": [\n      {"type":' in text

    binding = (state / "computed" / "resourcebindings" / "default" / "nginx-deployment.json").read_text()
    assert '"aggregatedStatus": [\n      {"clusterName":"member1",' in binding
    for events in (state / "computed" / "events").rglob("*.json"):
        items = json.loads(events.read_text())["items"]
        assert len(events.read_text().splitlines()) == len(items) + 6  # 4 lines of head, 2 of tail: one line per Event
    code, out, err = cli("get", "events", "-A")
    assert code == 0 and "ScheduleBindingSucceed" in out
    # readers of the compact files: the next run has nothing to do, and the plan nothing to show
    assert "reconciled: 0 file(s) changed" in cli("reconcile")[2]
    assert cli("plan", "--online")[:2] == (0, "")
