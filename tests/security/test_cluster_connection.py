"""A merge request that edits a Cluster's connection fields to send the member's credentials elsewhere
(issue 27, item 2; docs/security.md, "Members and credentials").

The operator's kubeconfig (in the kubeconfig directory) holds the CI secret as its bearer token. The
merge request cannot touch it, but it can write the Cluster's ``spec``: a ``proxyURL`` naming the
attacker's proxy with ``insecureSkipTLSVerification`` (a proxy that sees every request of a plain-http
member, and could intercept TLS if verification were off), and an ``apiEndpoint`` naming the attacker's
server. Run as the pipeline runs ``reconcile``, neither the proxy nor the server receives anything; the
operator's ``KARMACTL_ALLOWED_PROXIES`` is what makes a proxy used.
"""
from __future__ import annotations

import yaml

from tests.conftest import write
from tests.http_proxy import HttpProxy
from tests.security.mr import SECRET, assert_no_secret, run, secret_file

from .test_members import _operator_environment, emulated, kubeconfig, recorder, workload  # noqa: F401 - fixtures


def _cluster(state, name: str, spec: dict, kubeconfigs) -> None:
    write(state / "clusters" / f"{name}.yaml", yaml.safe_dump({
        "apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster",
        "metadata": {"name": name, "annotations": {"karmactl.io/kubeconfig": str(kubeconfigs / f"{name}.yaml"),
                                                   "karmactl.io/context": name}},
        "spec": {"syncMode": "Push", **spec}}))


def test_a_state_file_cannot_route_member_credentials_through_its_proxy_or_endpoint(tmp_path, emulated, recorder):
    state = tmp_path / "state"
    state.mkdir()
    secret_file(tmp_path)
    url, seen = recorder
    members = {}
    kubeconfigs = tmp_path / "operator-kubeconfigs"  # the CI job's, outside the state directory
    env = {"KARMACTL_KUBECONFIG_DIR": str(kubeconfigs)}
    for name in ("member1", "member2"):
        members[name] = srv = emulated(state, name)
        kubeconfig(kubeconfigs / f"{name}.yaml", srv.url, {"token": SECRET}, name=name)
    workload(state, ["member1", "member2"])
    with HttpProxy() as proxy:
        # the merge request: member1 through the attacker's proxy, member2 at the attacker's endpoint
        _cluster(state, "member1", {"apiEndpoint": members["member1"].url, "proxyURL": proxy.url,
                                    "proxyHeader": {"X-Exfil": "1"}, "insecureSkipTLSVerification": True}, kubeconfigs)
        _cluster(state, "member2", {"apiEndpoint": url}, kubeconfigs)
        result = run(state, "reconcile", env=env)
        assert result.code == 3, result.err
        assert f"spec.proxyURL {proxy.url} is not a proxy the operator configured" in result.err
        assert f"member member2: failed to create a ClusterClient: Cluster member2: spec.apiEndpoint {url}" in result.err
        assert proxy.requests == [], proxy.requests
        assert seen == [], seen
        assert not members["member1"].request_log and not members["member2"].request_log
        assert_no_secret(result, state)

        # the operator's consent is what routes member1 through the proxy
        consented = run(state, "reconcile", env={**env, "KARMACTL_ALLOWED_PROXIES": proxy.url})
        assert "member member1" not in consented.err, consented.err
        assert proxy.requests and all(h.get("X-Exfil") == "1" for _m, _t, h in proxy.requests)
        assert seen == []
