"""`karmactl plan --online`: the member copies a run would change, diffed per cluster, nothing sent."""
from __future__ import annotations

import json
from pathlib import Path

import jsonschema

from .conftest import MANIFESTS, binding_ready, reconcile_until

SCHEMA = Path(__file__).resolve().parents[2] / "karmactl" / "cli" / "schemas" / "plan-v1.json"

MEMBER_HEADER = "member{n}/apps/v1, Kind=Deployment default/nginx"


def test_online_plan_diffs_member_copies_and_sends_nothing(state, cli, members, member_layer, tmp_path):
    servers = [members.start("member1"), members.start("member2")]
    cli.ok("apply", "-f", str(MANIFESTS / "nginx"))
    reconcile_until(cli, lambda: binding_ready(state, "default", "nginx-deployment"))
    assert cli("plan", "--online")[:2] == (0, "")

    changed = tmp_path / "deployment.yaml"
    changed.write_text((MANIFESTS / "nginx" / "deployment.yaml").read_text().replace("image: nginx\n", "image: nginx:1.1\n"))
    cli.ok("apply", "-f", str(changed))
    versions = [srv.get_object("apps/v1", "Deployment", "default", "nginx")["metadata"]["resourceVersion"]
                for srv in servers]
    code, out, _err = cli("plan", "--online")
    assert code == 1
    for n in (1, 2):
        member = out[out.index(f"--- {MEMBER_HEADER.format(n=n)}\n+++ {MEMBER_HEADER.format(n=n)}\n"):]
        diff = member.split("\n--- ", 1)[0]
        # (the member defaults imagePullPolicy from the tag, so that line may change between the two)
        assert "\n-      - image: nginx\n" in diff and "\n+      - image: nginx:1.1\n" in diff
    assert "resourceVersion" not in out.split("--- member1/", 1)[1]
    # the summary has a row per member copy, and -o json holds them as the schema says
    assert any(line.split()[:4] == ["update", "Deployment", "default/nginx", f"member{n}"] and
               "image nginx → nginx:1.1" in line for n in (1, 2) for line in out.splitlines())
    doc = json.loads(cli("plan", "--online", "-o", "json")[1])
    jsonschema.validate(doc, json.loads(SCHEMA.read_text()), cls=jsonschema.Draft202012Validator)
    assert sorted(c["clusters"] for c in doc["changes"] if c["scope"] == "member") == [["member1"], ["member2"]]
    # the members were asked what they would store (server-side dry run), nothing was changed
    assert [srv.get_object("apps/v1", "Deployment", "default", "nginx")["metadata"]["resourceVersion"]
            for srv in servers] == versions

    code, offline, _err = cli("plan")
    assert code == 1 and "--- member" not in offline and "+            - image: nginx:1.1\n" in offline
