"""Several requests in flight per member (``memberWorkers``) against a real kube-apiserver: every
write lands, a Namespace and a CRD go before what needs them, an unchanged Work sends nothing, and
deletion takes custom resources before their CRD."""
from __future__ import annotations

import yaml

from tests.members.test_workers import managed, work_of

from .conftest import get_json

T0 = "2026-01-01T00:00:00Z"
WORKERS = 5


def _work(name: str, manifest: dict) -> tuple:
    return ("work.karmada.io", "Work", "karmada-es-member1", name), work_of(name, manifest, cluster="member1")


def _act(member, works: dict):
    from karmactl.interpreter import Interpreter
    from karmactl.members.clients import MemberClient
    from karmactl.members.executing import MemberCopies, act_member
    from karmactl.members.kubeconfig import ClusterAccess

    context = yaml.safe_load(member.kubeconfig.read_text())["current-context"]
    client = MemberClient(ClusterAccess("member1", (str(member.kubeconfig),), context), timeout=30, workers=WORKERS)
    try:
        return act_member("member1", works, MemberCopies(client), True, None, T0, Interpreter(), workers=WORKERS)
    finally:
        client.close()


def _applied(work: dict) -> str:
    return next(c["status"] for c in work["status"]["conditions"] if c["type"] == "Applied")


def _rv(obj: dict) -> int:
    return int(obj["metadata"]["resourceVersion"])


def test_workers_apply_and_delete_on_a_real_member(real_members, ns):
    member = real_members["member1"]
    group = f"{ns}.example.com"
    crd = managed("apiextensions.k8s.io/v1", "CustomResourceDefinition", f"widgets.{group}", spec={
        "group": group, "scope": "Namespaced",
        "names": {"kind": "Widget", "plural": "widgets", "singular": "widget", "listKind": "WidgetList"},
        "versions": [{"name": "v1", "served": True, "storage": True,
                      "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]})
    works = dict([_work("ns", managed("v1", "Namespace", ns)), _work("crd", crd)] +
                 [_work(f"cm-{i:02d}", managed("v1", "ConfigMap", f"c{i}", ns, data={"i": str(i)})) for i in range(20)])
    try:
        out = _act(member, works)
        assert out.error is None
        assert {k[3]: _applied(w) for k, w in out.works.items()} == {k[3]: "True" for k in works}
        assert out.writes == len(works)
        cms = get_json(member, "configmaps", "-n", ns)["items"]
        assert sorted(c["data"]["i"] for c in cms) == sorted(str(i) for i in range(20))
        # the server stored the Namespace before any ConfigMap in it (etcd revisions are its write order)
        assert _rv(get_json(member, "namespace", ns)) < min(_rv(c) for c in cms)
        member.kubectl("wait", "--for=condition=established", f"crd/widgets.{group}", "--timeout=60s")

        # the same Works (as applied) plus custom resources: only the new objects are written
        works = {**works, **out.works}
        widgets = dict(_work(f"widget-{i:02d}", managed(f"{group}/v1", "Widget", f"w{i}", ns, spec={"size": i}))
                       for i in range(15))
        out = _act(member, {**works, **widgets})
        assert out.error is None and out.writes == 15
        assert all(_applied(w) == "True" for w in out.works.values()) and set(out.works) >= set(widgets)
        assert len(get_json(member, f"widgets.{group}", "-n", ns)["items"]) == 15
        works.update(out.works)

        # everything terminating: each member copy is deleted and each Work let go
        gone = {}
        for key, work in works.items():
            md = dict(work["metadata"], deletionTimestamp=T0)
            gone[key] = dict(work, metadata=md)
        out = _act(member, gone)
        assert out.error is None and out.works == {k: None for k in gone}
        assert get_json(member, f"widgets.{group}", "-n", ns) is None or \
            get_json(member, f"widgets.{group}", "-n", ns)["items"] == []
        assert get_json(member, "configmaps", "-n", ns)["items"] == []
    finally:
        member.kubectl("delete", "crd", f"widgets.{group}", "--ignore-not-found", "--wait=false")
