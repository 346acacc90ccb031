"""Flux (``helm.toolkit.fluxcd.io``, ``kustomize.toolkit.fluxcd.io``, ``source.toolkit.fluxcd.io``):
HelmRelease, Kustomization, GitRepository, Bucket, HelmChart, HelmRepository, OCIRepository.

Written from Flux's API conventions (``fluxcd/pkg/apis/meta``): every object reports a ``Ready``
condition whose reason says whether the last reconciliation succeeded, ``observedGeneration``,
and kind-specific fields (the source ``artifact`` and ``url``, the last applied/attempted
revisions, Helm failure counters); ``spec.suspend`` stops reconciliation where the object runs;
credentials are Secrets named by ``secretRef`` fields. Karmada's rules:
``resourcecustomizations/{helm,kustomize,source}.toolkit.fluxcd.io/``.
"""
from __future__ import annotations

from karmactl.api.objects import deepcopy

from . import Rules
from ._util import (dig, generation_report, has_condition, last_set, merged_conditions, named_refs, number,
                    observed_generation, pick, template_status, total, with_path)


def _ready(*reasons):
    """Healthy when the ``Ready`` condition is True with one of ``reasons``."""
    return lambda obj: has_condition(obj, "Ready", "True", reasons)


def _retain_suspend(desired: dict, observed: dict) -> dict:
    """``spec.suspend`` as the member has it (suspending is done where the object runs)."""
    suspend = dig(observed, "spec", "suspend")
    return deepcopy(desired) if suspend is None else with_path(desired, suspend, "spec", "suspend")


def _reflect(keys):
    def reflect(obj: dict) -> dict:
        status = obj.get("status")
        if not isinstance(status, dict):
            return {}
        return generation_report(obj, pick(status, ("conditions", "observedGeneration") + keys))
    return reflect


def _aggregate(strings=(), others=(), counters=(), empty=None):
    """Merged conditions (:func:`merged_conditions`), ``observedGeneration`` once every member
    caught up, the last member's non-empty value of each of ``strings`` and present value of each of
    ``others``, and ``counters`` summed. Without members: ``empty`` fields, no conditions and the
    template's generation observed."""
    def aggregate(template: dict, items, _now) -> dict:
        status = template_status(template)
        if not items:
            status.update(deepcopy(empty or {}))
            status["conditions"] = []
            status["observedGeneration"] = number(dig(template, "metadata", "generation"))
            return status
        status["observedGeneration"] = observed_generation(template, items)
        status["conditions"] = merged_conditions(items)
        for key in strings:
            value = last_set(items, key)
            if value is not None:
                status[key] = value
        for key in others:
            value = last_set(items, key, empty=())
            if value is not None:
                status[key] = deepcopy(value)
        for key in counters:
            if last_set(items, key, empty=()) is not None:
                status[key] = total(items, key)
        return status
    return aggregate


def _secrets(obj: dict, *paths) -> list[dict]:
    return named_refs(obj, [("Secret", [dig(obj, "spec", *p, "name") for p in paths])])


# --- helm.toolkit.fluxcd.io HelmRelease ------------------------------------------------------

_HELM_COUNTERS = ("failures", "upgradeFailures", "installFailures")


def _helmrelease_dependencies(obj: dict) -> list[dict]:
    values_from = [v for v in dig(obj, "spec", "valuesFrom") or [] if isinstance(v, dict)]
    return named_refs(obj, [
        ("Secret", [v.get("name") for v in values_from if v.get("kind") == "Secret"]
         + [dig(obj, "spec", "chart", "spec", "verify", "secretRef", "name"),
            dig(obj, "spec", "kubeConfig", "secretRef", "name")]),
        ("ServiceAccount", [dig(obj, "spec", "serviceAccountName")]),
        ("ConfigMap", [v.get("name") for v in values_from if v.get("kind") == "ConfigMap"]),
    ])


HELMRELEASE = Rules(
    health=_ready("ReconciliationSucceeded"),
    aggregate=_aggregate(strings=("lastAttemptedRevision", "lastAppliedRevision", "lastAttemptedValuesChecksum",
                                  "helmChart"), others=("lastReleaseRevision",), counters=_HELM_COUNTERS,
                         empty={"lastAttemptedRevision": "", "lastAppliedRevision": "", "helmChart": "",
                                "lastAttemptedValuesChecksum": "", "failures": 0, "upgradeFailures": 0,
                                "installFailures": 0}),
    retain=_retain_suspend,
    reflect=_reflect(("lastAttemptedRevision", "lastAppliedRevision", "lastAttemptedValuesChecksum", "helmChart",
                      "lastReleaseRevision") + _HELM_COUNTERS),
    dependencies=_helmrelease_dependencies)

# --- kustomize.toolkit.fluxcd.io Kustomization -------------------------------------------------

KUSTOMIZATION = Rules(
    health=_ready("ReconciliationSucceeded"),
    aggregate=_aggregate(strings=("lastAttemptedRevision", "lastAppliedRevision"),
                         empty={"lastAttemptedRevision": "", "lastAppliedRevision": ""}),
    retain=_retain_suspend,
    reflect=_reflect(("lastAppliedRevision", "lastAttemptedRevision")),
    dependencies=lambda obj: named_refs(obj, [
        ("Secret", [dig(obj, "spec", "decryption", "secretRef", "name"),
                    dig(obj, "spec", "kubeConfig", "secretRef", "name")]),
        ("ServiceAccount", [dig(obj, "spec", "serviceAccountName")])]))

# --- source.toolkit.fluxcd.io ------------------------------------------------------------------


def _source(reflected, strings=(), empty=None, ready=("Succeeded",), secrets=(), service_account=False):
    def dependencies(obj: dict) -> list[dict]:
        refs = _secrets(obj, *secrets)
        if service_account:
            refs += named_refs(obj, [("ServiceAccount", [dig(obj, "spec", "serviceAccountName")])])
        return refs
    return Rules(
        health=_ready(*ready),
        aggregate=_aggregate(strings=strings, others=("artifact",), empty=dict({"artifact": {}}, **(empty or {}))),
        retain=_retain_suspend, reflect=_reflect(("artifact",) + reflected), dependencies=dependencies)


GITREPOSITORY = _source(("observedIgnore", "observedRecurseSubmodules"),
                        secrets=(("secretRef",), ("verify", "secretRef")))
BUCKET = _source(("observedIgnore", "url"), strings=("url",), empty={"url": ""}, secrets=(("secretRef",),))
HELMCHART = _source(("observedChartName", "observedSourceArtifactRevision", "url"),
                    strings=("observedChartName", "observedSourceArtifactRevision", "url"),
                    empty={"observedChartName": "", "observedSourceArtifactRevision": "", "url": ""},
                    ready=("Succeeded", "ChartPullSucceeded"), secrets=(("verify", "secretRef"),))
HELMREPOSITORY = _source(("url",), strings=("url",), empty={"url": ""}, secrets=(("secretRef",),))
OCIREPOSITORY = _source(("url", "observedIgnore", "observedLayerSelector"), strings=("url",), empty={"url": ""},
                        secrets=(("secretRef",), ("verify", "secretRef"), ("certSecretRef",)), service_account=True)

RULES = {
    ("helm.toolkit.fluxcd.io/v2beta1", "HelmRelease"): HELMRELEASE,
    ("kustomize.toolkit.fluxcd.io/v1", "Kustomization"): KUSTOMIZATION,
    ("source.toolkit.fluxcd.io/v1", "GitRepository"): GITREPOSITORY,
    ("source.toolkit.fluxcd.io/v1beta2", "Bucket"): BUCKET,
    ("source.toolkit.fluxcd.io/v1beta2", "HelmChart"): HELMCHART,
    ("source.toolkit.fluxcd.io/v1beta2", "HelmRepository"): HELMREPOSITORY,
    ("source.toolkit.fluxcd.io/v1beta2", "OCIRepository"): OCIREPOSITORY,
}
