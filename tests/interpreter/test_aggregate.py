"""AggregateStatus into the template (semantics §10.2)."""
import pytest

from karmactl.interpreter import InterpreterError, aggregate_status, has_aggregate_hook


def template(api, kind, status=None, generation=2, spec=None):
    out = {"apiVersion": api, "kind": kind, "metadata": {"name": "x", "namespace": "ns", "generation": generation},
           "spec": spec or {}}
    if status is not None:
        out["status"] = status
    return out


def item(cluster, status=None, applied=True):
    out = {"clusterName": cluster, "applied": applied, "health": "Healthy"}
    if status is not None:
        out["status"] = status
    return out


def fed(gen=2, tgen=2, observed=2, **counters):
    return {"generation": gen, "resourceTemplateGeneration": tgen, "observedGeneration": observed, **counters}


# --- Deployment and the generation rule ------------------------------------------------------

DEPLOY = ("apps/v1", "Deployment")

DEPLOYMENT_CASES = [
    ("sums-and-observes",
     template(*DEPLOY, {"conditions": [{"type": "Available"}]}),
     [item("m1", fed(replicas=2, readyReplicas=2, updatedReplicas=2, availableReplicas=2)),
      item("m2", fed(replicas=1, readyReplicas=0, updatedReplicas=1, unavailableReplicas=1))],
     {"conditions": [{"type": "Available"}], "observedGeneration": 2, "replicas": 3, "readyReplicas": 2,
      "updatedReplicas": 3, "availableReplicas": 2, "unavailableReplicas": 1}),
    ("member-behind-keeps-old-observed",
     template(*DEPLOY, {"observedGeneration": 1}),
     [item("m1", fed(replicas=2)), item("m2", fed(observed=1, replicas=2))],
     {"observedGeneration": 1, "replicas": 4}),
    ("member-rendered-from-old-template",
     template(*DEPLOY, {"observedGeneration": 1}),
     [item("m1", fed(tgen=1, replicas=2))],
     {"observedGeneration": 1, "replicas": 2}),
    ("item-without-status-blocks-observed",
     template(*DEPLOY, {}),
     [item("m1", fed(replicas=2)), item("m2", None, applied=False)],
     {"replicas": 2}),
    ("no-items-observes-generation",
     template(*DEPLOY, {}), [], {"observedGeneration": 2}),
]


@pytest.mark.parametrize("tmpl,items,expected", [c[1:] for c in DEPLOYMENT_CASES],
                         ids=[c[0] for c in DEPLOYMENT_CASES])
def test_deployment(tmpl, items, expected):
    assert aggregate_status(tmpl, items) == expected


def test_deployment_unchanged_returns_same_status():
    status = {"observedGeneration": 2, "replicas": 2, "conditions": [{"type": "Progressing"}]}
    tmpl = template(*DEPLOY, status)
    assert aggregate_status(tmpl, [item("m1", fed(replicas=2))]) == status


def test_deployment_zero_counters_dropped():
    tmpl = template(*DEPLOY, {"observedGeneration": 2, "replicas": 3, "readyReplicas": 3})
    assert aggregate_status(tmpl, [item("m1", fed(replicas=0))]) == {"observedGeneration": 2}


def test_replicaset_keeps_replicas_zero():
    tmpl = template("apps/v1", "ReplicaSet", {"replicas": 2})
    assert aggregate_status(tmpl, [item("m1", fed(readyReplicas=0))]) == {"replicas": 0, "observedGeneration": 2}


def test_statefulset_quirk_compares_member_generation():
    # The template is at generation 5 but the member reports resourceTemplateGeneration 2 == its own
    # generation: StatefulSet still counts it as caught up.
    tmpl = template("apps/v1", "StatefulSet", {}, generation=5)
    out = aggregate_status(tmpl, [item("m1", fed(gen=2, tgen=2, observed=2, replicas=1, readyReplicas=1))])
    assert out == {"observedGeneration": 5, "replicas": 1, "readyReplicas": 1, "availableReplicas": 0}
    deploy = template(*DEPLOY, {}, generation=5)
    assert "observedGeneration" not in aggregate_status(deploy, [item("m1", fed(gen=2, tgen=2, replicas=1))])


def test_daemonset():
    tmpl = template("apps/v1", "DaemonSet", {})
    items = [item("a", fed(desiredNumberScheduled=2, numberReady=2, currentNumberScheduled=2, numberAvailable=2)),
             item("b", fed(desiredNumberScheduled=1, numberReady=0, currentNumberScheduled=1, numberUnavailable=1))]
    assert aggregate_status(tmpl, items) == {
        "currentNumberScheduled": 3, "numberMisscheduled": 0, "desiredNumberScheduled": 3, "numberReady": 2,
        "observedGeneration": 2, "numberAvailable": 2, "numberUnavailable": 1}


# --- Job -------------------------------------------------------------------------------------

JOB = ("batch/v1", "Job")
COMPLETE = {"type": "Complete", "status": "True"}
FAILED = {"type": "Failed", "status": "True"}
CRITERIA = {"type": "SuccessCriteriaMet", "status": "True"}


def job_status(**kw):
    return kw


JOB_CASES = [
    ("running-sums",
     template(*JOB, {}),
     [item("a", job_status(active=1, startTime="2026-01-01T00:00:05Z")),
      item("b", job_status(active=2, succeeded=1, startTime="2026-01-01T00:00:01Z"))],
     {"startTime": "2026-01-01T00:00:01Z", "active": 3, "succeeded": 1}),
    ("not-all-started-no-start-time",
     template(*JOB, {}),
     [item("a", job_status(active=1, startTime="2026-01-01T00:00:05Z")), item("b", job_status())],
     {"active": 1}),
    ("template-start-time-kept",
     template(*JOB, {"startTime": "2025-12-31T00:00:00Z"}),
     [item("a", job_status(active=1, startTime="2026-01-01T00:00:05Z"))],
     {"startTime": "2025-12-31T00:00:00Z", "active": 1}),
    ("all-complete",
     template(*JOB, {}),
     [item("a", job_status(succeeded=2, conditions=[COMPLETE], startTime="2026-01-01T00:00:00Z",
                           completionTime="2026-01-01T00:01:00Z")),
      item("b", job_status(succeeded=3, conditions=[COMPLETE], startTime="2026-01-01T00:00:02Z",
                           completionTime="2026-01-01T00:02:00Z"))],
     {"conditions": [{"type": "Complete", "status": "True", "reason": "Completed", "message": "Job completed"}],
      "startTime": "2026-01-01T00:00:00Z", "completionTime": "2026-01-01T00:02:00Z", "succeeded": 5}),
    ("all-complete-and-success-criteria",
     template(*JOB, {}),
     [item("a", job_status(succeeded=1, conditions=[CRITERIA, COMPLETE]))],
     {"conditions": [{"type": "Complete", "status": "True", "reason": "Completed", "message": "Job completed"},
                     {"type": "SuccessCriteriaMet", "status": "True", "reason": "CompletionsReached",
                      "message": "All member clusters have met success criteria"}],
      "succeeded": 1}),
    ("one-failed",
     template(*JOB, {}),
     [item("a", job_status(failed=1, conditions=[FAILED])), item("b", job_status(failed=2, conditions=[FAILED])),
      item("c", job_status(active=1))],
     {"conditions": [{"type": "Failed", "status": "True", "reason": "JobFailed",
                      "message": "Job executed failed in member clusters a,b"}],
      "active": 1, "failed": 3}),
    ("partial-complete-not-complete",
     template(*JOB, {}),
     [item("a", job_status(succeeded=1, conditions=[COMPLETE])), item("b", None, applied=False)],
     {"succeeded": 1}),
    ("no-items-not-complete", template(*JOB, {"active": 1}), [], {}),
]


@pytest.mark.parametrize("tmpl,items,expected", [c[1:] for c in JOB_CASES], ids=[c[0] for c in JOB_CASES])
def test_job(tmpl, items, expected):
    assert aggregate_status(tmpl, items) == expected


def test_job_finished_template_is_final():
    status = {"conditions": [{"type": "Complete", "status": "True"}], "succeeded": 4}
    assert aggregate_status(template(*JOB, status), [item("a", job_status(active=3))]) == status


def test_job_condition_times_from_now():
    out = aggregate_status(template(*JOB, {}), [item("a", job_status(conditions=[COMPLETE]))],
                           now="2026-02-01T00:00:00Z")
    cond = out["conditions"][0]
    assert cond["lastProbeTime"] == cond["lastTransitionTime"] == "2026-02-01T00:00:00Z"


# --- the rest --------------------------------------------------------------------------------

OTHER_CASES = [
    ("cronjob",
     template("batch/v1", "CronJob", {}),
     [item("a", {"active": [{"name": "j1"}], "lastScheduleTime": "2026-01-01T00:00:00Z",
                 "lastSuccessfulTime": "2026-01-01T00:10:00Z"}),
      item("b", {"active": [{"name": "j2"}], "lastScheduleTime": "2026-01-01T01:00:00Z"})],
     {"active": [{"name": "j1"}, {"name": "j2"}], "lastScheduleTime": "2026-01-01T01:00:00Z",
      "lastSuccessfulTime": "2026-01-01T00:10:00Z"}),
    ("pod-failed-wins",
     template("v1", "Pod", {}),
     [item("a", {"phase": "Running", "containerStatuses": [{"name": "c", "ready": True, "restartCount": 3,
                                                              "state": {"running": {}}}]}),
      item("b", {"phase": "Failed"})],
     {"phase": "Failed", "containerStatuses": [{"ready": True, "state": {"running": {}}}]}),
    ("pod-missing-status-is-pending",
     template("v1", "Pod", {}), [item("a", {"phase": "Running"}), item("b")], {"phase": "Pending"}),
    ("pod-all-succeeded", template("v1", "Pod", {}), [item("a", {"phase": "Succeeded"})], {"phase": "Succeeded"}),
    ("pv-pending-for-missing", template("v1", "PersistentVolume", {}), [item("a", {"phase": "Bound"}), item("b")],
     {"phase": "Pending"}),
    ("pv-bound", template("v1", "PersistentVolume", {}), [item("a", {"phase": "Bound"})], {"phase": "Bound"}),
    ("pvc-all-bound", template("v1", "PersistentVolumeClaim", {}), [item("a", {"phase": "Bound"})],
     {"phase": "Bound"}),
    ("pvc-lost-wins", template("v1", "PersistentVolumeClaim", {}),
     [item("a", {"phase": "Pending"}), item("b", {"phase": "Lost"}), item("c", {"phase": "Pending"})],
     {"phase": "Lost"}),
    ("pvc-pending", template("v1", "PersistentVolumeClaim", {"phase": "Bound", "capacity": {"storage": "1Gi"}}),
     [item("a", {"phase": "Bound"}), item("b", {"phase": "Pending"})], {"phase": "Pending"}),
    ("pdb",
     template("policy/v1", "PodDisruptionBudget", {}),
     [item("a", {"currentHealthy": 2, "desiredHealthy": 1, "expectedPods": 2, "disruptionsAllowed": 1,
                 "disruptedPods": {"p1": "2026-01-01T00:00:00Z"}}),
      item("b", {"currentHealthy": 1, "desiredHealthy": 1, "expectedPods": 1})],
     {"disruptedPods": {"a/p1": "2026-01-01T00:00:00Z"}, "disruptionsAllowed": 1, "currentHealthy": 3,
      "desiredHealthy": 2, "expectedPods": 3}),
    ("hpa", template("autoscaling/v2", "HorizontalPodAutoscaler", {}),
     [item("a", {"currentReplicas": 2, "desiredReplicas": 3}), item("b", {"desiredReplicas": 1})],
     {"currentReplicas": 2, "desiredReplicas": 4}),
]


@pytest.mark.parametrize("tmpl,items,expected", [c[1:] for c in OTHER_CASES], ids=[c[0] for c in OTHER_CASES])
def test_other_kinds(tmpl, items, expected):
    assert aggregate_status(tmpl, items) == expected


LB = {"type": "LoadBalancer"}

LB_CASES = [
    ("union-sorted-deduped",
     [item("b", {"loadBalancer": {"ingress": [{"ip": "10.0.0.2"}, {"hostname": "b.example"}]}}),
      item("a", {"loadBalancer": {"ingress": [{"ip": "10.0.0.1"}, {"ip": "10.0.0.2"}]}})],
     {"loadBalancer": {"ingress": [{"hostname": "b.example"}, {"ip": "10.0.0.1"}, {"ip": "10.0.0.2"}]}}),
    ("ports-unioned",
     [item("a", {"loadBalancer": {"ingress": [{"ip": "1.1.1.1", "ports": [{"port": 443, "protocol": "TCP"}]}]}}),
      item("b", {"loadBalancer": {"ingress": [{"ip": "1.1.1.1", "ports": [{"port": 80, "protocol": "TCP"},
                                                                          {"port": 443, "protocol": "TCP"}]}]}})],
     {"loadBalancer": {"ingress": [{"ip": "1.1.1.1", "ports": [{"port": 80, "protocol": "TCP"},
                                                              {"port": 443, "protocol": "TCP"}]}]}}),
    ("nothing-yet", [item("a", {"loadBalancer": {}}), item("b")], {"loadBalancer": {}}),
]


@pytest.mark.parametrize("items,expected", [c[1:] for c in LB_CASES], ids=[c[0] for c in LB_CASES])
def test_service_lb_union(items, expected):
    assert aggregate_status(template("v1", "Service", {}, spec=LB), items) == expected


def test_service_ip_mode_distinguishes_entries():
    items = [item("a", {"loadBalancer": {"ingress": [{"ip": "1.1.1.1", "ipMode": "VIP"}]}}),
             item("b", {"loadBalancer": {"ingress": [{"ip": "1.1.1.1"}]}})]
    out = aggregate_status(template("v1", "Service", {}, spec=LB), items)
    assert out == {"loadBalancer": {"ingress": [{"ip": "1.1.1.1", "ipMode": "VIP"}, {"ip": "1.1.1.1"}]}}


def test_service_not_lb_unchanged():
    tmpl = template("v1", "Service", {"loadBalancer": {}}, spec={"type": "ClusterIP"})
    assert aggregate_status(tmpl, [item("a", {"loadBalancer": {"ingress": [{"ip": "x"}]}})]) == {"loadBalancer": {}}


def test_ingress_union():
    tmpl = template("networking.k8s.io/v1", "Ingress", {})
    items = [item("a", {"loadBalancer": {"ingress": [{"ip": "2.2.2.2"}]}}),
             item("b", {"loadBalancer": {"ingress": [{"ip": "1.1.1.1"}, {"ip": "2.2.2.2"}]}})]
    assert aggregate_status(tmpl, items) == {"loadBalancer": {"ingress": [{"ip": "1.1.1.1"}, {"ip": "2.2.2.2"}]}}


def test_unchanged_status_is_a_copy():
    status = {"phase": "Bound"}
    tmpl = template("v1", "PersistentVolumeClaim", status)
    out = aggregate_status(tmpl, [item("a", {"phase": "Bound"})])
    assert out == status and out is not status


@pytest.mark.parametrize("api,kind", [("v1", "ConfigMap"), ("apps/v1beta1", "Deployment"), ("example.io/v1", "W")])
def test_no_hook(api, kind):
    assert not has_aggregate_hook(api, kind)
    assert aggregate_status(template(api, kind, {}), [item("a", {"x": 1})]) is None


def test_bad_member_status_raises():
    with pytest.raises(InterpreterError):
        aggregate_status(template(*DEPLOY, {}), [item("a", "garbage")])
