"""Fleets for ``karmactl fleet``'s tests and the screenshot in docs/fleet.png: real YAML written to a
state directory, reconciled offline with a pinned clock, member status recorded with ``observe``.

The small fleet: three members; in namespace ``shop`` Deployment ``web`` (6 replicas divided over
member1..3), ``api`` (2, duplicated on member1 and member2), ``cart`` (3 on member3, observed
Unhealthy) and ConfigMap ``settings`` (everywhere); then member2's Ready turns False at T+5m, the
run at T+6m taints it and evicts its workloads (rescheduled to member1 and member3), the members
report the new replicas at T+11m and the run at T+12m finishes the graceful eviction.

Run as a script (``python -m tests.fleet_scenario docs/fleet.png``) to refresh the screenshot.
"""
from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

from karmactl.cli.main import main_exit_code
from tests.conftest import write

T0 = "2026-01-01T00:00:00Z"
LAST = "2026-01-01T00:12:00Z"  # the clock of the small fleet's last run


def at(minutes: float) -> str:
    from karmactl.api.objects import add_seconds
    return add_seconds(T0, minutes * 60)


def karmactl(state: Path, *args: str) -> None:
    """Run karmactl in-process on ``state``; exit code 0 asserted."""
    code = main_exit_code(["--state", str(state), *args])
    assert code == 0, f"karmactl {' '.join(args)} exited {code}"


def clusters(state: Path, names=("member1", "member2", "member3")) -> None:
    """Ready Clusters that serve Deployments, ConfigMaps, Namespaces."""
    for name in names:
        write(state / "clusters" / f"{name}.yaml", f"""
            apiVersion: cluster.karmada.io/v1alpha1
            kind: Cluster
            metadata: {{name: {name}, labels: {{region: eu}}}}
            spec: {{syncMode: Push, apiEndpoint: "https://{name}.example:6443"}}
            status:
              conditions:
              - {{type: Ready, status: "True", reason: ClusterReady, message: cluster is healthy and ready to accept workloads,
                  lastTransitionTime: "2025-12-31T00:00:00Z"}}
              apiEnablements:
              - groupVersion: apps/v1
                resources: [{{name: deployments, kind: Deployment}}]
              - groupVersion: v1
                resources: [{{name: configmaps, kind: ConfigMap}}, {{name: namespaces, kind: Namespace}}]
            """)


def deployment(name: str, namespace: str, replicas: int, labels: str = "") -> str:
    return f"""
        apiVersion: apps/v1
        kind: Deployment
        metadata: {{name: {name}, namespace: {namespace}, labels: {{app: {name}{labels}}}}}
        spec:
          replicas: {replicas}
          selector: {{matchLabels: {{app: {name}}}}}
          template:
            metadata: {{labels: {{app: {name}}}}}
            spec: {{containers: [{{name: {name}, image: "nginx:1.25"}}]}}
        """


def policy(name: str, namespace: str, kind: str, names: list, scheduling: str, api_version: str = "apps/v1") -> str:
    return f"""
        apiVersion: policy.karmada.io/v1alpha1
        kind: PropagationPolicy
        metadata: {{name: {name}, namespace: {namespace}}}
        spec:
          resourceSelectors: [{{apiVersion: {api_version}, kind: {kind}, name: {name}}}]
          placement:
            clusterAffinity: {{clusterNames: [{", ".join(names)}]}}
            {scheduling}
        """


def ready_status(path: Path, replicas: int) -> Path:
    path.write_text(f"observedGeneration: 1\nreplicas: {replicas}\nupdatedReplicas: {replicas}\n"
                    f"readyReplicas: {replicas}\navailableReplicas: {replicas}\n")
    return path


def small_fleet(state: Path, scratch: Path) -> None:
    """The small fleet of the module docstring, reconciled up to :data:`LAST`."""
    clusters(state)
    divided = "replicaScheduling: {replicaSchedulingType: Divided, replicaDivisionPreference: Weighted}"
    write(state / "shop" / "namespace.yaml", "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n")
    write(state / "shop" / "web.yaml", deployment("web", "shop", 6, ", tier: front") + "---"
          + policy("web", "shop", "Deployment", ["member1", "member2", "member3"], divided))
    write(state / "shop" / "api.yaml", deployment("api", "shop", 2, ", tier: back") + "---" + policy(
        "api", "shop", "Deployment", ["member1", "member2"], "replicaScheduling: {replicaSchedulingType: Duplicated}"))
    write(state / "shop" / "cart.yaml", deployment("cart", "shop", 3, ", tier: back") + "---"
          + policy("cart", "shop", "Deployment", ["member3"], divided))
    write(state / "shop" / "settings.yaml", """
        apiVersion: v1
        kind: ConfigMap
        metadata: {name: settings, namespace: shop}
        data: {color: blue}
        """ + "---" + policy("settings", "shop", "ConfigMap", ["member1", "member2", "member3"], "", "v1"))
    karmactl(state, "reconcile", "--offline", "--now", at(0))
    for name, replicas, members in (("web", 2, ("member1", "member2", "member3")), ("api", 2, ("member1", "member2")),
                                    ("cart", 1, ("member3",))):
        status = ready_status(scratch / f"{name}.yaml", replicas)
        for m in members if name != "cart" else ():
            karmactl(state, "--now", at(1), "observe", f"deploy/{name}", "-n", "shop", "--cluster", m,
                     "--status-file", str(status))
    karmactl(state, "--now", at(1), "observe", "deploy/cart", "-n", "shop", "--cluster", "member3",
             "--status-file", str(scratch / "cart.yaml"), "--health", "Unhealthy")
    for m in ("member1", "member2", "member3"):
        karmactl(state, "--now", at(1), "observe", "cm/settings", "-n", "shop", "--cluster", m, "--health", "Healthy")
    karmactl(state, "reconcile", "--offline", "--now", at(2))
    karmactl(state, "--now", at(5), "cluster", "condition", "set", "member2", "Ready=False")
    karmactl(state, "reconcile", "--offline", "--now", at(6))
    for m in ("member1", "member3"):
        karmactl(state, "--now", at(11), "observe", "deploy/web", "-n", "shop", "--cluster", m,
                 "--status-file", str(ready_status(scratch / "web3.yaml", 3)))
    karmactl(state, "reconcile", "--offline", "--now", LAST)


def many_workloads(state: Path, n: int) -> None:
    """``n`` Deployments in namespace ``bulk`` (one file, written by a generator), one policy
    dividing them over member1..3, reconciled offline."""
    clusters(state)
    docs = ["apiVersion: v1\nkind: Namespace\nmetadata: {name: bulk}\n"]
    docs += [textwrap.dedent(deployment(f"app-{i:04d}", "bulk", 3)).lstrip("\n") for i in range(n)]
    docs.append(textwrap.dedent("""
        apiVersion: policy.karmada.io/v1alpha1
        kind: PropagationPolicy
        metadata: {name: all, namespace: bulk}
        spec:
          resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
          placement:
            clusterAffinity: {clusterNames: [member1, member2, member3]}
            replicaScheduling: {replicaSchedulingType: Divided, replicaDivisionPreference: Weighted}
        """).lstrip("\n"))
    (state / "bulk.yaml").write_text("---\n".join(docs))
    karmactl(state, "reconcile", "--offline", "--now", at(0))


HOSTILE = '"><script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">'


def hostile_fleet(state, scratch) -> None:
    """One Cluster whose Ready message and one Deployment whose observed status carry markup."""
    clusters(state, ("member1",))
    path = state / "clusters" / "member1.yaml"
    text = path.read_text().replace("message: cluster is healthy and ready to accept workloads",
                                    f"message: {json.dumps(HOSTILE)}")
    path.write_text(text)
    write(state / "app.yaml", f"""
        apiVersion: apps/v1
        kind: Deployment
        metadata: {{name: web, namespace: default, labels: {{app: web}},
                    annotations: {{note: {json.dumps(HOSTILE)}}}}}
        spec:
          replicas: 1
          selector: {{matchLabels: {{app: web}}}}
          template:
            metadata: {{labels: {{app: web}}}}
            spec: {{containers: [{{name: web, image: nginx}}]}}
        ---
        apiVersion: policy.karmada.io/v1alpha1
        kind: PropagationPolicy
        metadata: {{name: web, namespace: default}}
        spec:
          resourceSelectors: [{{apiVersion: apps/v1, kind: Deployment, name: web}}]
          placement: {{clusterAffinity: {{clusterNames: [member1]}}}}
        """)
    karmactl(state, "reconcile", "--offline", "--now", at(0))
    status = scratch / "status.yaml"
    status.write_text(f"observedGeneration: 1\nreplicas: 1\nreadyReplicas: 1\nmessage: {json.dumps(HOSTILE)}\n")
    karmactl(state, "--now", at(1), "observe", "deploy/web", "--cluster", "member1", "--status-file", str(status))
    karmactl(state, "reconcile", "--offline", "--now", at(2))


_BUILT: dict = {}


def small_fleet_once(tmp_path_factory) -> Path:
    """:func:`small_fleet` built once per test session (its users only read it)."""
    if "small" not in _BUILT:
        root = tmp_path_factory.mktemp("small-fleet")
        (root / "state").mkdir()
        small_fleet(root / "state", root)
        _BUILT["small"] = root / "state"
    return _BUILT["small"]


if __name__ == "__main__":  # python -m tests.fleet_scenario OUT.png: the screenshot of docs/fleet.png
    import tempfile

    from tests.browser.pages import screenshot

    with tempfile.TemporaryDirectory() as tmp:
        state = Path(tmp) / "state"
        state.mkdir()
        small_fleet(state, Path(tmp))
        page = Path(tmp) / "fleet.html"
        karmactl(state, "--now", LAST, "fleet", "-n", "shop", "--html", str(page), "--workload", "deploy/shop/web")
        screenshot(page, Path(sys.argv[1]))
