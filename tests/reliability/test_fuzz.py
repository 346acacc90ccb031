"""Property-based fuzz suite (hypothesis) over every kind and every entry point: ``apply -f -``,
``apply -f <file>``, files placed by hand (then ``reconcile``, ``get``, ``plan``), and member answers.

Properties: never exit 70 or a crash; hostile input is exit 2; what ``apply`` accepts ``reconcile``
handles; nothing is written outside the state directory. CRDs, Cluster status and karmactl-config
values get random shapes in every field karmactl reads (:func:`test_control_inputs`). CI runs small counts
(``HYPOTHESIS_PROFILE=ci``); ``KARMACTL_FUZZ_EXAMPLES=5000 pytest -m slow tests/reliability/test_fuzz.py``
runs the long loops.
"""
from __future__ import annotations

import copy
import io
import json
import os
import shutil
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from karmactl.cli.main import main_exit_code
from tests.api.api_samples import ALL
from tests.reliability.hostile import HOSTILE, POLICY, deployment, policy_for

LONG = int(os.environ.get("KARMACTL_FUZZ_EXAMPLES", "0"))
_POD = {"containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "100m"},
                                                                    "limits": {"memory": "1Gi"}}}]}
_TEMPLATE = {"metadata": {"labels": {"app": "a"}}, "spec": _POD}
SAMPLES = {k: v for k, v in ALL.items() if k not in ("ResourceBinding", "ClusterResourceBinding", "Work")}
SAMPLES.update({
    "Deployment": {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "default"},
                   "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "a"}}, "template": _TEMPLATE}},
    "StatefulSet": {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "s", "namespace": "default"},
                    "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "a"}}, "template": _TEMPLATE}},
    "Job": {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "namespace": "default"},
            "spec": {"parallelism": 2, "completions": 4, "template": _TEMPLATE}},
    "CronJob": {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "cj", "namespace": "default"},
                "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": _TEMPLATE}}}},
    "Pod": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"}, "spec": _POD},
    "ConfigMap": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm", "namespace": "default"},
                  "data": {"k": "v"}},
    "Service": {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "svc", "namespace": "default"},
                "spec": {"ports": [{"port": 80}], "selector": {"app": "a"}}},
    "Namespace": {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns1"}},
})

HOSTILE_SCALARS = st.sampled_from(["", ".", "..", "../x", "a/b", "a" * 300, "1Gi", "-1", "100m", "Bearer abc",
                                   "\x00", "é", "*", "&a", "{", "[", "- x", "null", "true", "0x10", "1e400",
                                   2 ** 31, 2 ** 31 - 1, -2 ** 31, 2 ** 63 - 1, 2 ** 63, -2 ** 63 - 1, 2 ** 64,
                                   1.5, -0.0, float("inf")])
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-2 ** 70, 2 ** 70) | st.floats(allow_nan=True) | st.text(max_size=12)
    | HOSTILE_SCALARS,
    lambda ch: st.lists(ch, max_size=3) | st.dictionaries(st.text(max_size=8) | st.integers(-3, 3), ch, max_size=3),
    max_leaves=6)


def _paths(node, here=()):
    yield here
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, here + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _paths(v, here + (i,))


@st.composite
def mutated_objects(draw):
    """A valid sample of some kind with up to three fields replaced, removed or added."""
    kind = draw(st.sampled_from(sorted(SAMPLES)))
    obj = copy.deepcopy(SAMPLES[kind])
    for _ in range(draw(st.integers(0, 3))):
        path = draw(st.sampled_from(list(_paths(obj))))
        op = draw(st.sampled_from(["replace", "delete", "add"]))
        value = draw(VALUES)
        if not path:
            if op == "replace":
                obj = value
            continue
        parent = obj
        try:
            for p in path[:-1]:
                parent = parent[p]
            if op == "replace":
                parent[path[-1]] = value
            elif op == "delete":
                del parent[path[-1]]
            elif isinstance(parent[path[-1]], dict):
                parent[path[-1]][draw(st.text(max_size=8))] = value
            elif isinstance(parent[path[-1]], list):
                parent[path[-1]].append(value)
        except (TypeError, KeyError, IndexError):
            pass
    return obj


@st.composite
def documents(draw) -> bytes:
    """YAML bytes: mutated objects, sometimes corrupted byte-wise, sometimes a known hostile input."""
    how = draw(st.sampled_from(["objects", "objects", "objects", "bytes", "hostile"]))
    if how == "hostile":
        return HOSTILE[draw(st.sampled_from(sorted(HOSTILE)))][0]
    objs = draw(st.lists(mutated_objects(), min_size=1, max_size=3))
    text = yaml.safe_dump_all(objs, sort_keys=False).encode()
    if how == "bytes":
        for _ in range(draw(st.integers(1, 4))):
            i = draw(st.integers(0, max(0, len(text) - 1)))
            text = text[:i] + draw(st.binary(min_size=0, max_size=3)) + text[i + draw(st.integers(0, 3)):]
    return text


class _Stdin:
    def __init__(self, data: bytes):
        self.buffer = io.BytesIO(data)


def _cli(state: Path, *args: str) -> tuple[int, str]:
    import contextlib

    errbuf, outbuf = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(errbuf), contextlib.redirect_stdout(outbuf):
        code = main_exit_code(["--state", str(state), "--now", "2026-01-01T00:00:00Z", *args])
    return code, errbuf.getvalue()


def _only_state(parent: Path) -> None:
    assert sorted(os.listdir(parent)) == ["in.yaml", "state"] or sorted(os.listdir(parent)) == ["state"], \
        os.listdir(parent)


def _settings(fn):
    extra = {"max_examples": LONG} if LONG else {}
    return settings(suppress_health_check=list(HealthCheck), deadline=None, **extra)(fn)


@_settings
@given(data=documents(), via_stdin=st.booleans())
def test_apply_then_reconcile(data, via_stdin):
    parent = Path(tempfile.mkdtemp(prefix="karmactl-fuzz-"))
    try:
        state = parent / "state"
        state.mkdir()
        (state / "policy.yaml").write_bytes(POLICY)
        (state / "d.yaml").write_bytes(deployment())
        if via_stdin:
            old = sys.stdin
            sys.stdin = _Stdin(data)
            try:
                code, err = _cli(state, "apply", "-f", "-")
            finally:
                sys.stdin = old
        else:
            (parent / "in.yaml").write_bytes(data)
            code, err = _cli(state, "apply", "-f", str(parent / "in.yaml"))
        assert code in (0, 2), err
        if code == 2:
            assert err.startswith("error: "), err
        code2, err2 = _cli(state, "reconcile", "--offline")
        # what apply accepted, reconcile handles
        assert code2 in ((0, 4) if code == 0 else (0, 2, 4)), (code, err, err2)
        _only_state(parent)
    finally:
        shutil.rmtree(parent, ignore_errors=True)


@_settings
@given(data=documents())
def test_files_placed_by_hand(data):
    parent = Path(tempfile.mkdtemp(prefix="karmactl-fuzz-"))
    try:
        state = parent / "state"
        state.mkdir()
        (state / "policy.yaml").write_bytes(POLICY)
        (state / "hand.yaml").write_bytes(data)
        for args, ok in ((("reconcile", "--offline"), (0, 2, 4)), (("get", "deploy", "-A"), (0, 2)),
                         (("plan",), (0, 1, 2))):
            code, err = _cli(state, *args)
            assert code in ok, (args, err)
            if code == 2:
                assert "hand.yaml" in err or "policy.yaml" in err or "computed" in err, err
        _only_state(parent)
    finally:
        shutil.rmtree(parent, ignore_errors=True)


# ------------------------------------------------------ CRDs, Cluster status, karmactl-config
# Random shapes and values in every field karmactl reads from these three: each case is a state
# directory with one of them (plus a template and a policy) run through apply, reconcile, get and
# plan. Allowed: 0, 1, 2, 4 (never 70), within the time limit.

_TIMES = st.sampled_from(["2025-12-31T00:00:00Z", "0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z", "garbage", "",
                          "2026-01-01T00:00:00+14:00", "1969-12-31T23:59:59Z", "2026-13-45T99:99:99Z"])
_QUANTITIES = st.sampled_from(["1", "100m", "8Gi", "1e99999999", "-1", "1" * 3000 + "x", "1e-99999999", "lots", "",
                               "0.5", "9223372036854775808"]) | st.integers(-2 ** 70, 2 ** 70) | st.floats()
_LEAF = VALUES | _TIMES | _QUANTITIES


def _maybe(draw, good, bad=_LEAF):
    """``good`` most of the time, else a random value of any shape."""
    return draw(st.sampled_from([True, True, False])) and good or draw(bad)


@st.composite
def cluster_status(draw):
    cond = {"type": _maybe(draw, draw(st.sampled_from(["Ready", "NetworkReady", "x/y", "1bad-"]))),
            "status": _maybe(draw, draw(st.sampled_from(["True", "False", "Unknown", "Maybe"]))),
            "reason": _maybe(draw, "ClusterReady"), "message": _maybe(draw, "ok"),
            "lastTransitionTime": _maybe(draw, draw(_TIMES))}
    status = {
        "conditions": _maybe(draw, [cond]),
        "apiEnablements": _maybe(draw, [{"groupVersion": _maybe(draw, "apps/v1"),
                                         "resources": _maybe(draw, [{"name": _maybe(draw, "deployments"),
                                                                     "kind": _maybe(draw, "Deployment")}])}]),
        "resourceSummary": _maybe(draw, {
            "allocatable": _maybe(draw, {"cpu": draw(_QUANTITIES), "pods": draw(_QUANTITIES)}),
            "allocated": _maybe(draw, {"cpu": draw(_QUANTITIES)}),
            "allocatableModelings": _maybe(draw, [{"grade": _maybe(draw, 0), "count": _maybe(draw, 2)}])}),
        "nodeSummary": _maybe(draw, {"totalNum": _maybe(draw, 3), "readyNum": _maybe(draw, 3)}),
        "kubernetesVersion": _maybe(draw, "v1.31.0"),
        "remedyActions": _maybe(draw, ["TrafficControl"]),
    }
    keep = draw(st.sets(st.sampled_from(sorted(status)), max_size=len(status)))
    return _maybe(draw, {k: v for k, v in status.items() if k in keep})


@st.composite
def cluster_objects(draw) -> dict:
    spec = {"syncMode": "Push", "apiEndpoint": "https://m1.example:6443",
            "taints": _maybe(draw, [{"key": "k", "effect": _maybe(draw, "NoExecute"),
                                     "timeAdded": _maybe(draw, draw(_TIMES))}])}
    if draw(st.booleans()):
        del spec["taints"]
    return {"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster", "metadata": {"name": "m1"},
            "spec": spec, "status": draw(cluster_status())}


@st.composite
def crd_objects(draw) -> dict:
    version = {"name": _maybe(draw, "v1"), "served": _maybe(draw, True), "storage": _maybe(draw, True),
               "schema": _maybe(draw, {"openAPIV3Schema": _maybe(draw, {"type": "object",
                                                                         "x-kubernetes-preserve-unknown-fields": True})})}
    spec = {"group": _maybe(draw, "example.com"),
            "names": _maybe(draw, {"kind": _maybe(draw, "X"), "plural": _maybe(draw, "xs"),
                                   "singular": _maybe(draw, "x"), "shortNames": _maybe(draw, ["xx"])}),
            "scope": _maybe(draw, draw(st.sampled_from(["Namespaced", "Cluster"]))),
            "versions": _maybe(draw, [version])}
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "xs.example.com"}, "spec": _maybe(draw, spec)}


_SETTING_VALUES = st.sampled_from(["true", "false", "maybe", "30", "30s", "-1", "nan", "inf", "1e300", "", "0",
                                   "Directly", "Gracefully", "kube-.*", "(a+)+$", "(a)\\1", "(?=x)", "a)|(.*", "[",
                                   "x" * 5000, "kube-.*,team-.*"]) | st.text(max_size=12)
_SETTING_KEYS = ("clusterFailover", "clusterFailureThreshold", "clusterSuccessThreshold", "gracefulEvictionTimeout",
                 "noExecuteTaintEvictionPurgeMode", "detectFailureThreshold", "detectSuccessThreshold",
                 "skippedPropagatingNamespaces", "propagationPolicyPreemption", "statefulFailoverInjection",
                 "federatedQuotaEnforcement", "memberRequestTimeout", "memberQPS", "memberBurst", "memberWorkers",
                 "memberConcurrency", "memberRetries")


@st.composite
def settings_objects(draw) -> dict:
    data = draw(st.dictionaries(st.sampled_from(_SETTING_KEYS), _SETTING_VALUES, max_size=4))
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "karmactl-config",
                                                                  "namespace": "karmada-system"}, "data": data}


_NAMESPACE_DOCS = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a" * 41 + "b"}},
                   {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "a" * 41 + "b"},
                    "data": {"k": "v"}}]
CASE_LIMIT = 60
"""Seconds one case of :func:`test_control_inputs` may take before it fails as a hang (SIGALRM)."""
CASE_SECONDS: list[float] = []
"""Wall seconds of every case of :func:`test_control_inputs` (the report reads the longest)."""


@_settings
@given(obj=st.one_of(cluster_objects(), crd_objects(), settings_objects()), how=st.sampled_from(["placed", "apply"]),
       now=st.sampled_from(["2026-01-01T00:00:00Z", "2026-01-01T01:00:00Z", "9998-12-31T23:59:59Z"]))
@example(obj={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "karmactl-config",
                                                                    "namespace": "karmada-system"},
              "data": {"skippedPropagatingNamespaces": "(a+)+$"}}, how="placed", now="2026-01-01T00:00:00Z")
def test_control_inputs(obj, how, now):
    """CRDs, Cluster status and karmactl-config values of random shapes: exit 0, 1, 2 or 4, never
    70; what apply accepts reconcile handles; each case within a time limit."""
    import signal
    import time

    def hang(_signum, _frame):
        raise AssertionError(f"a case ran over {CASE_LIMIT} s (a hang)")

    parent = Path(tempfile.mkdtemp(prefix="karmactl-fuzz-"))
    start = time.monotonic()
    previous = signal.signal(signal.SIGALRM, hang)
    signal.alarm(CASE_LIMIT)
    try:
        state = parent / "state"
        state.mkdir()
        (state / "policy.yaml").write_bytes(policy_for("m1"))
        (state / "d.yaml").write_bytes(deployment())
        (state / "ns.yaml").write_text(yaml.safe_dump_all(_NAMESPACE_DOCS))
        text = yaml.safe_dump(obj, sort_keys=False)
        if how == "placed":
            (state / "in.yaml").write_text(text)
        else:
            (parent / "in.yaml").write_text(text)
            code, err = _cli_at(state, now, "apply", "-f", str(parent / "in.yaml"))
            assert code in (0, 2), err
        for args, ok in ((("reconcile", "--offline"), (0, 2, 4)), (("get", "clusters"), (0, 1, 2)),
                         (("plan",), (0, 1, 2))):
            code, err = _cli_at(state, now, *args)
            assert code in ok, (args, code, err)
            if code == 2:
                assert err.startswith("error: ") and ("in.yaml" in err or "computed" in err), err
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
        CASE_SECONDS.append(time.monotonic() - start)
        shutil.rmtree(parent, ignore_errors=True)


def _cli_at(state: Path, now: str, *args: str) -> tuple[int, str]:
    import contextlib

    errbuf, outbuf = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(errbuf), contextlib.redirect_stdout(outbuf):
        code = main_exit_code(["--state", str(state), "--now", now, *args])
    return code, errbuf.getvalue()


# ---------------------------------------------------------------------------- member answers
JSON = st.recursive(st.none() | st.booleans() | st.integers(-2 ** 40, 2 ** 40) | st.text(max_size=10),
                    lambda ch: st.lists(ch, max_size=3) | st.dictionaries(st.text(max_size=10), ch, max_size=4),
                    max_leaves=10)
_ENDPOINTS = ["/version", "/api", "/apis", "/api/v1", "/apis/apps/v1", "/api/v1/nodes", "/api/v1/pods"]


@st.composite
def answers(draw) -> dict:
    """Per endpoint: (status, body bytes): realistic shapes with random parts, garbage, or truncation."""
    out = {}
    for ep in _ENDPOINTS:
        kind = draw(st.sampled_from(["json", "json", "shaped", "garbage", "truncated", "status"]))
        if kind == "shaped":
            item = draw(JSON)
            body = {"/api": {"versions": [item]}, "/apis": {"groups": [{"versions": [item]}]},
                    "/api/v1/nodes": {"items": [item]}, "/api/v1/pods": {"items": [item]},
                    }.get(ep, {"resources": [item], "gitVersion": item})
            out[ep] = (200, json.dumps(body).encode())
        elif kind == "json":
            out[ep] = (200, json.dumps(draw(JSON)).encode())
        elif kind == "garbage":
            out[ep] = (200, draw(st.binary(max_size=30)))
        elif kind == "truncated":
            out[ep] = (200, b'{"items": [{"status": {')
        else:
            out[ep] = (draw(st.sampled_from([201, 204, 301, 403, 404, 500])), json.dumps(draw(JSON)).encode())
    return out


class _Scripted(BaseHTTPRequestHandler):
    answers: dict = {}

    def log_message(self, *a):
        pass

    def do_GET(self):  # noqa: N802
        path = self.path.split("?")[0]
        status, body = (200, b"ok") if path in ("/readyz", "/healthz") else self.server.answers.get(path, (404, b"{}"))
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(scope="module")
def scripted_member(tmp_path_factory):
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Scripted)
    srv.daemon_threads = True
    srv.answers = {}
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    d = tmp_path_factory.mktemp("scripted")
    kc = d / "kc.yaml"
    kc.write_text(f"""apiVersion: v1
kind: Config
clusters: [{{name: m, cluster: {{server: "http://127.0.0.1:{srv.server_address[1]}"}}}}]
users: [{{name: m, user: {{token: fuzz-secret-token}}}}]
contexts: [{{name: m, context: {{cluster: m, user: m}}}}]
""")
    yield srv, kc
    srv.shutdown()


@_settings
@given(script=answers())
@example(script={**{ep: (200, b"null") for ep in _ENDPOINTS}, "/api/v1/pods": (200, b'{"items": [null]}')})
def test_member_answers_never_break_the_probe(scripted_member, script):
    from karmactl.members.clients import MemberClient
    from karmactl.members.kubeconfig import ClusterAccess
    from karmactl.members.probing import probe_member

    srv, kc = scripted_member
    srv.answers = script
    client = MemberClient(ClusterAccess("m", (str(kc),), "m"), timeout=5)
    try:
        res = probe_member(client)  # never raises
    finally:
        client.close()
    assert res.healthy or res.error
    if res.error:
        assert "fuzz-secret-token" not in res.error


@pytest.mark.slow
@pytest.mark.skipif(not LONG, reason="set KARMACTL_FUZZ_EXAMPLES for the long loops")
def test_long_loops_configured():
    assert LONG >= 1
