"""``karmactl fleet``: the terminal view and ``-o json`` carry the numbers ``get`` prints, and the HTML page,
rendered in a real headless browser (Debian's chromium driven by Playwright), shows them too, with no
request to anything, for 0, 1 and 500 workloads."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import cluster_yaml, write

CHROMIUM = os.environ.get("KARMACTL_CHROMIUM", "/usr/bin/chromium")
LAUNCH_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--no-first-run"]

POLICY = """\
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: all}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
  placement:
    clusterAffinity: {clusterNames: [member1, member2, member3]}
    replicaScheduling: {replicaSchedulingType: Divided, replicaDivisionPreference: Weighted}
"""


def _deployments(n: int) -> str:
    return "---\n".join(f"""\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: app-{i:03d}, labels: {{tier: t{i % 3}}}}}
spec:
  replicas: {i % 5 + 1}
  selector: {{matchLabels: {{app: a{i}}}}}
  template:
    metadata: {{labels: {{app: a{i}}}}}
    spec: {{containers: [{{name: c, image: "img:{i}"}}]}}
""" for i in range(n))


def _fleet_state(cli, state: Path, n: int) -> None:
    for i in (1, 2, 3):
        write(state / f"member{i}.yaml", cluster_yaml(f"member{i}"))
    if n:
        (state / "policy.yaml").write_text(POLICY)
        (state / "apps.yaml").write_text(_deployments(n))
    cli.ok("reconcile", "--offline")


def _get_numbers(cli) -> dict:
    """What ``get`` prints: READY of each Deployment, and each binding's replicas per cluster."""
    ready = {line.split()[0]: line.split()[1] for line in cli.ok("get", "deploy").splitlines()[1:]}
    cells = {}
    for rb in json.loads(cli.ok("get", "rb", "-o", "json"))["items"]:
        name = rb["spec"]["resource"]["name"]
        cells[name] = {t["name"]: t["replicas"] for t in rb["spec"].get("clusters") or []}
    return {"ready": ready, "cells": cells}


def test_terminal_view_and_json_carry_gets_numbers(cli, state):
    _fleet_state(cli, state, 3)
    numbers = _get_numbers(cli)
    lines = cli.ok("fleet").splitlines()
    matrix = [line.split() for line in lines[lines.index("") + 1:]]
    assert matrix[0] == ["WORKLOAD", "READY", "HEALTH", "member1", "member2", "member3"]
    for row in matrix[1:]:
        name = row[0].removeprefix("deployment/")
        assert row[1] == numbers["ready"][name]
        placed = {c: cell for c, cell in zip(("member1", "member2", "member3"), row[3:]) if cell != "-"}
        assert {c: int(cell.split("/")[1]) for c, cell in placed.items()} == numbers["cells"][name]
    data = json.loads(cli.ok("fleet", "-o", "json"))
    assert [w["name"] for w in data["workloads"]] == ["app-000", "app-001", "app-002"]
    assert {w["name"]: {c: v["replicas"] for c, v in w["clusters"].items()} for w in data["workloads"]} == numbers["cells"]
    assert data["workloads"][0]["policy"] == {"kind": "PropagationPolicy", "namespace": "default", "name": "all"}
    assert [c["name"] for c in data["clusters"]] == ["member1", "member2", "member3"]
    # a cluster-scoped workload (a ClusterResourceBinding) shows in every namespace's view
    write(state / "shop.yaml", """\
        apiVersion: v1
        kind: Namespace
        metadata: {name: shop}
        ---
        apiVersion: policy.karmada.io/v1alpha1
        kind: ClusterPropagationPolicy
        metadata: {name: shop}
        spec:
          resourceSelectors: [{apiVersion: v1, kind: Namespace, name: shop}]
          placement: {clusterAffinity: {clusterNames: [member2]}}
        """)
    cli.ok("reconcile", "--offline")
    rows = json.loads(cli.ok("fleet", "-o", "json", "-n", "other"))["workloads"]
    assert [(w["kind"], w["name"], w["namespace"], list(w["clusters"])) for w in rows] == [("Namespace", "shop", "", ["member2"])]
    code, _out, err = cli("fleet", "-o", "yaml")
    assert code == 2 and "allowed formats are: json" in err
    code, _out, err = cli("fleet", "--workload", "deploy/absent", "--html", str(state / "x.html"))
    assert code == 2 and "deploy/absent has no binding" in err


# ---------------------------------------------------------------------------- the page in a browser
@pytest.fixture(scope="module")
def browser():
    """Headless chromium (Debian's, not Playwright's download); the tests skip where there is none, except
    where ``KARMACTL_REQUIRE_BROWSER=1`` (.ci/run sets it when chromium is installed)."""
    required = os.environ.get("KARMACTL_REQUIRE_BROWSER") == "1"
    try:
        import playwright.sync_api as playwright
    except ImportError:
        if required:
            pytest.fail("playwright is not installed (pip install -e '.[test]')", pytrace=False)
        pytest.skip("playwright not installed (pip install -e '.[test]')")
    if not os.path.exists(CHROMIUM):
        if required:
            pytest.fail(f"no chromium at {CHROMIUM}", pytrace=False)
        pytest.skip(f"no chromium at {CHROMIUM} (apt-get install chromium)")
    with playwright.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        try:
            yield b
        finally:
            b.close()


def _open(browser, path: Path):
    """The page, with every request other than the file itself recorded (and refused) and script errors kept."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    requests, errors = [], []
    url = path.resolve().as_uri()

    def route(r):
        if r.request.url == url:
            r.continue_()
        else:
            requests.append(r.request.url)
            r.abort()
    page.route("**/*", route)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.goto(url)
    return page, requests, errors


def test_page_with_no_workload(cli, state, browser, tmp_path):
    _fleet_state(cli, state, 0)
    out = tmp_path / "fleet.html"
    assert cli.ok("fleet", "--html", str(out)) == f"wrote {out}\n"
    page, requests, errors = _open(browser, out)
    assert page.inner_text("#count-workloads") == "0 workloads"
    assert page.inner_text("#count-clusters") == "3 clusters"
    assert page.is_visible("#no-workloads") and page.is_visible("#no-tree")
    assert requests == [] and errors == []
    page.close()


def test_page_with_one_workload_its_tree_and_failover_timeline(cli, state, browser, tmp_path):
    _fleet_state(cli, state, 1)
    cli.ok("--now", "2026-01-01T00:00:00Z", "taint", "clusters", "member1", "maintenance=true:NoExecute")
    cli.ok("reconcile", "--offline")
    out = tmp_path / "fleet.html"
    cli.ok("fleet", "--html", str(out), "--workload", "deploy/app-000")
    page, requests, errors = _open(browser, out)
    numbers = _get_numbers(cli)
    row = page.locator("#matrix tbody tr")
    assert row.count() == 1
    assert row.locator("td.ready").inner_text() == numbers["ready"]["app-000"]
    shown = {c: row.locator(f'td[data-cluster="{c}"]').inner_text() for c in ("member1", "member2", "member3")}
    assert {c: int(v.split("/")[1]) for c, v in shown.items() if v != "-"} == numbers["cells"]["app-000"]
    assert "maintenance=true:NoExecute" in page.inner_text('#matrix th[data-cluster="member1"]')
    # the timeline lists the Events `get events` lists, Warnings drawn red on the axis
    events = cli.ok("get", "events", "-A").splitlines()[1:]
    assert page.locator("#events tbody tr").count() == len(events) > 0
    assert page.locator("#timeline circle").count() == len(events)
    reasons = {line.split()[3] for line in events}
    assert {page.locator("#events tbody tr td:nth-child(3)").nth(i).inner_text()
            for i in range(len(events))} == reasons
    # the tree: policy -> template -> binding -> Works (one per placed cluster) -> member object
    tree = page.inner_text("#tree")
    for text in ("PropagationPolicy", "default/all", "Deployment", "default/app-000", "ResourceBinding",
                 "default/app-000-deployment"):
        assert text in tree
    # every Work of the binding (the one kept on the tainted cluster until graceful eviction ends included)
    works = [line.split()[:2] for line in cli.ok("get", "works", "-A").splitlines()[1:] if "app-000" in line]
    shown = [page.locator("#tree .node", has_text=f"{ns}/{name}").count() for ns, name in works]
    assert shown == [1] * len(works) and len(works) >= len(numbers["cells"]["app-000"])
    assert requests == [] and errors == []
    page.close()


def test_page_with_500_workloads_shows_gets_numbers(cli, state, browser, tmp_path):
    _fleet_state(cli, state, 500)
    out = tmp_path / "fleet.html"
    cli.ok("fleet", "--html", str(out), "--workload", "deploy/app-250")
    page, requests, errors = _open(browser, out)
    numbers = _get_numbers(cli)
    assert page.inner_text("#count-workloads") == "500 workloads"
    table = page.eval_on_selector_all("#matrix tbody tr", """rows => rows.map(r => [
        r.querySelector('td.workload').textContent, r.querySelector('td.ready').textContent,
        Object.fromEntries([...r.querySelectorAll('td.cell')].map(td => [td.dataset.cluster, td.textContent]))])""")
    assert len(table) == 500
    for name, ready, cells in table:
        name = name.removeprefix("deployment/")
        assert ready == numbers["ready"][name]
        assert {c: int(v.split("/")[1]) for c, v in cells.items() if v != "-"} == numbers["cells"][name]
    assert "default/app-250" in page.inner_text("#tree")
    # choosing another workload draws its tree from the embedded data; the filter hides the other rows
    page.select_option("#workload", index=7)
    assert "default/app-007" in page.inner_text("#tree") and "default/app-250" not in page.inner_text("#tree")
    page.fill("#filter", "app-49")
    assert page.locator("#matrix tbody tr:visible").count() == 10
    if os.environ.get("KARMACTL_FLEET_SCREENSHOT"):
        page.screenshot(path=os.environ["KARMACTL_FLEET_SCREENSHOT"], full_page=False)
    assert requests == [] and errors == []
    page.close()
