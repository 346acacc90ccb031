"""The member emulator refereed on behaviour: the same workload scenario on an emulated member (its
fake controller) and on a real cluster (deployment controller, scheduler, hollow kubelets),
the settled status after each step compared field by field.

What a real cluster shows *between* settled states (a rollout's surge, Pods not yet ready) the
emulator skips: its fake controller writes the settled status at once (said in the docs; not
compared, as how many in-between states a poll catches depends on timing). Every difference of the
settled states is listed in the behaviour table of ``docs/member-emulator.md``, which this test
reads: a difference no row's pattern (a glob over ``<step>: <field path>``) matches fails, and so does
a row that matches nothing.
"""
from __future__ import annotations

import fnmatch
import json
import re
import subprocess
import time
from pathlib import Path

import yaml

from karmactl.emulator import MemberServer

DOC = Path(__file__).resolve().parents[2] / "docs" / "member-emulator.md"
DEADLINE = 120  # seconds for a real cluster to settle a step (a hang guard)
TIMES = re.compile(r"(Time|startedAt|Timestamp)$")


def _kubectl(kubeconfig: str, cache: Path, *args: str, input: str | None = None) -> str:
    res = subprocess.run(["kubectl", "--kubeconfig", kubeconfig, "--cache-dir", str(cache), *args],
                         capture_output=True, text=True, input=input, timeout=60)
    assert res.returncode == 0, f"kubectl {' '.join(args)}: {res.stderr}"
    return res.stdout


def _deployment(ns: str) -> dict:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": ns},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}},
                                  "spec": {"containers": [{"name": "app", "image": "nginx:1.25"}]}}}}


def _normal(value, path: str = ""):
    """The status with what differs every time masked: timestamps and free-text messages."""
    if isinstance(value, dict):
        return {k: ("<time>" if TIMES.search(k) else "<message>" if k == "message" else _normal(v, f"{path}.{k}"))
                for k, v in value.items()}
    if isinstance(value, list):
        items = [_normal(v, path) for v in value]
        return sorted(items, key=lambda i: json.dumps(i, sort_keys=True)) if path.endswith("conditions") else items
    return value


def _settled_deploy(obj: dict) -> bool:
    st, spec = obj.get("status") or {}, obj["spec"]
    n = spec.get("replicas", 1)
    conds = {c["type"]: c.get("reason") for c in st.get("conditions") or []}
    return (st.get("observedGeneration") == obj["metadata"].get("generation")
            and st.get("updatedReplicas", 0) == n and st.get("replicas", 0) == n
            and st.get("availableReplicas", 0) == n and conds.get("Progressing") == "NewReplicaSetAvailable")



class Side:
    """One member the scenario runs on: the kubeconfig and what each step showed."""

    def __init__(self, name: str, kubeconfig: str, cache: Path, ns: str):
        self.name, self.kubeconfig, self.cache, self.ns = name, kubeconfig, cache, ns
        self.settled: dict[str, dict] = {}

    def k(self, *args: str, input: str | None = None) -> str:
        return _kubectl(self.kubeconfig, self.cache, *args, input=input)

    def step(self, name: str, kind: str, obj_name: str, settled, *args: str, input: str | None = None) -> None:
        if args:
            self.k(*args, input=input)
        end = time.monotonic() + DEADLINE
        while True:
            obj = json.loads(self.k("get", kind, obj_name, "-n", self.ns, "-o", "json"))
            if settled(obj):
                self.settled[name] = _normal(obj.get("status") or {})
                return
            assert time.monotonic() < end, f"{self.name}: step {name} did not settle: {obj.get('status')}"
            time.sleep(0.3)


def _run(side: Side) -> None:
    ns = side.ns
    side.k("create", "namespace", ns)
    side.step("create", "deploy", "web", _settled_deploy, "apply", "-f", "-", input=json.dumps(_deployment(ns)))
    side.step("scale up", "deploy", "web", _settled_deploy, "scale", "deploy/web", "-n", ns, "--replicas=4")
    side.step("new image", "deploy", "web", _settled_deploy, "set", "image", "deploy/web", "-n", ns, "app=nginx:1.26")
    side.step("scale to zero", "deploy", "web", _settled_deploy, "scale", "deploy/web", "-n", ns, "--replicas=0")


def _leaves(value, path: str = "") -> dict[str, object]:
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            out.update(_leaves(v, f"{path}.{k}"))
        return out or {path: {}}
    if isinstance(value, list):
        out = {}
        for i, v in enumerate(value):
            out.update(_leaves(v, f"{path}[{i}]"))
        return out or {path: []}
    return {path: value}


def differences(emulated: Side, real: Side) -> list[str]:
    """``<step>: <field path>`` for every settled field that differs. (The states in between are not
    compared: how many a poll catches depends on timing; the docs say how the two differ there.)"""
    out = []
    for step in real.settled:
        a, b = _leaves(emulated.settled.get(step, {})), _leaves(real.settled[step])
        out += [f"{step}: status{p}" for p in sorted(set(a) | set(b)) if a.get(p, "<absent>") != b.get(p, "<absent>")]
    return out


def _listed() -> list[tuple[str, str]]:
    """The behaviour table of docs/member-emulator.md: ``(pattern, reason)`` rows."""
    text = DOC.read_text()
    section = text.split("## The behaviour check", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        m = re.match(r"\|\s*(`.+?`(?:\s+`.+?`)*)\s*\|\s*(.+?)\s*\|$", line)
        if m:
            rows += [(p, m.group(2)) for p in re.findall(r"`([^`]+)`", m.group(1))]
    return rows


def test_the_emulator_settles_workloads_as_a_real_cluster_does(clusters, tmp_path):
    real_cluster = clusters["member1"]
    srv = MemberServer(name="emulated", port=0, data_dir=str(tmp_path / "emulated"), fake_controller=True,
                       fake_delay=0.2, nodes=2).start()
    try:
        emulated = Side("emulated", srv.write_kubeconfig(str(tmp_path / "kubeconfig"), context="emulated"),
                        tmp_path / "cache-e", "referee")
        real = Side("real", str(real_cluster.kubeconfig), tmp_path / "cache-r", "referee")
        try:
            _run(real)
            _run(emulated)
        finally:
            real_cluster.kubectl("delete", "namespace", "referee", "--wait=false", "--ignore-not-found", check=False)
    finally:
        srv.close()
    found = differences(emulated, real)
    rows = _listed()
    unlisted = [d for d in found if not any(fnmatch.fnmatchcase(d, p) for p, _ in rows)]
    stale = [p for p, _ in rows if not any(fnmatch.fnmatchcase(d, p) for d in found)]
    detail = {step: {"emulated": emulated.settled.get(step), "real": real.settled[step]} for step in real.settled}
    assert not unlisted, f"differences not listed in docs/member-emulator.md: {unlisted}\n{yaml.safe_dump(detail)}"
    assert not stale, f"rows of docs/member-emulator.md's behaviour table that match nothing: {stale}"
