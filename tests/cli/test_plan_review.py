"""A plan a reviewer reads in ten seconds (issue 28, item 3): a summary first, diffs without
bookkeeping, ``-o json`` valid against its published schema, ``-o markdown`` for a merge-request
comment, the same summary after ``reconcile``, and CI annotations on the line of invalid input."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import jsonschema
import pytest

from tests.conftest import cluster_yaml, write

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "karmactl" / "cli" / "schemas" / "plan-v1.json"


@pytest.fixture
def scaled(cli, state) -> Path:
    """The nginx sample on two Ready members, reconciled offline, then scaled 3 -> 6 (not reconciled)."""
    shutil.copytree(ROOT / "manifests" / "nginx", state / "nginx")
    for name in ("member1", "member2"):
        write(state / "clusters" / f"{name}.yaml", cluster_yaml(name))
    cli.ok("reconcile", "--offline")
    deploy = state / "nginx" / "deployment.yaml"
    deploy.write_text(deploy.read_text().replace("replicas: 3", "replicas: 6"))
    return deploy


def test_plan_summary_of_the_nginx_scale_fits_in_ten_lines(cli, scaled):
    code, out, err = cli("plan")
    assert code == 1, err
    summary = out.split("\n\n", 1)[0].splitlines()
    assert len(summary) <= 10, out
    assert summary[0].split() == ["ACTION", "KIND", "NAME", "CLUSTER", "CHANGES"]
    rows = {tuple(line.split()[:4]): line for line in summary[1:-1]}
    assert "replicas 3 → 6; member1 1 → 2, member2 2 → 4" in rows[
        ("update", "ResourceBinding", "default/nginx-deployment", "member1,member2")]
    assert "replicas 1 → 2" in rows[("update", "Work", "karmada-es-member1/nginx-687f7fb96f", "member1")]
    assert "replicas 2 → 4" in rows[("update", "Work", "karmada-es-member2/nginx-687f7fb96f", "member2")]
    assert summary[-1].startswith("Plan: 0 to create, 3 to update, 0 to delete")
    # the diffs follow, without bookkeeping; --show-managed keeps it
    diffs = out.split("\n\n", 1)[1]
    assert "+    replicas: 4" in diffs and "+  replicas: 6" in diffs
    for noise in ("generation:", "resourceVersion:", "lastScheduledTime:", "specHash:", "managed-annotations:"):
        assert noise not in diffs, noise
    code, managed, _ = cli("plan", "--show-managed")
    assert code == 1 and "specHash:" in managed and "+  generation: 2" in managed and "lastScheduledTime" in managed


def test_plan_json_validates_against_its_schema(cli, scaled):
    schema = json.loads(SCHEMA.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    code, out, err = cli("plan", "-o", "json")
    assert code == 1, err
    doc = json.loads(out)
    jsonschema.validate(doc, schema, cls=jsonschema.Draft202012Validator)
    assert doc["apiVersion"] == "plan.karmactl.io/v1" and doc["counts"]["update"] == 3
    binding = next(c for c in doc["changes"] if c["kind"] == "ResourceBinding")
    assert {"path": "spec.replicas", "before": 3, "after": 6} in binding["fields"]
    assert binding["file"] == "computed/resourcebindings/default/nginx-deployment.json"
    # nothing to do: still a valid document, exit 0
    cli.ok("reconcile", "--offline")
    code, out, _ = cli("plan", "-o", "json")
    assert code == 0
    jsonschema.validate(json.loads(out), schema, cls=jsonschema.Draft202012Validator)
    assert json.loads(out)["changes"] == []


def test_plan_markdown_is_a_merge_request_comment(cli, scaled):
    code, out, _ = cli("plan", "-o", "markdown")
    assert code == 1
    assert out.startswith("### karmactl plan: 0 to create, 3 to update, 0 to delete\n")
    assert "| update | ResourceBinding | default/nginx-deployment | member1, member2 | replicas 3 → 6; " in out
    assert "<details><summary>Diffs of 3 object(s)</summary>" in out and "```diff\n" in out
    assert out.rstrip().endswith("</details>")


def test_reconcile_prints_the_summary_of_what_it_changed(cli, scaled):
    code, _out, err = cli("reconcile", "--offline")
    assert code == 0, err
    assert "ResourceBinding" in err and "replicas 3 → 6; member1 1 → 2, member2 2 → 4" in err
    assert "Changed: 0 created, 3 updated, 0 deleted" in err
    code, _out, err = cli("reconcile", "--offline")
    assert code == 0 and "ACTION" not in err and "Changed:" not in err  # nothing changed, no table


def test_invalid_input_as_github_and_gitlab_annotations_on_the_fields_line(cli, state, scaled, tmp_path, monkeypatch):
    monkeypatch.chdir(state.parent)  # the repository's root, as in a CI job
    scaled.write_text(scaled.read_text().replace("replicas: 6", 'replicas: "six"'))
    line = next(i for i, text in enumerate(scaled.read_text().splitlines(), 1) if '"six"' in text)
    assert line > 3  # the document starts at line 1: the field's line is another
    code, out, err = cli("plan", "--annotations", "github")
    assert code == 2 and "spec.replicas" in err
    assert out.splitlines() == [f"::error file=state/nginx/deployment.yaml,line={line},title=karmactl::"
                                "Deployment default/nginx: spec.replicas: cannot unmarshal string into Go value of type int32"]
    report = tmp_path / "cq.json"
    code, out, _ = cli("plan", "--annotations", "gitlab", "--annotations-file", str(report), "-o", "markdown")
    assert code == 2 and out.startswith("### karmactl plan: invalid input\n")
    [issue] = json.loads(report.read_text())
    assert issue["location"] == {"path": "state/nginx/deployment.yaml", "lines": {"begin": line}}
    assert issue["severity"] == "major" and "spec.replicas" in issue["description"] and issue["fingerprint"]
    scaled.write_text(scaled.read_text().replace('replicas: "six"', "replicas: 6"))
    code, _out, _ = cli("plan", "--annotations", "gitlab", "--annotations-file", str(report))
    assert code == 1 and json.loads(report.read_text()) == []  # fixed: the widget clears


def test_markdown_escapes_the_merge_requests_text(cli, scaled):
    scaled.write_text(scaled.read_text().replace("image: nginx", 'image: "nginx:<b>|@all```"'))
    code, out, _ = cli("plan", "-o", "markdown")
    assert code == 1
    row = next(line for line in out.splitlines() if line.startswith("| update | Work | karmada-es-member1/"))
    assert "image nginx → nginx:&lt;b&gt;\\|&#64;all'''" in row
    head, diffs = out.split("<details>", 1)
    assert "<b>" not in head and "@all" not in head
    assert "\n````diff\n" in diffs and diffs.rstrip().endswith("````\n</details>")  # a fence longer than ```
