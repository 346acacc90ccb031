"""Karmada as referee: its own CRDs, installed into a real kube-apiserver, judge what karmactl
accepts and what it computes.

Every user object of the samples (``manifests/``, ``tests/e2e/data/``) and every ResourceBinding,
ClusterResourceBinding and Work karmactl computes for them (``<state>/computed/``), plus each
manifest a Work carries, goes through ``kubectl create --dry-run=server`` (``replace`` when a
same-named object is stored); the status karmactl computes goes through the status subresource of a
stored copy. The server rejects what
Karmada's schemas reject and silently prunes fields they do not declare, so every leaf sent that does
not come back unchanged is a difference. Deliberate extensions are listed in ``EXTENSIONS`` with
their reason; any other difference, or a listed one that is gone, fails the test.

The Clusters themselves are not judged: ``cluster.karmada.io`` is served by Karmada's aggregated API
server, not by a CRD.
"""
from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from kube_apiserver import KARMADA_CRDS, RealMember, require_or_skip, start_member

from .conftest import MANIFESTS, SAMPLES, converge, report_available, sample, write_yaml

NOW = "2026-01-01T00:00:00Z"
SERVER_SET = {".metadata.creationTimestamp", ".metadata.generation", ".metadata.uid", ".metadata.resourceVersion",
              ".metadata.managedFields", ".metadata.selfLink"}

# A PropagationPolicy using what DESIGN §3.2 takes from Karmada's proposals (not in its CRDs).
PROPOSAL_POLICY = {
    "apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
    "metadata": {"name": "nginx-propagation", "namespace": "default"},
    "spec": {
        "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "nginx"}],
        "placement": {"clusterAffinity": {"clusterNames": ["member1", "member2"]}},
        "propagateDeps": True,
        "failover": {
            "application": {"decisionConditions": {"tolerationSeconds": 60}, "purgeMode": "Gracefully",
                            "gracePeriodSeconds": 600, "blockPredecessorSeconds": 300,
                            "preConditions": {"delaySeconds": 30, "healthyState": "Healthy"}},
            "cluster": {"purgeMode": "Gracefully", "gracePeriodSeconds": 300}},
    },
}

OFFLINE = ["--now", NOW, "reconcile", "--offline"]

# The inputs judged: name -> (sample directories or files, extra objects written by the test, the
# karmactl commands run on them). Beyond the plain samples, two runs make karmactl compute the
# binding fields of cluster failover (graceful eviction tasks) and of suspension.
RUNS = {
    "manifests/nginx": ([MANIFESTS / "nginx"], [], [OFFLINE]),
    "manifests/guestbook": ([MANIFESTS / "guestbook"], [], [OFFLINE]),
    "karmada-samples/nginx": ([SAMPLES / "nginx"], [], [OFFLINE]),
    "proposal-fields": ([MANIFESTS / "nginx" / "deployment.yaml"], [PROPOSAL_POLICY], [OFFLINE]),
    "cluster-failover": ([MANIFESTS / "nginx"], [], [
        OFFLINE,
        ["--now", "2026-01-01T00:00:10Z", "cluster", "condition", "set", "member2", "Ready=False",
         "--reason", "ClusterNotReachable"],
        ["--now", "2026-01-01T00:01:00Z", "reconcile", "--offline"]]),
    "suspension": ([MANIFESTS / "nginx"], [], [
        OFFLINE, ["suspend", "pp", "nginx-propagation", "--clusters", "member2"], OFFLINE]),
}

# (run, source, kind, path) -> why karmactl differs from Karmada's CRDs there. Paths are leaves as
# ``.spec.a.b[]`` (list indices dropped); "rejected" means the server refused the whole object.
EXTENSIONS: dict[tuple[str, str, str, str], str] = {
    **{("proposal-fields", src, kind, f"{prefix}.failover.application.{field}"):
       "DESIGN §3.2: application failover proposal field, not in Karmada's API"
       for src, kind, prefix in (("user", "PropagationPolicy", ".spec"), ("computed", "ResourceBinding", ".spec"))
       for field in ("blockPredecessorSeconds", "preConditions.delaySeconds", "preConditions.healthyState")},
    **{("proposal-fields", src, kind, ".spec.failover.cluster.gracePeriodSeconds"):
       "DESIGN §3.2: failover.cluster.gracePeriodSeconds from the failover proposal, not in Karmada's API"
       for src, kind in (("user", "PropagationPolicy"), ("computed", "ResourceBinding"))},
    **{(run, "computed", kind, ".status.aggregatedStatus[].creationTimestamp"):
       "application failover design document: an aggregated status item carries when it was first "
       "collected (AggregatedStatusItem.creationTimestamp), not yet in Karmada's API"
       for run, kinds in (("manifests/nginx", ("ResourceBinding",)),
                          ("manifests/guestbook", ("ResourceBinding", "ClusterResourceBinding")),
                          ("karmada-samples/nginx", ("ResourceBinding",)), ("proposal-fields", ("ResourceBinding",)),
                          ("cluster-failover", ("ResourceBinding",)), ("suspension", ("ResourceBinding",)),
                          ("online", ("ResourceBinding",)))
       for kind in kinds},
    ("online", "computed", "ResourceBinding", ".status.aggregatedStatus[].settled"):
        "application failover design document: an aggregated status item says whether the workload was "
        "once healthy there (AggregatedStatusItem.settled, for preConditions.healthyState), not yet in Karmada's API",
    ("online", "computed", "Work",
     'rejected status: The Work NAME is invalid: status.manifestStatuses.identifier.resource: Invalid value: "null": '
     'status.manifestStatuses.identifier.resource in body must be of type string: "null"'):
        "the referee's limit, not karmactl's: Karmada itself writes identifier.resource \"\" (work_status_controller.go "
        "buildStatusIdentifier leaves Resource unset; the field is required, not omitempty), and v1.20's schema "
        "validator takes a required field's zero value for null; Karmada's newer API servers accept it",
}


def _cluster(name: str) -> dict:
    """A Ready Push Cluster serving what the samples need, as an offline run trusts it."""
    served = [("apps/v1", "deployments", "Deployment"),
              ("apiextensions.k8s.io/v1", "customresourcedefinitions", "CustomResourceDefinition"),
              ("webapp.my.domain/v1", "guestbooks", "Guestbook")]
    return {"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster", "metadata": {"name": name},
            "spec": {"syncMode": "Push", "apiEndpoint": f"https://{name}.example:6443"},
            "status": {"conditions": [
                {"type": "Ready", "status": "True", "reason": "ClusterReady",
                 "message": "cluster is healthy and ready to accept workloads"},
                {"type": "CompleteAPIEnablements", "status": "True", "reason": "Complete",
                 "message": "collected complete APIEnablements from the cluster"}],
                "apiEnablements": [{"groupVersion": gv, "resources": [{"name": r, "kind": k}]} for gv, r, k in served]}}


@pytest.fixture(scope="module")
def referee(tmp_path_factory) -> RealMember:
    """A real kube-apiserver with Karmada's CRDs (and the execution namespaces) installed."""
    require_or_skip()
    member = start_member("referee", tmp_path_factory.mktemp("referee") / "referee")
    try:
        member.kubectl("apply", "--server-side", "-f", str(KARMADA_CRDS))
        member.kubectl("wait", "--for=condition=Established", "crd", "--all", "--timeout=60s")
        for ns in ("karmada-es-member1", "karmada-es-member2", "karmada-system"):
            member.kubectl("create", "namespace", ns)
        yield member
    finally:
        member.stop()


def _leaves(obj, path=""):
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _leaves(v, f"{path}.{k}")
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _leaves(v, f"{path}[{i}]")
    else:
        yield path, obj


def _lost(sent: dict, got: dict) -> set[str]:
    """Leaves of ``sent`` that ``got`` lacks or changed, list indices dropped (``.a.b[]``); empty
    maps and lists are not leaves (the server omits them), server-set metadata is ignored."""
    have = dict(_leaves(got))
    return {re.sub(r"\[\d+\]", "[]", p) for p, v in _leaves(sent)
            if p not in SERVER_SET and (p not in have or have[p] != v)}


def _unnamed(message: str) -> str:
    """The server's error without the object's name (Work names carry a hash of the namespace)."""
    return re.sub(r'^(Error from server \(\w+\): )?The (\w+) "[^"]+"', r"The \2 NAME", message.strip())


class Judge:
    """Sends objects to the referee and records each difference as (source, kind, path)."""

    def __init__(self, referee: RealMember):
        self.referee, self.found = referee, set()

    def _kubectl(self, *args: str, obj: dict) -> subprocess.CompletedProcess:
        # --validate=false: the server alone judges (kubectl would refuse unknown fields itself).
        return self.referee.kubectl(*args, "--validate=false", "-o", "json", "-f", "-", input=json.dumps(obj),
                                    check=False)

    def _write(self, obj: dict, dry_run: bool) -> subprocess.CompletedProcess:
        """Create ``obj``, or replace it when it exists (earlier runs store objects of the same name)."""
        flags = ["--dry-run=server"] if dry_run else []
        res = self._kubectl("create", *flags, obj=obj)
        if res.returncode != 0 and "AlreadyExists" in res.stderr:
            existing = self.referee.kubectl("get", "-o", "json", "-f", "-", input=json.dumps(obj))
            version = json.loads(existing.stdout)["metadata"]["resourceVersion"]
            res = self._kubectl("replace", *flags, obj={**obj, "metadata": {**obj["metadata"], "resourceVersion": version}})
        return res

    def spec(self, source: str, obj: dict, dry_run: bool = True) -> dict | None:
        """Write ``obj`` without its status (dry run unless told); returns the stored result."""
        sent = {k: v for k, v in obj.items() if k != "status"}
        res = self._write(sent, dry_run)
        if res.returncode != 0:
            self.found.add((source, obj["kind"], "rejected: " + _unnamed(res.stderr)))
            return None
        got = json.loads(res.stdout)
        self.found |= {(source, obj["kind"], p) for p in _lost(sent, got)}
        return got

    def status(self, source: str, obj: dict) -> None:
        """Store ``obj`` and replace its status through the status subresource (dry run)."""
        stored = self.spec(source, obj, dry_run=False)
        if stored is None:
            return
        sent = {**obj, "metadata": {**obj["metadata"], "resourceVersion": stored["metadata"]["resourceVersion"]}}
        res = self._kubectl("replace", "--subresource=status", "--dry-run=server", obj=sent)
        if res.returncode != 0:
            self.found.add((source, obj["kind"], "rejected status: " + _unnamed(res.stderr)))
            return
        self.found |= {(source, obj["kind"], p) for p in _lost({"status": obj["status"]}, json.loads(res.stdout))}


def _user_objects(paths: list[Path]) -> list[dict]:
    files = [f for p in paths for f in ([p] if p.is_file() else sorted(p.glob("*.yaml")))]
    return [d for f in files for d in yaml.safe_load_all(f.read_text()) if d]


def _judge_computed(judge: Judge, state: Path) -> set[str]:
    """Judge every binding and Work under ``state/computed`` and the manifests the Works carry;
    returns the kinds judged."""
    computed = sorted((state / "computed").glob("*/**/*.json"))
    judged = [json.loads(f.read_text()) for f in computed
              if f.relative_to(state / "computed").parts[0] in ("resourcebindings", "clusterresourcebindings", "works")]
    for obj in judged:
        if obj.get("status"):
            judge.status("computed", obj)
            statuses = obj["status"].get("manifestStatuses") or []
            if any(ms["identifier"].get("resource") == "" for ms in statuses):
                # v1.20 refuses Karmada's own empty identifier.resource (see EXTENSIONS): judge the
                # rest of the Work's status with it filled in.
                filled = [{**ms, "identifier": {**ms["identifier"], "resource": "x"}} for ms in statuses]
                judge.status("computed, identifier.resource filled", {**obj, "status": {**obj["status"],
                                                                                      "manifestStatuses": filled}})
        else:
            judge.spec("computed", obj)
        for manifest in (obj.get("spec", {}).get("workload", {}).get("manifests") or []):
            judge.spec("work manifest", manifest)
    return {o["kind"] for o in judged}


def _expected(run: str) -> list[tuple[str, str, str]]:
    return sorted((src, kind, path) for (r, src, kind, path) in EXTENSIONS if r == run)


UNLISTED = ("differences from Karmada's CRDs changed; fix karmactl's spelling or list a deliberate "
            "extension in EXTENSIONS with its reason")


@pytest.mark.parametrize("run", list(RUNS))
def test_karmada_crds_accept_what_karmactl_accepts_and_computes(run, referee, cli, state, tmp_path):
    paths, extra, steps = RUNS[run]
    write_yaml(state / "clusters.yaml", _cluster("member1"), _cluster("member2"))
    inputs = list(paths)
    if extra:
        inputs.append(write_yaml(tmp_path / "extra.yaml", *extra))
    for p in inputs:
        cli.ok("apply", "-f", str(p))
    for step in steps:
        cli.ok(*step)

    judge = Judge(referee)
    # CRDs first and for real: the custom resources of the sample need them served.
    for obj in sorted(_user_objects(inputs), key=lambda o: o["kind"] != "CustomResourceDefinition"):
        if obj["kind"] == "CustomResourceDefinition":
            judge.spec("user", obj, dry_run=False)
            referee.kubectl("wait", "--for=condition=Established", f"crd/{obj['metadata']['name']}", "--timeout=60s")
        elif obj["kind"] in ("ClusterPropagationPolicy", "ClusterOverridePolicy"):
            judge.spec("user", obj)
        else:
            judge.spec("user", {**obj, "metadata": {"namespace": "default", **obj["metadata"]}})
    assert _judge_computed(judge, state) >= {"ResourceBinding", "Work"}  # the run computed what is judged
    assert sorted(judge.found) == _expected(run), UNLISTED


def test_karmada_crds_accept_the_status_an_online_run_computes(referee, cli, joined, ns, tmp_path):
    """Status only members produce: aggregated status of the binding, manifest statuses of Works."""
    cli.ok("apply", "-f", str(sample(MANIFESTS / "nginx", ns, tmp_path / "in")))
    converge(cli)
    for member in joined.values():
        report_available(member, ns, "nginx")
    converge(cli)
    rb = json.loads(cli.ok("get", "rb", "nginx-deployment", "-n", ns, "-o", "json"))
    assert [i["health"] for i in rb["status"]["aggregatedStatus"]] == ["Healthy", "Healthy"]

    referee.kubectl("create", "namespace", ns)
    judge = Judge(referee)
    _judge_computed(judge, cli.state)
    assert sorted(judge.found) == _expected("online"), UNLISTED
