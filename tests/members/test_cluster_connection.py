"""A Cluster's connection fields and sync mode, acted on against emulated members (issue 27, items 2 and 3).

- ``syncMode: Pull``: the member is never contacted (no request at all); its Works are computed and
  written; the run says they wait for the member's own agent; ``reconcile --wait`` does not wait
  for them; a Pull cluster that never reported goes Ready Unknown ``ClusterStatusNeverUpdated``;
- ``apiEndpoint`` must be the kubeconfig's server; ``secretRef`` / ``impersonatorSecretRef`` are
  refused with the way to give the credential instead; ``insecureSkipTLSVerification`` holds only where
  the kubeconfig skips verification too;
- ``proxyURL`` (consented by ``--allow-proxy`` or the kubeconfig's ``proxy-url``) carries every request
  of the member, ``CONNECT`` with ``proxyHeader`` for an https member, forwarded for a plain-http one;
  a dead proxy fails the member; ``proxyHeader`` without ``proxyURL`` is a warning.
"""
from __future__ import annotations

import pytest
import yaml

from tests.conftest import write
from tests.http_proxy import HttpProxy, dead_port

from .conftest import Members, at, computed, condition, nginx, policy, work


@pytest.fixture
def two(tmp_path, state, monkeypatch):
    """member1 (plain http) and member2 (https, its CA in the kubeconfig), emulated."""
    from karmactl.emulator import MemberServer

    monkeypatch.setenv("KARMACTL_MEMBER_TIMEOUT", "2")
    monkeypatch.setenv("KARMACTL_KUBECONFIG_DIR", str(tmp_path))
    monkeypatch.delenv("KARMACTL_ALLOWED_PROXIES", raising=False)
    m = Members(tmp_path, state)
    m.start("member1")
    srv = MemberServer(name="member2", port=0, fake_controller=True, fake_delay=0.05, nodes=2, tls=True).start()
    m.servers["member2"] = srv
    srv.write_kubeconfig(str(m.kubeconfig("member2")), context="member2")
    _cluster(state, "member2", f"apiEndpoint: {srv.url}")
    nginx(state)
    policy(state)
    yield m
    m.close()


def _cluster(state, name: str, spec: str, status: str = "") -> None:
    write(state / "clusters" / f"{name}.yaml", f"""
        apiVersion: cluster.karmada.io/v1alpha1
        kind: Cluster
        metadata:
          name: {name}
          annotations:
            karmactl.io/kubeconfig: ../kubeconfigs/{name}.yaml
            karmactl.io/context: {name}
        spec:
          syncMode: Push
          {spec}
        """ + status)


def _spec(state, name: str, **fields) -> None:
    """Set fields of a Cluster's spec in its file."""
    path = state / "clusters" / f"{name}.yaml"
    doc = yaml.safe_load(path.read_text())
    doc["spec"].update(fields)
    path.write_text(yaml.safe_dump(doc))


def _ready(state, name: str) -> dict | None:
    return condition(computed(state, "status", "clusters.cluster.karmada.io", f"{name}.json") or {}, "Ready")


def _requests(member) -> int:
    return len(member.request_log)


# ---------------------------------------------------------------------------- Pull
def test_a_pull_cluster_is_never_contacted_and_its_works_wait_for_its_agent(cli, state, two):
    _spec(state, "member2", syncMode="Pull")
    path = state / "clusters" / "member2.yaml"
    doc = yaml.safe_load(path.read_text())
    doc["status"] = {  # the agent's report
        "conditions": [{"type": "Ready", "status": "True", "reason": "ClusterReady", "message": "reported by the agent"}],
        "apiEnablements": [{"groupVersion": "apps/v1", "resources": [{"name": "deployments", "kind": "Deployment"}]}]}
    path.write_text(yaml.safe_dump(doc))
    two.clear_logs()
    code, _out, err = cli("reconcile", "--now", at(0))
    assert code == 0, err
    assert _requests(two["member2"]) == 0, two["member2"].request_log
    assert two.deploy("member2") is None and two.deploy("member1") is not None
    assert work(state, "member2") is not None  # computed and written
    assert condition(work(state, "member2"), "Applied") is None  # nobody applied it
    assert ("cluster member2 is a Pull mode member cluster: karmactl applies none of its 1 Work(s) "
            "(namespace karmada-es-member2); they wait for the member's own karmada-agent") in err
    assert _ready(state, "member2")["message"] == "reported by the agent"

    # --wait converges on what karmactl applies; it does not wait for the agent
    code, _out, err = cli("reconcile", "--wait", "--timeout", "20s")
    assert code == 0, err
    assert _requests(two["member2"]) == 0

    code, out, err = cli("describe", "cluster", "member2")
    assert code == 0, err
    assert "Sync Mode:  Pull: karmactl never contacts this member" in out
    code, out, err = cli("describe", "work", "-n", "karmada-es-member2", "nginx-687f7fb96f")
    assert code == 0, err
    assert "Sync Mode:  Pull: cluster member2 applies this Work with its own karmada-agent" in out

    # never reported: Ready Unknown once the startup grace period (60s) has passed, as Karmada's cluster controller
    doc.pop("status")
    path.write_text(yaml.safe_dump(doc))
    # the issue's case: a Pull member with an unreachable endpoint, a dead proxy and a missing Secret
    (state / "clusters" / "member3.yaml").write_text(yaml.safe_dump({
        "apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster", "metadata": {"name": "member3"},
        "spec": {"syncMode": "Pull", "apiEndpoint": f"https://127.0.0.1:{dead_port()}",
                 "proxyURL": f"http://127.0.0.1:{dead_port()}", "secretRef": {"namespace": "karmada-cluster", "name": "gone"}}}))
    code, _out, err = cli("reconcile", "--now", at(1))
    assert code == 0, err
    assert ("warning: Cluster member3 is a Pull mode member cluster, which karmactl never contacts: spec.apiEndpoint, "
            "spec.secretRef, spec.proxyURL are not used") in err
    assert _ready(state, "member3") is None
    code, _out, err = cli("reconcile", "--now", at(61))
    assert code == 0, err
    ready = _ready(state, "member3")
    assert (ready["status"], ready["reason"], ready["message"]) == (
        "Unknown", "ClusterStatusNeverUpdated", "Cluster status controller never posted cluster status.")


# ---------------------------------------------------------------------------- endpoint, secrets, TLS
def test_api_endpoint_secret_refs_and_insecure_are_checked_against_the_kubeconfig(cli, state, two):
    _spec(state, "member1", apiEndpoint=f"http://127.0.0.1:{dead_port()}")
    _spec(state, "member2", secretRef={"namespace": "karmada-cluster", "name": "member2"})
    two.clear_logs()
    code, _out, err = cli("reconcile", "--now", at(0))
    assert code == 3, err
    assert "spec.apiEndpoint http://127.0.0.1:" in err and f"is not the server of its kubeconfig" in err
    assert f"{two['member1'].url}; karmactl connects only where the operator's kubeconfig points" in err
    assert ("spec.secretRef (karmada-cluster/member2) is not used by karmactl, which reads no Secrets" in err
            and "remove spec.secretRef and name the member's kubeconfig with annotation karmactl.io/kubeconfig" in err)
    assert _requests(two["member1"]) == 0 and _requests(two["member2"]) == 0
    ready = _ready(state, "member1")
    assert (ready["status"], ready["reason"]) == ("False", "StatusCollectionFailed")

    _spec(state, "member1", apiEndpoint=two["member1"].url + "/")  # another spelling of the same server
    path = state / "clusters" / "member2.yaml"
    doc = yaml.safe_load(path.read_text())
    doc["spec"].pop("secretRef")
    doc["spec"]["impersonatorSecretRef"] = {"namespace": "karmada-cluster", "name": "member2-impersonator"}
    path.write_text(yaml.safe_dump(doc))
    code, _out, err = cli("reconcile", "--now", at(1))
    assert code == 3, err
    assert "spec.impersonatorSecretRef (karmada-cluster/member2-impersonator)" in err
    assert "member member1" not in err

    doc["spec"].pop("impersonatorSecretRef")
    doc["spec"]["insecureSkipTLSVerification"] = True
    path.write_text(yaml.safe_dump(doc))
    code, _out, err = cli("reconcile", "--now", at(2))
    assert code == 3, err
    assert ("spec.insecureSkipTLSVerification is true but its kubeconfig" in err
            and "verifies the server's certificate" in err)
    # the operator's kubeconfig skips verification too: the field holds, the member is served
    kc = two.kubeconfig("member2")
    cfg = yaml.safe_load(kc.read_text())
    entry = cfg["clusters"][0]["cluster"]
    entry.pop("certificate-authority-data")
    entry["insecure-skip-tls-verify"] = True
    kc.write_text(yaml.safe_dump(cfg))
    two.clear_logs()
    code, _out, err = cli("reconcile", "--now", at(3))
    assert code == 0, err
    assert _requests(two["member2"]) > 0


# ---------------------------------------------------------------------------- proxies
def test_proxy_url_carries_the_members_requests_once_the_operator_allows_it(cli, state, two):
    with HttpProxy() as proxy:
        for name in ("member1", "member2"):
            _spec(state, name, proxyURL=proxy.url, proxyHeader={"X-Fleet-Token": "fleet-abc123", "X-Route": name})
        code, _out, err = cli("--allow-proxy", proxy.url + "/", "reconcile", "--now", at(0))
        assert code == 0, err
        assert two.deploy("member1") is not None and two.deploy("member2") is not None
        connects = [r for r in proxy.requests if r[0] == "CONNECT"]
        assert connects and all(t == f"127.0.0.1:{two['member2'].port}" for _m, t, _h in connects)
        assert all(h.get("X-Fleet-Token") == "fleet-abc123" and h.get("X-Route") == "member2"
                   for _m, _t, h in connects)
        forwarded = [r for r in proxy.requests if r[1].startswith(two["member1"].url)]
        assert forwarded and all(h.get("X-Route") == "member1" for _m, _t, h in forwarded)
        assert len(connects) + len(forwarded) == len(proxy.requests)

        # without the operator's consent the proxy named by the state file gets nothing, nor does the member
        seen = len(proxy.requests)
        two.clear_logs()
        code, _out, err = cli("reconcile", "--now", at(1))
        assert code == 3, err
        assert f"spec.proxyURL {proxy.url} is not a proxy the operator configured" in err
        assert "--allow-proxy URL or KARMACTL_ALLOWED_PROXIES" in err
        assert len(proxy.requests) == seen and _requests(two["member1"]) == 0 and _requests(two["member2"]) == 0

        # the kubeconfig's own proxy-url is the operator's consent too
        kc = two.kubeconfig("member2")
        cfg = yaml.safe_load(kc.read_text())
        cfg["clusters"][0]["cluster"]["proxy-url"] = proxy.url
        kc.write_text(yaml.safe_dump(cfg))
        code, _out, err = cli("reconcile", "--now", at(2))
        assert code == 3, err  # member1's proxy is still not consented
        assert "member member2" not in err
        assert len(proxy.requests) > seen

    # a dead proxy (consented) fails the member: nothing reaches it another way
    gone = f"http://127.0.0.1:{dead_port()}"
    _spec(state, "member2", proxyURL=gone)
    _spec(state, "member1", proxyURL="", proxyHeader={"X-Stray": "1"})
    two.clear_logs()
    code, _out, err = cli("--allow-proxy", gone, "reconcile", "--now", at(3))
    assert code == 3, err
    assert "member member2: cluster is not reachable" in err
    assert _requests(two["member2"]) == 0
    assert ("warning: Cluster member1: spec.proxyHeader is set without spec.proxyURL: it is sent to no proxy"
            in err)

    _spec(state, "member2", proxyURL="socks5://127.0.0.1:1080")
    code, _out, err = cli("--allow-proxy", "socks5://127.0.0.1:1080", "reconcile", "--now", at(4))
    assert code == 3, err
    assert "a socks5 proxy is not supported" in err


@pytest.mark.parametrize("endpoint, server, same", [
    ("https://10.0.0.1:6443", "https://10.0.0.1:6443/", True),
    ("10.0.0.1:6443", "https://10.0.0.1:6443", True),  # no scheme: https, as Karmada's TLS client config
    ("https://API.example", "https://api.example:443", True),
    ("https://[::1]:6443", "https://[::1]:6443", True),
    ("https://rancher.example/k8s/clusters/c-1", "https://rancher.example/k8s/clusters/c-1/", True),
    ("10.0.0.1:6443", "http://10.0.0.1:6443", False),
    ("https://10.0.0.1:6443", "https://10.0.0.2:6443", False),
    ("https://rancher.example/k8s/clusters/c-1", "https://rancher.example/k8s/clusters/c-2", False),
])
def test_api_endpoint_spellings(endpoint, server, same):
    from types import SimpleNamespace

    from karmactl.members.kubeconfig import AccessError, ClusterAccess, Connection, apply_connection

    access = ClusterAccess("m", ("kc",), "m", connection=Connection(api_endpoint=endpoint))
    cfg = SimpleNamespace(host=server.rstrip("/"), verify_ssl=True, proxy=None)
    if same:
        assert apply_connection(access, cfg) == {}
    else:
        with pytest.raises(AccessError, match="is not the server of its kubeconfig"):
            apply_connection(access, cfg)
