"""``karmactl fleet --html`` in a real headless browser (Debian's chromium through Playwright): the
page renders without console errors or requests, the numbers it shows equal ``karmactl get rb -o
json``'s, a workload's tree shows its Works and clusters, markup from the state directory stays
text, and it works with 0, 1 and 500 workloads. One browser for the module."""
from __future__ import annotations

import json
import os

import pytest

from karmactl.cli.main import main_exit_code
from tests.browser import pages
from tests.fleet_scenario import HOSTILE, LAST, clusters, hostile_fleet, karmactl, many_workloads, small_fleet_once


@pytest.fixture(scope="module")
def browser():
    reason = pages.unavailable_reason()
    if reason is not None:
        if os.environ.get("KARMACTL_REQUIRE_BROWSER") == "1":
            pytest.fail(f"KARMACTL_REQUIRE_BROWSER=1 but {reason}", pytrace=False)
        pytest.skip(reason)
    with pages.browser() as b:
        yield b


class Opened:
    """A page opened from a file, with what it logged and requested."""

    def __init__(self, browser, path):
        self.context = browser.new_context(viewport={"width": 1200, "height": 900})
        self.page = self.context.new_page()
        self.errors, self.requests, self.dialogs = [], [], []
        self.page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        self.page.on("pageerror", lambda exc: self.errors.append(str(exc)))
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))
        self.url = path.resolve().as_uri()
        self.page.goto(self.url)

    def check_clean(self):
        assert self.errors == [] and self.dialogs == []
        assert self.requests == [self.url]  # nothing but the page itself

    def matrix(self) -> dict:
        """``{workload: {cluster: (numbers, health)}}`` as the matrix shows them (visible text)."""
        rows = self.page.eval_on_selector_all("table.matrix tbody tr", """rows => rows.map(r => [
            r.dataset.workload,
            Array.from(r.querySelectorAll('td.cell')).map(td => [td.dataset.cluster,
                td.querySelector('.num').innerText, td.querySelector('.health').innerText])])""")
        return {w: {c: (num, health) for c, num, health in cells} for w, cells in rows}


def html_of(state, out, *args) -> None:
    assert main_exit_code(["--state", str(state), "--now", LAST, "fleet", "--html", str(out), *args]) == 0


def get_json(state, capsys, *args) -> dict:
    capsys.readouterr()
    assert main_exit_code(["--state", str(state), "get", *args, "-o", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def expected_matrix(bindings: dict) -> dict:
    """What the matrix must show, from ``get rb -o json``: per template and cluster,
    ``readyReplicas/replicas`` of aggregatedStatus and spec.clusters, and the health."""
    out = {}
    for b in bindings["items"]:
        res = b["spec"]["resource"]
        zero = 0 if b["spec"].get("replicas") is not None else None  # Kubernetes omits zero counts
        desired = {c["name"]: c.get("replicas", zero) for c in b["spec"].get("clusters") or []}
        cells = {}
        for item in b["status"].get("aggregatedStatus") or []:
            want = desired.get(item["clusterName"])
            ready = None if item.get("status") is None else item["status"].get("readyReplicas", zero)
            nums = "" if want is None and ready is None else f"{'?' if ready is None else ready}/{want}"
            cells[item["clusterName"]] = (nums, item["health"])
        out[f"{res['kind']}/{res['namespace']}/{res['name']}"] = cells
    return out


def test_small_fleet_page_shows_what_get_shows(browser, tmp_path_factory, tmp_path, capsys):
    state = small_fleet_once(tmp_path_factory)
    html_of(state, tmp_path / "fleet.html", "-n", "shop")
    opened = Opened(browser, tmp_path / "fleet.html")
    page = opened.page
    opened.check_clean()
    assert opened.matrix() == expected_matrix(get_json(state, capsys, "rb", "-n", "shop"))
    heads = page.eval_on_selector_all("table.matrix th.cluster", "hs => hs.map(h => h.innerText.split('\\n'))")
    assert heads[1][:2] == ["member2", "NotReady"] and "cluster.karmada.io/not-ready:NoExecute" in heads[1]
    assert [h[:2] for h in (heads[0], heads[2])] == [["member1", "Ready"], ["member3", "Ready"]]
    # the failover timeline: taint, eviction, rescheduling, the Ready change
    timeline = page.inner_text("#timeline")
    for text in ("ClusterNotReady", "TaintClusterSucceed", "EvictWorkloadFromClusterSucceed",
                 "Result: {member1:3, member3:3}"):
        assert text in timeline
    # the tree of web: closed until its row's link is followed (which opens it), then its Works and clusters
    tree = page.locator('details.tree[data-workload="Deployment/shop/web"]')
    assert not tree.locator("li.work").first.is_visible()
    page.click('tr[data-workload="Deployment/shop/web"] a')
    works = tree.locator("li.work")
    assert works.count() == 3 and all(works.nth(i).is_visible() for i in range(3))
    texts = [works.nth(i).inner_text() for i in range(3)]
    assert [t.split(" on ")[1].split()[0] for t in texts] == ["member1", "member2", "member3"]
    assert "terminating" in texts[1] and "PropagationPolicy" in tree.inner_text()
    # the filter
    page.fill("#filter", "cart")
    assert page.locator("table.matrix tbody tr:visible").count() == 1
    assert page.inner_text(".count") == "1 of 4 shown"
    opened.check_clean()
    opened.context.close()


def test_markup_in_the_state_directory_stays_text(browser, state, tmp_path):
    hostile_fleet(state, tmp_path)
    html_of(state, tmp_path / "page.html")
    opened = Opened(browser, tmp_path / "page.html")
    opened.check_clean()
    assert opened.page.evaluate("typeof window.__pwned") == "undefined"
    assert opened.page.locator("img").count() == 0 and opened.page.locator("script").count() == 1
    assert HOSTILE in opened.page.get_attribute("th.cluster", "title")
    assert HOSTILE in opened.page.inner_text("#timeline")  # the Ready condition's message
    assert opened.page.inner_text("li.member").startswith("Deployment default/web health ")
    opened.context.close()


def test_no_workload_and_one_workload(browser, state, tmp_path, capsys):
    clusters(state, ("member1", "member2"))
    karmactl(state, "reconcile", "--offline", "--now", LAST)
    html_of(state, tmp_path / "empty.html")
    opened = Opened(browser, tmp_path / "empty.html")
    opened.check_clean()
    assert opened.page.locator("table.matrix tbody tr").count() == 0
    assert "No resource template has a binding here." in opened.page.inner_text("#matrix")
    assert opened.page.locator("th.cluster").count() == 2
    opened.context.close()

    (state / "cm.yaml").write_text("""apiVersion: v1
kind: ConfigMap
metadata: {name: one, namespace: default}
data: {a: b}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: one, namespace: default}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, name: one}]
  placement: {clusterAffinity: {clusterNames: [member2]}}
""")
    karmactl(state, "reconcile", "--offline", "--now", LAST)
    html_of(state, tmp_path / "one.html")
    opened = Opened(browser, tmp_path / "one.html")
    opened.check_clean()
    assert opened.matrix() == expected_matrix(get_json(state, capsys, "rb")) == {
        "ConfigMap/default/one": {"member2": ("", "Unknown")}}
    works = opened.page.locator("details.tree li.work")  # a single tree is open
    assert works.count() == 1 and works.first.is_visible() and "on member2" in works.first.inner_text()
    opened.context.close()


def test_five_hundred_workloads(browser, state, tmp_path, capsys):
    many_workloads(state, 500)
    html_of(state, tmp_path / "big.html", "-n", "bulk")
    opened = Opened(browser, tmp_path / "big.html")
    opened.check_clean()
    shown = opened.matrix()
    assert len(shown) == 500 and shown == expected_matrix(get_json(state, capsys, "rb", "-n", "bulk"))
    assert opened.page.locator("details.tree").count() == 500
    opened.page.fill("#filter", "app-0499")
    assert opened.page.locator("table.matrix tbody tr:visible").count() == 1
    opened.context.close()
