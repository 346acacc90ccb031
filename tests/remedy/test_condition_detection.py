"""Condition detection: thresholds across runs (pure), the command probe and the DNS probe."""
from __future__ import annotations

import sys

import pytest

from karmactl.api.objects import add_seconds, get_condition
from karmactl.api.snapshot import Settings
from karmactl.controllers.condition_detection import Observation, advance, apply_observation
from karmactl.members import detection

from tests.remedy.helpers import install_dns, set_dns_ready

T0 = "2026-01-01T00:00:00Z"
KEY = ("cluster.karmada.io", "Cluster", "", "member1")
CLUSTER = {"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster", "metadata": {"name": "member1"},
           "spec": {"syncMode": "Push", "apiEndpoint": "https://m1:6443"},
           "status": {"conditions": [{"type": "Ready", "status": "True", "reason": "ClusterReady", "message": "",
                                      "lastTransitionTime": T0}]}}
OK, FAIL = Observation(True, "probe"), Observation(False, "probe", "broken")
DNS = "ServiceDomainNameResolutionReady"


def at(seconds):
    return add_seconds(T0, seconds)


# --------------------------------------------------------------------------- advance


def test_first_observation_sets_state_directly():
    assert advance(None, False, T0, 30, 30) == {"detected": False, "contraryObservedSince": None}
    assert advance(None, True, T0, 30, 30) == {"detected": True, "contraryObservedSince": None}


def test_failure_must_last_the_failure_threshold():
    s = advance(None, True, at(0), 30, 10)
    s = advance(s, False, at(5), 30, 10)
    assert s == {"detected": True, "contraryObservedSince": at(5)}
    s = advance(s, False, at(34), 30, 10)
    assert s["detected"] is True and s["contraryObservedSince"] == at(5)
    s = advance(s, False, at(35), 30, 10)
    assert s == {"detected": False, "contraryObservedSince": None}


def test_success_must_last_the_success_threshold():
    s = {"detected": False, "contraryObservedSince": None}
    s = advance(s, True, at(0), 10, 30)
    assert s == {"detected": False, "contraryObservedSince": at(0)}
    assert advance(s, True, at(29), 10, 30)["detected"] is False
    assert advance(s, True, at(30), 10, 30) == {"detected": True, "contraryObservedSince": None}


def test_an_agreeing_observation_resets_the_contrary_timer():
    s = advance({"detected": True, "contraryObservedSince": None}, False, at(0), 30, 30)
    s = advance(s, True, at(20), 30, 30)
    assert s == {"detected": True, "contraryObservedSince": None}
    s = advance(s, False, at(40), 30, 30)
    assert advance(s, False, at(60), 30, 30)["detected"] is True  # only 20 s of the new failure streak


def test_zero_threshold_flips_at_once():
    assert advance({"detected": True, "contraryObservedSince": None}, False, T0, 0, 0)["detected"] is False


# --------------------------------------------------------------------------- apply_observation


def test_runs_at_increasing_now_flip_the_condition_after_the_threshold():
    ov = apply_observation(KEY, CLUSTER, None, OK, at(0))
    cond = get_condition(ov, DNS)
    assert (cond["status"], cond["reason"]) == ("True", "ServiceDomainNameResolutionReady")
    assert cond["message"] == "service domain name resolution is ready (probe)"
    assert get_condition(ov, "Ready")["status"] == "True"  # the file's status is kept
    ov = apply_observation(KEY, CLUSTER, ov, FAIL, at(10))
    assert get_condition(ov, DNS)["status"] == "True"
    assert ov["observed"]["conditionDetection"][DNS] == {"detected": True, "contraryObservedSince": at(10)}
    ov = apply_observation(KEY, CLUSTER, ov, FAIL, at(40))
    cond = get_condition(ov, DNS)
    assert (cond["status"], cond["reason"], cond["lastTransitionTime"]) == \
        ("False", "ServiceDomainNameResolutionFailed", at(40))
    assert cond["message"] == "service domain name resolution is unready (probe: broken)"
    ov = apply_observation(KEY, CLUSTER, ov, OK, at(50))
    assert get_condition(ov, DNS)["status"] == "False"
    ov = apply_observation(KEY, CLUSTER, ov, OK, at(80))
    assert get_condition(ov, DNS)["status"] == "True"


def test_thresholds_come_from_arguments():
    ov = apply_observation(KEY, CLUSTER, None, OK, at(0), failure_threshold=5, success_threshold=5)
    ov = apply_observation(KEY, CLUSTER, ov, FAIL, at(1), failure_threshold=5, success_threshold=5)
    ov = apply_observation(KEY, CLUSTER, ov, FAIL, at(6), failure_threshold=5, success_threshold=5)
    assert get_condition(ov, DNS)["status"] == "False"


def test_unknown_changes_nothing_and_unchanged_returns_the_same_overlay():
    ov = apply_observation(KEY, CLUSTER, None, OK, at(0))
    assert apply_observation(KEY, CLUSTER, ov, Observation(None, "probe", "?"), at(10)) is ov
    assert apply_observation(KEY, CLUSTER, None, Observation(None, "probe"), at(10)) is None
    assert apply_observation(KEY, CLUSTER, ov, OK, at(20)) is ov


# --------------------------------------------------------------------------- settings and the command probe


def settings(**data):
    return Settings(extra={k: str(v) for k, v in data.items()})


def test_detection_settings_defaults_and_errors():
    assert detection.detection_settings(settings()) == ("auto", None, 10.0)
    assert detection.detection_settings(settings(conditionDetection="true"))[0] is True
    assert detection.detection_settings(settings(conditionDetection="false", conditionDetectionCommand="check {cluster}",
                                                 conditionDetectionTimeout="3s")) == (False, ["check", "{cluster}"], 3.0)
    with pytest.raises(detection.DetectionConfigError, match="conditionDetectionTimeout"):
        detection.detection_settings(settings(conditionDetectionTimeout="soon"))
    with pytest.raises(detection.DetectionConfigError, match="conditionDetection:"):
        detection.detection_settings(settings(conditionDetection="maybe"))
    with pytest.raises(detection.DetectionConfigError, match="conditionDetectionCommand"):
        detection.detection_settings(settings(conditionDetectionCommand="check 'unclosed"))


def test_auto_probes_only_when_a_remedy_or_taint_policy_reads_the_condition():
    from karmactl.api.kinds import KindRegistry
    from karmactl.api.snapshot import Snapshot

    snap = Snapshot(KindRegistry.default())
    assert not detection.condition_consumed(snap)
    remedy = {"apiVersion": "remedy.karmada.io/v1alpha1", "kind": "Remedy", "metadata": {"name": "r"},
              "spec": {"decisionMatches": [{"clusterConditionMatch": {
                  "conditionType": "ServiceDomainNameResolutionReady", "operator": "Equal", "conditionStatus": "False"}}],
                  "actions": ["TrafficControl"]}}
    snap.user[("remedy.karmada.io", "Remedy", "", "r")] = remedy
    assert detection.condition_consumed(snap)
    snap.user.clear()
    ctp = {"apiVersion": "policy.karmada.io/v1alpha1", "kind": "ClusterTaintPolicy", "metadata": {"name": "t"},
           "spec": {"addOnConditions": [{"conditionType": "ServiceDomainNameResolutionReady", "operator": "In",
                                         "statusValues": ["False"]}], "taints": [{"key": "dns", "effect": "NoSchedule"}]}}
    snap.user[("policy.karmada.io", "ClusterTaintPolicy", "", "t")] = ctp
    assert detection.condition_consumed(snap)


def py(code):
    return [sys.executable, "-c", code]


def test_command_probe_substitutes_and_reads_the_exit_status():
    ok = detection.probe_command(py("import sys; sys.exit(0 if sys.argv[1:] == ['member1', 'https://m1:6443'] else 3)")
                                 + ["{cluster}", "{apiEndpoint}"], CLUSTER, 10)
    assert ok.success is True
    bad = detection.probe_command(py("import sys; print('nslookup failed', file=sys.stderr); sys.exit(2)"), CLUSTER, 10)
    assert (bad.success, bad.detail) == (False, "exit status 2: nslookup failed")
    assert bad.probe == f'command "{sys.executable}"'


def test_command_probe_timeout_is_a_failure_and_a_missing_command_unknown():
    slow = detection.probe_command(py("import time; time.sleep(5)"), CLUSTER, 0.3)
    assert (slow.success, slow.detail) == (False, "timed out after 0.3s")
    missing = detection.probe_command(["/nonexistent/karmactl-check"], CLUSTER, 1)
    assert missing.success is None and "cannot run" in missing.detail


# --------------------------------------------------------------------------- the DNS probe on an emulated member


@pytest.fixture
def member(tmp_path):
    from karmactl.emulator import MemberServer

    srv = MemberServer(name="member1", port=0, data_dir=str(tmp_path / "member1")).start()
    yield srv
    srv.close()


def api_client(member, tmp_path):
    """The member client a run probes with (``MemberClient``; its ``.api`` is a typed-API client)."""
    from karmactl.members.clients import MemberClient
    from karmactl.members.kubeconfig import ClusterAccess

    path = member.write_kubeconfig(str(tmp_path / "kubeconfig"))
    return MemberClient(ClusterAccess("member1", (path,), "member1"), timeout=5)


def test_dns_probe_unknown_without_a_dns_workload(member, tmp_path):
    obs = detection.probe_dns(api_client(member, tmp_path))
    assert obs.success is None and "k8s-app=kube-dns" in obs.detail


def test_dns_probe_ready_and_unready(member, tmp_path):
    api = api_client(member, tmp_path)
    install_dns(api.api)
    set_dns_ready(member, True)
    assert detection.probe_dns(api) == Observation(True, "kube-dns workload")
    set_dns_ready(member, False)
    obs = detection.probe_dns(api)
    assert obs.success is False and obs.detail == "kube-system/coredns has no ready replicas"


def test_dns_probe_needs_ready_endpoint_addresses(member, tmp_path):
    api = api_client(member, tmp_path)
    install_dns(api.api, endpoints=False)
    set_dns_ready(member, True)
    assert detection.probe_dns(api).detail == "Endpoints kube-system/kube-dns not found"
    from kubernetes import client as k8s
    k8s.CoreV1Api(api.api).create_namespaced_endpoints("kube-system", {
        "apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "kube-dns"},
        "subsets": [{"notReadyAddresses": [{"ip": "10.244.0.2"}], "ports": [{"port": 53}]}]})
    obs = detection.probe_dns(api)
    assert obs.success is False and "no ready addresses" in obs.detail


def test_dns_probe_unreachable_member_is_unknown(member, tmp_path):
    api = api_client(member, tmp_path)
    member.stop()
    obs = detection.probe_dns(api, timeout=2)
    assert obs.success is None and "cannot reach" in obs.detail
