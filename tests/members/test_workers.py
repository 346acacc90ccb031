"""Several requests in flight per member (``memberWorkers``): every write lands, the order that
matters holds (Namespaces, then CRDs, then the rest; deletions the other way round), and the knobs
reach the member client. Against emulated members over real HTTP."""
from __future__ import annotations

import pytest

from tests.conftest import write

from .conftest import reconcile

T0 = "2026-01-01T00:00:00Z"


# ------------------------------------------------------------------------------------ the plan


def work_of(name: str, manifest: dict, terminating: bool = False, cluster: str = "m1") -> dict:
    """A Work ``name`` in ``karmada-es-<cluster>`` carrying ``manifest`` (terminating when asked)."""
    md = {"name": name, "namespace": f"karmada-es-{cluster}"}
    if terminating:
        md["deletionTimestamp"] = T0
    return {"apiVersion": "work.karmada.io/v1alpha1", "kind": "Work", "metadata": md,
            "spec": {"workload": {"manifests": [manifest]}}}


def managed(api_version: str, kind: str, name: str, ns: str | None = None, **extra) -> dict:
    """A manifest labelled as Karmada labels what it propagates (``karmada.io/managed``)."""
    md = {"name": name, "labels": {"karmada.io/managed": "true"}}
    if ns:
        md["namespace"] = ns
    return {"apiVersion": api_version, "kind": kind, "metadata": md, **extra}


CRD = managed("apiextensions.k8s.io/v1", "CustomResourceDefinition", "widgets.example.com", spec={
    "group": "example.com", "scope": "Namespaced",
    "names": {"kind": "Widget", "plural": "widgets", "singular": "widget", "listKind": "WidgetList"},
    "versions": [{"name": "v1", "served": True, "storage": True,
                  "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]})


def _keys(name: str) -> tuple:
    return ("work.karmada.io", "Work", "karmada-es-m1", name)


def test_phases_apply_namespaces_then_crds_then_the_rest_and_delete_the_other_way_round():
    from karmactl.members.executing import act_phases

    works = {_keys(w["metadata"]["name"]): w for w in (
        work_of("cm-a", managed("v1", "ConfigMap", "a", "shop")),
        work_of("widget", managed("example.com/v1", "Widget", "w", "shop")),
        work_of("ns-shop", managed("v1", "Namespace", "shop")),
        work_of("crd", CRD),
        work_of("cm-b", managed("v1", "ConfigMap", "b", "shop")),
        work_of("old-ns", managed("v1", "Namespace", "old"), terminating=True),
        work_of("old-crd", managed("apiextensions.k8s.io/v1", "CustomResourceDefinition", "gadgets.example.com"),
              terminating=True),
        work_of("old-cm", managed("v1", "ConfigMap", "c", "old"), terminating=True),
        # a terminating Work and a live one naming one object share a lane: never written at once
        work_of("moved-new", managed("v1", "ConfigMap", "m", "shop")),
        work_of("moved-old", managed("v1", "ConfigMap", "m", "shop"), terminating=True),
    )}
    phases = [[[k[3] for k in lane] for lane in phase] for phase in act_phases(works)]
    assert phases == [
        [["ns-shop"]],
        [["crd"]],
        [["cm-a"], ["cm-b"], ["moved-new", "moved-old"], ["widget"]],
        [["old-cm"]],
        [["old-crd"]],
        [["old-ns"]],
    ]


# ------------------------------------------------------------------------------------ one member


@pytest.fixture
def member(tmp_path):
    from karmactl.emulator import MemberServer

    srv = MemberServer(name="m1", port=0, fake_controller=False, nodes=1).start()
    srv.write_kubeconfig(str(tmp_path / "kubeconfig"), context="m1")
    yield srv
    srv.close()


def _client(member, tmp_path, workers: int, retries: int = 10):
    from karmactl.members.clients import MemberClient
    from karmactl.members.kubeconfig import ClusterAccess

    return MemberClient(ClusterAccess("m1", (str(tmp_path / "kubeconfig"),), "m1"), timeout=5, workers=workers,
                        retries=retries)


def _act(client, works: dict, workers: int):
    from karmactl.interpreter import Interpreter
    from karmactl.members.executing import MemberCopies, act_member

    return act_member("m1", works, MemberCopies(client), True, None, T0, Interpreter(), workers=workers)


def _writes(member) -> list[tuple[str, str]]:
    return [(e["method"], e["path"]) for e in member.request_log if e["method"] in ("POST", "PUT", "PATCH", "DELETE")]


def _applied(work: dict) -> str:
    return next(c["status"] for c in work["status"]["conditions"] if c["type"] == "Applied")


def test_workers_apply_everything_in_order_then_delete_in_reverse(member, tmp_path):
    member.set_latency(0.02)  # each answer takes a while, so the workers overlap
    client = _client(member, tmp_path, workers=5)
    works = {_keys("ns-shop"): work_of("ns-shop", managed("v1", "Namespace", "shop")),
             _keys("crd"): work_of("crd", CRD)}
    for i in range(12):
        works[_keys(f"cm-{i}")] = work_of(f"cm-{i}", managed("v1", "ConfigMap", f"c{i}", "shop", data={"i": str(i)}))
        works[_keys(f"widget-{i}")] = work_of(f"widget-{i}", managed("example.com/v1", "Widget", f"w{i}", "shop",
                                                                  spec={"size": i}))
    out = _act(client, works, workers=5)
    assert out.error is None
    assert {k[3]: _applied(w) for k, w in out.works.items()} == {k[3]: "True" for k in works}
    assert out.writes == len(works)
    for i in range(12):
        assert member.get_object("v1", "ConfigMap", "shop", f"c{i}")["data"] == {"i": str(i)}
        assert member.get_object("example.com/v1", "Widget", "shop", f"w{i}")["spec"] == {"size": i}
    writes = _writes(member)
    order = [path for _m, path in writes]
    ns_at = order.index("/api/v1/namespaces/shop")
    crd_at = order.index("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com")
    assert ns_at < crd_at < min(i for i, p in enumerate(order) if "/namespaces/shop/" in p)
    assert all(p.startswith("/api/v1/namespaces/shop/configmaps/") or p.startswith("/apis/example.com/")
               for p in order[crd_at + 1:])
    assert 1 < member.max_in_flight <= 5  # the member saw several requests at once, never more than the workers

    # everything goes: custom resources and namespaced objects before their CRD and Namespace
    member.clear_request_log()
    gone = {k: work_of(k[3], w["spec"]["workload"]["manifests"][0], terminating=True) for k, w in works.items()}
    out = _act(client, gone, workers=5)
    assert out.error is None and out.works == {k: None for k in gone}
    order = [path for method, path in _writes(member) if method == "DELETE"]
    assert len(order) == len(gone)
    assert order[-2:] == ["/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com",
                          "/api/v1/namespaces/shop"]
    assert 1 < member.max_in_flight <= 5


def test_one_worker_sends_one_request_at_a_time(member, tmp_path):
    member.set_latency(0.01)
    works = {_keys(f"cm-{i}"): work_of(f"cm-{i}", managed("v1", "ConfigMap", f"c{i}", "default")) for i in range(8)}
    out = _act(_client(member, tmp_path, workers=1), works, workers=1)
    assert out.error is None and len(out.works) == 8
    assert member.max_in_flight == 1


def test_workers_create_a_missing_namespace_once(member, tmp_path):
    works = {_keys(f"cm-{i}"): work_of(f"cm-{i}", managed("v1", "ConfigMap", f"c{i}", "team")) for i in range(10)}
    out = _act(_client(member, tmp_path, workers=5), works, workers=5)
    assert out.error is None
    assert [w for w in _writes(member) if w[1] == "/api/v1/namespaces"] == [("POST", "/api/v1/namespaces")]
    assert len(member.list_objects("v1", "ConfigMap", "team")) == 10


def test_a_member_that_stops_answering_stops_its_workers(member, tmp_path):
    works = {_keys(f"cm-{i:02d}"): work_of(f"cm-{i:02d}", managed("v1", "ConfigMap", f"c{i}", "default")) for i in range(30)}
    client = _client(member, tmp_path, workers=4)
    from karmactl.members.executing import MemberCopies

    copies = MemberCopies(client)
    copies.objects(copies.resource(managed("v1", "ConfigMap", "x", "default")))  # listed while it answered
    member.close()
    from karmactl.interpreter import Interpreter
    from karmactl.members.executing import act_member

    done = []
    out = act_member("m1", works, copies, True, None, T0, Interpreter(), progress=done.append, workers=4)
    assert out.error.startswith("cluster is not reachable: ")
    assert out.works == {}  # every Work keeps its state for the next run
    assert sum(done) == 30  # the progress bar still ends


def test_a_terminating_work_leaves_the_object_a_live_work_now_applies(member, tmp_path):
    """Another Work of the member applies the same object in this run: the object is kept and
    updated (deleting it would take the workload down until the next run), the old Work let go."""
    cm = managed("v1", "ConfigMap", "shared", "default", data={"v": "1"})
    works = {_keys("old"): work_of("old", cm, terminating=True), _keys("new"): work_of("new", cm)}
    member.store.create(member._type("v1", "ConfigMap"), "default", dict(cm, data={"v": "0"}))
    out = _act(_client(member, tmp_path, workers=3), works, workers=3)
    assert out.works[_keys("old")] is None and _applied(out.works[_keys("new")]) == "True"
    assert member.get_object("v1", "ConfigMap", "default", "shared")["data"] == {"v": "1"}
    assert [m for m, _p in _writes(member)] == ["PUT"]


def test_a_throttling_member_is_asked_again_after_its_retry_after(member, tmp_path):
    """kube-apiserver's API Priority and Fairness answers 429 with Retry-After: the request is sent
    again (client-go's behaviour), so the writes land; a wait longer than the request timeout
    fails only that Work, with the member's message."""
    member.hooks.set_throttle(4, retry_after=0)
    client = _client(member, tmp_path, workers=3)
    works = {_keys(f"cm-{i}"): work_of(f"cm-{i}", managed("v1", "ConfigMap", f"c{i}", "default")) for i in range(6)}
    out = _act(client, works, workers=3)
    assert out.error is None and all(_applied(w) == "True" for w in out.works.values())
    statuses = [e["status"] for e in member.request_log]
    assert statuses.count(429) == 4 and client.retried == 4
    assert len(member.list_objects("v1", "ConfigMap", "default")) == 6

    member.hooks.set_throttle(1, retry_after=30)  # beyond the 5 s timeout: not waited for
    late = {_keys("late"): work_of("late", managed("v1", "ConfigMap", "late", "default"))}
    out = _act(client, late, workers=3)
    applied = next(c for c in out.works[_keys("late")]["status"]["conditions"] if c["type"] == "Applied")
    assert (applied["status"], out.error) == ("False", None)
    assert "Too many requests, please try again later." in applied["message"]
    assert client.retried == 4


# ------------------------------------------------------------------------------------ the CLI


def _deployments(state, n: int, ns: str = "default") -> None:
    docs = []
    for i in range(n):
        docs.append(f"""apiVersion: apps/v1
kind: Deployment
metadata: {{name: app{i}, namespace: {ns}, labels: {{bench: "yes"}}}}
spec:
  replicas: 1
  selector: {{matchLabels: {{app: app{i}}}}}
  template:
    metadata: {{labels: {{app: app{i}}}}}
    spec: {{containers: [{{name: main, image: "app:{i}"}}]}}
""")
    (state / "apps").mkdir(parents=True, exist_ok=True)
    (state / "apps" / "many.yaml").write_text("---\n".join(docs))
    write(state / "policies" / "many.yaml", """
        apiVersion: policy.karmada.io/v1alpha1
        kind: PropagationPolicy
        metadata: {name: many, namespace: default}
        spec:
          resourceSelectors:
          - {apiVersion: apps/v1, kind: Deployment, labelSelector: {matchLabels: {bench: "yes"}}}
          placement:
            clusterAffinity: {clusterNames: [member1, member2, member3]}
            replicaScheduling: {replicaSchedulingType: Duplicated}
        """)


def test_a_cold_run_sends_every_write_at_once_and_an_unchanged_run_none(cli, state, members, monkeypatch):
    monkeypatch.setenv("KARMACTL_MEMBER_WORKERS", "4")
    for name in ("member1", "member2", "member3"):
        members[name].set_latency(0.01)
        members[name].set_fake_controller(False)
    _deployments(state, 25)
    members.clear_logs()
    reconcile(cli)
    for name in ("member1", "member2", "member3"):
        srv = members[name]
        assert len(srv.list_objects("apps/v1", "Deployment", "default")) == 25
        assert srv.write_count() == 25
        assert 1 < srv.max_in_flight <= 4
    members.clear_logs()
    reconcile(cli, 5)
    assert members.writes() == {"member1": [], "member2": [], "member3": []}


def test_member_knobs_that_do_not_parse(cli, state, members, monkeypatch):
    write(state / "settings.yaml", """
        apiVersion: v1
        kind: ConfigMap
        metadata: {name: karmactl-config, namespace: karmada-system}
        data: {memberBurst: "lots"}
        """)
    members.clear_logs()
    code, _out, err = cli("reconcile", "--now", T0)
    assert code == 2
    assert 'karmactl-config: data.memberBurst: "lots" is not a whole number >= 1' in err
    assert "settings.yaml" in err
    (state / "settings.yaml").unlink()
    monkeypatch.setenv("KARMACTL_MEMBER_WORKERS", "many")
    err = reconcile(cli)
    assert 'environment variable KARMACTL_MEMBER_WORKERS: "many" is not a whole number >= 1; using 5' in err


def test_member_retries_bound_the_requests_sent_again(member, tmp_path, monkeypatch):
    """``memberRetries`` (here through its environment variable) bounds how often one request is
    sent again after Retry-After: with 1, a member throttling three times in a row fails the Work
    with its own message after two requests; with 0 it is never asked again."""
    from karmactl.members.layer import knobs_of

    assert knobs_of({}, {}).retries == 10  # client-go's default
    assert knobs_of({"memberRetries": "0"}, {}).retries == 0
    warnings: list = []
    assert knobs_of({}, {"KARMACTL_MEMBER_RETRIES": "-1"}, warnings).retries == 10 and "KARMACTL_MEMBER_RETRIES" in warnings[0]
    for retries, sent in ((1, 2), (0, 1)):
        before = [e["status"] for e in member.request_log].count(429)
        member.hooks.set_throttle(3, retry_after=0)
        client = _client(member, tmp_path, workers=1, retries=retries)
        works = {_keys(f"r{retries}"): work_of(f"r{retries}", managed("v1", "ConfigMap", f"r{retries}", "default"))}
        out = _act(client, works, workers=1)
        applied = next(c for c in out.works[_keys(f"r{retries}")]["status"]["conditions"] if c["type"] == "Applied")
        assert applied["status"] == "False" and "Too many requests" in applied["message"]
        assert [e["status"] for e in member.request_log].count(429) - before == sent
        assert client.retried == retries
        member.hooks.set_throttle(0, retry_after=0)
