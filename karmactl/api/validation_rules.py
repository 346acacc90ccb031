"""Karmada's webhook (and aggregated-apiserver) rules beyond the CRD schemas, one function per kind.

Followed files: ``pkg/util/validation/validation.go`` (PP/CPP/OP/COP), ``pkg/apis/cluster/validation/
validation.go`` and ``pkg/util/lifted/validateclustertaints.go`` (Cluster),
``pkg/webhook/clustertaintpolicy/validating.go``, ``pkg/webhook/resourcebinding/validating.go``,
``pkg/util/lifted/validatingmci.go`` (MultiClusterIngress = Ingress spec rules).

Every function takes the (defaulted) object's ``spec`` as loaded and must not fail on values of the
wrong type: the schema pass reports those, the rules here skip what they cannot read.
"""
from __future__ import annotations

import ipaddress
import json
from urllib.parse import urlsplit

from karmactl.api.constants import EFFECT_NO_EXECUTE, EFFECT_NO_SCHEDULE
from karmactl.api.jsonpath import JSONPathError, compile_template
from karmactl.api.quantity import QuantityError, canonical_string, parse_quantity
from karmactl.api.validation_fields import (
    FieldError, check_annotations, check_label_name, check_labels, child, dns1035_label, dns1123_label,
    dns1123_subdomain,
    duplicate, forbidden, index, invalid, json_pointer_error, label_value, not_supported, qualified_name, required,
    wrong_type,
)

MAX_INT64 = 2**63 - 1
DEPENDENCIES_ANNOTATION = "resourcebinding.karmada.io/dependencies"


def _d(value) -> dict:
    return value if isinstance(value, dict) else {}


def _l(value) -> list:
    return value if isinstance(value, list) else []


def _int(value) -> int | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return int(value)


# --- cluster affinity -------------------------------------------------------------------------

LABEL_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


def field_selector_errors(affinity, path: str) -> list[FieldError]:
    """``ValidatePolicyFieldSelector``: keys provider/region/zone, operators In/NotIn; Karmada stops at
    the first bad expression and reports it on ``<path>.fieldSelector``."""
    affinity = _d(affinity)
    for expr in _l(_d(affinity.get("fieldSelector")).get("matchExpressions")):
        expr = _d(expr)
        k, op = expr.get("key"), expr.get("operator")
        if k not in ("provider", "region", "zone"):
            return [invalid(child(path, "fieldSelector"), affinity.get("fieldSelector"),
                            f'unsupported key "{k}", must be provider, region, or zone')]
        if op not in ("In", "NotIn"):
            return [invalid(child(path, "fieldSelector"), affinity.get("fieldSelector"),
                            f'unsupported operator "{op}", must be In or NotIn')]
    return []


def label_selector_errors(selector, path: str) -> list[FieldError]:
    """Label selector operators (karmactl strictness: Karmada's webhook leaves a misspelt operator to
    fail at match time, which silently selects nothing)."""
    errs = []
    for i, expr in enumerate(_l(_d(selector).get("matchExpressions"))):
        op = _d(expr).get("operator")
        if isinstance(op, str) and op not in LABEL_SELECTOR_OPERATORS:
            errs.append(not_supported(child(index(child(path, "matchExpressions"), i), "operator"), op,
                                      LABEL_SELECTOR_OPERATORS))
    return errs


def cluster_affinity_errors(affinity, path: str) -> list[FieldError]:
    if not isinstance(affinity, dict):
        return []
    return field_selector_errors(affinity, path) + label_selector_errors(affinity.get("labelSelector"),
                                                                         child(path, "labelSelector"))


def _empty_affinity(term: dict) -> bool:
    return (term.get("labelSelector") is None and term.get("fieldSelector") is None
            and not term.get("clusterNames") and not term.get("exclude"))


def _overflow_allowed(rs) -> bool:
    """``util.IsOverflowSchedulingAllowed``: Divided with Aggregated, or Weighted with dynamicWeight."""
    if not isinstance(rs, dict) or rs.get("replicaSchedulingType") != "Divided":
        return False
    pref = rs.get("replicaDivisionPreference")
    if pref == "Aggregated":
        return True
    return pref == "Weighted" and bool(_d(rs.get("weightPreference")).get("dynamicWeight"))


# --- PropagationPolicy / ClusterPropagationPolicy ---------------------------------------------

def placement_errors(placement, path: str) -> list[FieldError]:
    """``ValidatePlacement``."""
    placement = _d(placement)
    errs: list[FieldError] = []
    if placement.get("clusterAffinity") is not None and placement.get("clusterAffinities") is not None:
        errs.append(invalid(path, placement, "clusterAffinities cannot co-exist with clusterAffinity"))
    errs += cluster_affinity_errors(placement.get("clusterAffinity"), child(path, "clusterAffinity"))

    terms_path = child(path, "clusterAffinities")
    allowed = _overflow_allowed(placement.get("replicaScheduling"))
    seen: set = set()
    for i, term in enumerate(_l(placement.get("clusterAffinities"))):
        if not isinstance(term, dict):
            continue
        tpath = index(terms_path, i)
        overflow = term.get("overflowAffinities")
        if overflow is not None and not allowed:
            errs.append(invalid(child(tpath, "overflowAffinities"), overflow,
                                "overflowAffinities can only be used together with dynamic weight or aggregated scheduling"))
        name = term.get("affinityName")
        if isinstance(name, str):
            errs += [invalid(tpath, name, m) for m in qualified_name(name)]
            if name in seen:
                errs.append(invalid(terms_path, [], "each affinity term in a policy must have a unique name"))
            seen.add(name)
        errs += cluster_affinity_errors(term, tpath)
        if overflow is not None:
            opath = child(tpath, "overflowAffinities")
            if _empty_affinity(term):
                errs.append(invalid(opath, overflow,
                                    "overflowAffinities can only be used together with the inline ClusterAffinity"))
            names = {name}
            for j, over in enumerate(_l(overflow)):
                if not isinstance(over, dict):
                    continue
                oname = over.get("affinityName")
                npath = child(index(opath, j), "affinityName")
                if isinstance(oname, str):
                    errs += [invalid(npath, oname, m) for m in qualified_name(oname)]
                if oname in names:
                    errs.append(invalid(npath, oname, "overflow affinity name must be unique and must not "
                                                      "duplicate the primary group's affinityName"))
                names.add(oname)
                errs += cluster_affinity_errors(over, index(opath, j))

    errs += spread_constraint_errors(placement.get("spreadConstraints"), child(path, "spreadConstraints"))
    errs += workload_affinity_errors(placement.get("workloadAffinity"), child(path, "workloadAffinity"))

    tol_ops = ("", "Exists", "Equal")
    for i, tol in enumerate(_l(placement.get("clusterTolerations"))):
        op = _d(tol).get("operator")
        if isinstance(op, str) and op not in tol_ops:
            errs.append(not_supported(child(index(child(path, "clusterTolerations"), i), "operator"), op, tol_ops))

    weights = _d(_d(placement.get("replicaScheduling")).get("weightPreference"))
    for i, item in enumerate(_l(weights.get("staticWeightList"))):
        wpath = child(index(child(path, "replicaScheduling.weightPreference.staticWeightList"), i), "targetCluster")
        errs += cluster_affinity_errors(_d(item).get("targetCluster"), wpath)
    return errs


def spread_constraint_errors(constraints, path: str) -> list[FieldError]:
    """``ValidateSpreadConstraint``."""
    errs: list[FieldError] = []
    by_field: dict[str, bool] = {}  # field -> already reported as duplicated
    for i, c in enumerate(_l(constraints)):
        if not isinstance(c, dict):
            continue
        cpath = index(path, i)
        by_f, by_l = c.get("spreadByField") or "", c.get("spreadByLabel") or ""
        min_g, max_g = _int(c.get("minGroups")) or 0, _int(c.get("maxGroups")) or 0
        if by_f and by_l:
            errs.append(invalid(cpath, c, "spreadByLabel should not co-exist with spreadByField"))
        if min_g < 0:
            errs.append(invalid(cpath, c, "minGroups lower than 0 is not allowed"))
        if max_g < 0:
            errs.append(invalid(cpath, c, "maxGroups lower than 0 is not allowed"))
        if max_g > 0 and max_g < min_g:
            errs.append(invalid(cpath, c, "maxGroups lower than minGroups is not allowed"))
        if by_f:
            if by_f in by_field and not by_field[by_f]:
                errs.append(invalid(path, constraints, f"multiple {by_f} spread constraints are not allowed"))
                by_field[by_f] = True
            by_field.setdefault(by_f, False)
    if by_field and "cluster" not in by_field:
        errs.append(invalid(path, constraints, "the cluster spread constraint must be enabled in one of the "
                                               "constraints in case of SpreadByField is enabled"))
    return errs


def workload_affinity_errors(wa, path: str) -> list[FieldError]:
    """``ValidateWorkloadAffinity``."""
    if not isinstance(wa, dict):
        return []
    errs: list[FieldError] = []
    keys = {}
    for part in ("affinity", "antiAffinity"):
        k = _d(wa.get(part)).get("groupByLabelKey")
        if isinstance(k, str):
            keys[part] = k
            errs += [invalid(child(child(path, part), "groupByLabelKey"), k, m) for m in qualified_name(k)]
    if len(keys) == 2 and keys["affinity"] == keys["antiAffinity"]:
        errs.append(invalid(path, wa, "affinity and antiAffinity must not use the same groupByLabelKey"))
    return errs


def failover_errors(failover, path: str) -> list[FieldError]:
    """``ValidateFailover`` plus the proposal fields (preConditions, blockPredecessorSeconds,
    ``failover.cluster.gracePeriodSeconds``)."""
    failover = _d(failover)
    errs: list[FieldError] = []
    app = failover.get("application")
    if isinstance(app, dict):
        apath = child(path, "application")
        tol = _int(_d(app.get("decisionConditions")).get("tolerationSeconds"))
        if tol is not None and tol < 0:
            errs.append(invalid(child(apath, "decisionConditions.tolerationSeconds"), tol,
                                "must be greater than or equal to 0"))
        errs += _grace_errors(app, apath)
        for name in ("preConditions.delaySeconds", "blockPredecessorSeconds"):
            holder = _d(app.get("preConditions")) if name.startswith("pre") else app
            value = _int(holder.get(name.rpartition(".")[2]))
            if value is not None and value < 0:
                errs.append(invalid(child(apath, name), value, "must be greater than or equal to 0"))
        errs += _state_preservation_errors(app.get("statePreservation"), child(apath, "statePreservation"))
    cluster = failover.get("cluster")
    if isinstance(cluster, dict):
        cpath = child(path, "cluster")
        # The proposal only defines gracePeriodSeconds for graceful purging, like application failover;
        # unlike there it may stay empty (the controller's --graceful-eviction-timeout applies).
        if cluster.get("gracePeriodSeconds") is not None:
            errs += _grace_errors(cluster, cpath)
        errs += _state_preservation_errors(cluster.get("statePreservation"), child(cpath, "statePreservation"))
    return errs


def _grace_errors(behavior: dict, path: str) -> list[FieldError]:
    errs = []
    gpath = child(path, "gracePeriodSeconds")
    grace = behavior.get("gracePeriodSeconds")
    gracefully = behavior.get("purgeMode") == "Gracefully"
    if not gracefully and grace is not None:
        errs.append(invalid(gpath, grace, "only takes effect when purgeMode is gracefully"))
    if gracefully and grace is None:
        errs.append(invalid(gpath, None, "should not be empty when purgeMode is gracefully"))
    if _int(grace) is not None and _int(grace) <= 0:
        errs.append(invalid(gpath, grace, "must be greater than 0"))
    return errs


def _state_preservation_errors(sp, path: str) -> list[FieldError]:
    errs = []
    for i, rule in enumerate(_l(_d(sp).get("rules"))):
        name = _d(rule).get("aliasLabelName")
        if isinstance(name, str):
            errs += check_label_name(name, child(index(child(path, "rules"), i), "aliasLabelName"))
        expr = _d(rule).get("jsonPath")
        if isinstance(expr, str):
            # evaluated later on the evicted cluster's status (pkg/util/helper/failover.go); a template
            # that does not parse would only fail at eviction time
            try:
                compile_template(expr)
            except JSONPathError as exc:
                errs.append(invalid(child(index(child(path, "rules"), i), "jsonPath"), expr, str(exc)))
    return errs


def selectors_namespace_errors(selectors, namespace: str, path: str) -> list[FieldError]:
    """``validateResourceSelectors``: a namespaced policy only selects its own namespace."""
    errs = []
    for i, sel in enumerate(_l(selectors)):
        if not isinstance(sel, dict):
            continue
        sel_ns = sel.get("namespace") or ""
        if sel_ns != namespace:
            errs.append(invalid(child(index(path, i), "namespace"), sel_ns,
                                "namespace of resource selector must be the same as the namespace of the policy"))
        errs += label_selector_errors(sel.get("labelSelector"), child(index(path, i), "labelSelector"))
    return errs


def propagation_spec_errors(spec: dict, namespace: str | None) -> list[FieldError]:
    """``ValidatePropagationSpec``; ``namespace`` is None for a ClusterPropagationPolicy."""
    errs = placement_errors(spec.get("placement"), "spec.placement")
    failover = spec.get("failover")
    if isinstance(failover, dict) and failover.get("application") is not None and spec.get("propagateDeps") is not True:
        errs.append(invalid("spec.propagateDeps", bool(spec.get("propagateDeps")),
                            "application failover is set, propagateDeps must be true"))
    errs += failover_errors(failover, "spec.failover")
    if namespace is not None:
        errs += selectors_namespace_errors(spec.get("resourceSelectors"), namespace, "spec.resourceSelectors")
    else:
        for i, sel in enumerate(_l(spec.get("resourceSelectors"))):
            errs += label_selector_errors(_d(sel).get("labelSelector"),
                                          child(index("spec.resourceSelectors", i), "labelSelector"))
    if spec.get("preemption") == "Always":
        for i, sel in enumerate(_l(spec.get("resourceSelectors"))):
            if isinstance(sel, dict) and not sel.get("name"):
                errs.append(invalid(child(index("spec.resourceSelectors", i), "name"), sel.get("name") or "",
                                    "name cannot be empty if preemption is Always, the empty name may cause "
                                    "unexpected resources preemption"))
    errs += suspension_errors(spec.get("suspension"))
    return errs


def suspension_errors(suspension) -> list[FieldError]:
    """``validateSuspension``: suspending everything and a list of clusters at once is ambiguous."""
    suspension = _d(suspension)
    if suspension.get("dispatching") is True and _l(_d(suspension.get("dispatchingOnClusters")).get("clusterNames")):
        return [invalid("spec.suspension", suspension,
                        "suspension dispatching cannot co-exist with dispatchingOnClusters.clusterNames")]
    return []


# --- OverridePolicy / ClusterOverridePolicy ---------------------------------------------------

_OVERRIDER_LISTS = ("plaintext", "imageOverrider", "commandOverrider", "argsOverrider",
                    "labelsOverrider", "annotationsOverrider")


def override_spec_errors(spec: dict, namespace: str | None) -> list[FieldError]:
    """``ValidateOverrideSpec``; ``namespace`` is None for a ClusterOverridePolicy."""
    errs: list[FieldError] = []
    rules = spec.get("overrideRules")
    if spec.get("targetCluster") is not None:
        errs += cluster_affinity_errors(spec.get("targetCluster"), "spec.targetCluster")
        if rules is not None:
            errs.append(invalid("spec.targetCluster", spec.get("targetCluster"),
                                "overrideRules and targetCluster can't co-exist"))
    # fieldOverrider is not counted, exactly as Karmada's emptyOverrides.
    overriders = _d(spec.get("overriders"))
    if rules is not None and any(_l(overriders.get(k)) for k in _OVERRIDER_LISTS):
        errs.append(invalid("spec.overriders", overriders, "overrideRules and overriders can't co-exist"))
    for i, rule in enumerate(_l(rules)):
        rpath = index("spec.overrideRules", i)
        rule = _d(rule)
        errs += _overriders_errors(_d(rule.get("overriders")), child(rpath, "overriders"))
        errs += cluster_affinity_errors(rule.get("targetCluster"), child(rpath, "targetCluster"))
    if namespace is not None:
        errs += selectors_namespace_errors(spec.get("resourceSelectors"), namespace, "spec.resourceSelectors")
    return errs


def _overriders_errors(ov: dict, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, item in enumerate(_l(ov.get("annotationsOverrider"))):
        errs += check_annotations(_d(item).get("value"), child(index(child(path, "annotationsOverrider"), i), "value"))
    for i, item in enumerate(_l(ov.get("labelsOverrider"))):
        errs += check_labels(_d(item).get("value"), child(index(child(path, "labelsOverrider"), i), "value"))
    for i, item in enumerate(_l(ov.get("imageOverrider"))):
        pred = _d(item).get("predicate")
        if isinstance(pred, dict) and isinstance(pred.get("path"), str):
            why = json_pointer_error(pred["path"])
            if why:
                errs.append(invalid(child(index(child(path, "imageOverrider"), i), "predicate.path"), pred["path"], why))
    for i, fo in enumerate(_l(ov.get("fieldOverrider"))):
        if not isinstance(fo, dict):
            continue
        fpath = index(child(path, "fieldOverrider"), i)
        has_yaml, has_json = bool(_l(fo.get("yaml"))), bool(_l(fo.get("json")))
        if has_yaml and has_json:
            errs.append(invalid(fpath, fo, "FieldOverrider has both YAML and JSON set. Only one is allowed"))
        if not has_yaml and not has_json:
            errs.append(required(fpath, "FieldOverrider must have either JSON or YAML set"))
        if isinstance(fo.get("fieldPath"), str):
            why = json_pointer_error(fo["fieldPath"])
            if why:
                errs.append(invalid(child(fpath, "fieldPath"), fo["fieldPath"], why))
        for part in ("json", "yaml"):
            for j, patch in enumerate(_l(fo.get(part))):
                if not isinstance(patch, dict):
                    continue
                ppath = index(child(fpath, part), j)
                if isinstance(patch.get("subPath"), str):
                    why = json_pointer_error(patch["subPath"])
                    if why:
                        errs.append(invalid(child(ppath, "subPath"), patch["subPath"], why))
                has_value = patch.get("value") is not None
                op = patch.get("operator")
                if op in ("add", "replace") and not has_value:
                    errs.append(invalid(child(ppath, "value"), None, "value is required for add or replace operation"))
                if op == "remove" and has_value:
                    errs.append(invalid(child(ppath, "value"), patch["value"], "value is not allowed for remove operation"))
    return errs


# --- Cluster ----------------------------------------------------------------------------------

CLUSTER_NAME_MAX_LENGTH = 48


def cluster_name_errors(name: str) -> list[str]:
    """``ValidateClusterName``."""
    if not name:
        return ["must be not empty"]
    if len(name) > CLUSTER_NAME_MAX_LENGTH:
        return [f"must be no more than {CLUSTER_NAME_MAX_LENGTH} characters"]
    return dns1123_label(name)


def cluster_spec_errors(spec: dict) -> list[FieldError]:
    """``ValidateClusterSpec`` (aggregated API server)."""
    errs: list[FieldError] = []
    mode = spec.get("syncMode")
    if not mode:
        errs.append(required("spec.syncMode"))
    elif mode not in ("Pull", "Push"):
        errs.append(not_supported("spec.syncMode", mode, ("Pull", "Push")))
    endpoint = spec.get("apiEndpoint")
    if isinstance(endpoint, str) and endpoint:
        errs += api_endpoint_errors(endpoint, "spec.apiEndpoint")
    for ref in ("secretRef", "impersonatorSecretRef"):
        value = spec.get(ref)
        if isinstance(value, dict):
            for part in ("namespace", "name"):
                if not value.get(part):
                    errs.append(required(f"spec.{ref}.{part}"))
    proxy = spec.get("proxyURL")
    if isinstance(proxy, str) and proxy:
        scheme = urlsplit(proxy).scheme if _parses(proxy) else None
        if scheme not in ("http", "https", "socks5"):
            errs.append(invalid("spec.proxyURL", proxy,
                                f'unsupported scheme "{scheme or ""}", must be http, https, or socks5'))
    for name in ("provider", "region"):
        value = spec.get(name)
        if isinstance(value, str):
            msgs = label_value(value)
            if msgs:
                errs.append(invalid(f"spec.{name}", value, "; ".join(msgs)))
    errs += _cluster_zone_errors(spec.get("zone"), spec.get("zones"))
    errs += cluster_taint_errors(spec.get("taints"), "spec.taints")
    models = spec.get("resourceModels")
    if isinstance(models, list) and models:
        err = resource_models_error(models, "spec.resourceModels")
        if err:
            errs.append(err)
    return errs


def _cluster_zone_errors(zone: Any, zones: Any) -> list[FieldError]:
    """``spec.zone`` and ``spec.zones`` of a Cluster: not both, each zone a label value."""
    if zone and zones:
        return [invalid("spec.zone", zone, "Zone and Zones cannot co-exist")]
    if isinstance(zone, str) and zone:
        msgs = label_value(zone)
        return [invalid("spec.zone", zone, "; ".join(msgs))] if msgs else []
    return [invalid(index("spec.zones", i), z, "; ".join(label_value(z)))
            for i, z in enumerate(_l(zones)) if isinstance(z, str) and label_value(z)]


def _parses(text: str) -> bool:
    try:
        urlsplit(text)
    except ValueError:
        return False
    return True


def api_endpoint_errors(endpoint: str, path: str) -> list[FieldError]:
    """``ValidateClusterAPIEndpoint``: a URL with a host, without user info, query or fragment."""
    form = "; desired format: hostname, hostname:port, IP or IP:port"
    try:
        u = urlsplit(endpoint)
        u.port  # noqa: B018 - raises ValueError on a bad port, as Go's url.Parse does
    except ValueError as exc:
        return [invalid(path, endpoint, f"apiEndpoint must be a valid URL: {exc}{form}")]
    errs = []
    host = u.netloc.rpartition("@")[2]
    if not host:
        errs.append(invalid(path, host, "host must be provided" + form))
    if "@" in u.netloc:
        errs.append(invalid(path, u.netloc.rpartition("@")[0], "user information is not permitted in the URL"))
    if u.fragment:
        errs.append(invalid(path, u.fragment, "fragments are not permitted in the URL"))
    if u.query:
        errs.append(invalid(path, u.query, "query parameters are not permitted in the URL"))
    return errs


CLUSTER_TAINT_EFFECTS = (EFFECT_NO_SCHEDULE, EFFECT_NO_EXECUTE)


def cluster_taint_errors(taints, path: str) -> list[FieldError]:
    """``lifted.ValidateClusterTaints``: label-name key, label-value value, effect NoSchedule|NoExecute,
    unique by key and effect."""
    errs: list[FieldError] = []
    seen: set = set()
    for i, taint in enumerate(_l(taints)):
        if not isinstance(taint, dict):
            continue
        tpath = index(path, i)
        k, v, effect = taint.get("key") or "", taint.get("value") or "", taint.get("effect") or ""
        errs += check_label_name(k, child(tpath, "key"))
        if isinstance(v, str) and label_value(v):
            errs.append(invalid(child(tpath, "value"), v, ";".join(label_value(v))))
        if not effect:
            errs.append(required(child(tpath, "effect")))
        elif effect not in CLUSTER_TAINT_EFFECTS:
            errs.append(not_supported(child(tpath, "effect"), effect, CLUSTER_TAINT_EFFECTS))
        ident = (str(k), str(effect))
        if ident in seen:
            errs.append(duplicate(tpath, "taints must be unique by key and effect pair"))
            continue
        seen.add(ident)
    return errs


def _qty(value):
    try:
        return parse_quantity(value)
    except (QuantityError, ValueError, TypeError):
        return None


def resource_models_error(models: list, path: str) -> FieldError | None:
    """``ValidateClusterResourceModels``: the first problem only, as Karmada returns one error."""
    def bad(detail: str) -> FieldError:
        return invalid(path, models, detail)

    for i, model in enumerate(models):
        model = _d(model)
        ranges = _l(model.get("ranges"))
        prev = _d(models[i - 1]) if i else {}
        if i and model.get("grade") == prev.get("grade"):
            return bad("The grade of each models should not be the same")
        if i and len(_l(prev.get("ranges"))) != len(ranges):
            return bad("The number of resource types should be the same")
        for j, rng in enumerate(ranges):
            rng = _d(rng)
            lo, hi = _qty(rng.get("min")), _qty(rng.get("max"))
            if lo is None or hi is None:
                continue  # the schema pass reports unparsable quantities
            if hi <= lo:
                return bad("The max value of each resource must be greater than the min value")
            if i == 0:
                if lo != 0:
                    return bad("The min value of each resource in the first model should be 0")
            else:
                prev_rng = _d(_l(prev.get("ranges"))[j])
                if prev_rng.get("name") != rng.get("name"):
                    return bad("The resource types of each models should be the same")
                if _qty(prev_rng.get("max")) != lo:
                    return bad("Model intervals for resources must be contiguous and non-overlapping")
            if i == len(models) - 1 and hi != MAX_INT64:
                return bad("The max value of each resource in the last model should be MaxInt64")
    return None


# --- ClusterTaintPolicy -----------------------------------------------------------------------

def cluster_taint_policy_errors(spec: dict) -> list[FieldError]:
    """``pkg/webhook/clustertaintpolicy/validating.go`` with NoExecute taints **allowed**.

    Karmada forbids NoExecute here unless ``--allow-no-execute-taint-policy`` is set; karmactl runs
    cluster failover on by default (DESIGN §3.4), which is exactly what NoExecute taints from a
    ClusterTaintPolicy drive, so the flag is taken as set. Duplicated key+effect pairs are still
    rejected. karmactl also checks the effect enum and key syntax (a taint with another effect could
    never be put on a Cluster) and the field selector of ``targetClusters``.
    """
    errs: list[FieldError] = []
    taints = _l(spec.get("taints"))
    for i, taint in enumerate(taints):
        if not isinstance(taint, dict):
            continue
        tpath = index("spec.taints", i)
        effect = taint.get("effect")
        if isinstance(effect, str) and effect and effect not in CLUSTER_TAINT_EFFECTS:
            errs.append(not_supported(child(tpath, "effect"), effect, CLUSTER_TAINT_EFFECTS))
        if isinstance(taint.get("key"), str):
            errs += check_label_name(taint["key"], child(tpath, "key"))
        for later in taints[i + 1:]:
            if isinstance(later, dict) and (later.get("key"), later.get("effect")) == (taint.get("key"), effect):
                errs.append(duplicate(tpath, f"Duplicate taint with the same key({taint.get('key')}) and "
                                             f"effect({effect}) is not allowed"))
                break
    errs += cluster_affinity_errors(spec.get("targetClusters"), "spec.targetClusters")
    return errs


# --- ResourceBinding --------------------------------------------------------------------------

def binding_errors(obj: dict) -> list[FieldError]:
    """``pkg/webhook/resourcebinding/validating.go``: the dependencies annotation is a JSON list."""
    annotations = _d(_d(obj.get("metadata")).get("annotations"))
    raw = annotations.get(DEPENDENCIES_ANNOTATION)
    if raw is None:
        return []
    path = f"metadata.annotations[{DEPENDENCIES_ANNOTATION}]"
    # Karmada unmarshals into []DependentObjectReference: only null or a list of objects decodes.
    try:
        parsed = json.loads(raw) if isinstance(raw, str) else ...
    except ValueError:
        parsed = ...
    if parsed is None or isinstance(parsed, list) and all(isinstance(x, dict) for x in parsed):
        return []
    return [invalid(path, raw, "annotation value must be a valid JSON")]


# --- MultiClusterIngress ----------------------------------------------------------------------

PATH_TYPES = ("Exact", "ImplementationSpecific", "Prefix")
_INVALID_PATH_SEQUENCES = ("//", "/./", "/../", "%2f", "%2F")
_INVALID_PATH_SUFFIXES = ("/..", "/.")


def ingress_spec_errors(spec: dict) -> list[FieldError]:
    """``lifted.ValidateIngressSpec`` (Kubernetes' Ingress rules, which the MCI webhook applies)."""
    errs: list[FieldError] = []
    rules = spec.get("rules")
    if not _l(rules) and spec.get("defaultBackend") is None:
        errs.append(invalid("spec", rules, "either `defaultBackend` or `rules` must be specified"))
    if isinstance(spec.get("defaultBackend"), dict):
        errs += _backend_errors(spec["defaultBackend"], "spec.defaultBackend")
    for i, rule in enumerate(_l(rules)):
        if not isinstance(rule, dict):
            continue
        rpath = index("spec.rules", i)
        host = rule.get("host")
        if isinstance(host, str) and host:
            errs += _host_errors(host, child(rpath, "host"), reject_ip=True)
        http = rule.get("http")
        if isinstance(http, dict):
            paths = _l(http.get("paths"))
            if not paths and http.get("paths") is not None:
                errs.append(required(child(rpath, "http.paths")))
            for j, p in enumerate(paths):
                if isinstance(p, dict):
                    errs += _http_path_errors(p, index(child(rpath, "http.paths"), j))
    for i, tls in enumerate(_l(spec.get("tls"))):
        for j, host in enumerate(_l(_d(tls).get("hosts"))):
            if isinstance(host, str):
                errs += _host_errors(host, index(child(index("spec.tls", i), "hosts"), j), reject_ip=False)
        secret = _d(tls).get("secretName")
        if isinstance(secret, str) and secret:
            errs += [invalid(child(index("spec.tls", i), "secretName"), secret, m) for m in dns1123_subdomain(secret)]
    return errs


def _host_errors(host: str, path: str, reject_ip: bool) -> list[FieldError]:
    errs = []
    if reject_ip:
        try:
            ipaddress.ip_address(host)
            errs.append(invalid(path, host, "must be a DNS name, not an IP address"))
        except ValueError:
            pass
    if "*" in host:
        if not host.startswith("*.") or dns1123_subdomain(host[2:]):
            errs.append(invalid(path, host, "a wildcard DNS-1123 subdomain must start with '*.', followed by a "
                                            "valid DNS subdomain, which must consist of lower case alphanumeric "
                                            "characters, '-' or '.' and end with an alphanumeric character"))
    else:
        errs += [invalid(path, host, m) for m in dns1123_subdomain(host)]
    return errs


def _http_path_errors(p: dict, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    ptype, value = p.get("pathType"), p.get("path") or ""
    if not isinstance(value, str):
        return [wrong_type(child(path, "path"), value, "string")]
    if ptype is None:
        return [required(child(path, "pathType"), "pathType must be specified")]
    if ptype in ("Exact", "Prefix"):
        if not value.startswith("/"):
            errs.append(invalid(child(path, "path"), value, "must be an absolute path"))
        for seq in _INVALID_PATH_SEQUENCES:
            if value and seq in value:
                errs.append(invalid(child(path, "path"), value, f"must not contain '{seq}'"))
        for suffix in _INVALID_PATH_SUFFIXES:
            if value and value.endswith(suffix):
                errs.append(invalid(child(path, "path"), value, f"cannot end with '{suffix}'"))
    elif ptype == "ImplementationSpecific":
        if value and not value.startswith("/"):
            errs.append(invalid(child(path, "path"), value, "must be an absolute path"))
    else:
        errs.append(not_supported(child(path, "pathType"), ptype, PATH_TYPES))
    if isinstance(p.get("backend"), dict):
        errs += _backend_errors(p["backend"], child(path, "backend"))
    return errs


def _backend_errors(backend: dict, path: str) -> list[FieldError]:
    """``validateIngressBackend``: exactly one of service/resource; a service needs a name and one of
    port name / port number."""
    has_resource, has_service = backend.get("resource") is not None, backend.get("service") is not None
    if has_resource and has_service:
        return [invalid(path, "", "cannot set both resource and service backends")]
    if has_resource:
        res = _d(backend["resource"])
        errs = []
        for part in ("kind", "name"):
            if not res.get(part):
                errs.append(required(child(path, f"resource.{part}"), f"{part} is required"))
        return errs
    if not has_service:
        return [invalid(path, "", "resource or service backend is required")]
    svc = _d(backend["service"])
    errs = []
    name = svc.get("name")
    if not name:
        errs.append(required(child(path, "service.name")))
    elif isinstance(name, str):
        errs += [invalid(child(path, "service.name"), name, m) for m in dns1035_label(name)]
    port = _d(svc.get("port"))
    pname, pnum = port.get("name") or "", _int(port.get("number")) or 0
    if pname and pnum:
        errs.append(invalid(path, "", "cannot set both port name & port number"))
    elif pnum:
        if not 1 <= pnum <= 65535:
            errs.append(invalid(child(path, "service.port.number"), pnum, "must be between 1 and 65535, inclusive"))
    elif not pname:
        errs.append(required(path, "port name or number is required"))
    return errs


# --- ResourceInterpreterCustomization -------------------------------------------------------------

_LUA_SYNTAX = None


def customization_spec_errors(spec: dict) -> list[FieldError]:
    """ResourceInterpreterCustomization rules (``pkg/webhook/resourceinterpretercustomization/``):
    every ``spec.customizations.<operation>.luaScript`` must load as Lua 5.1 (the error names
    the script line). Scripts are compiled, never run."""
    global _LUA_SYNTAX
    errs: list[FieldError] = []
    customizations = _d(spec.get("customizations"))
    for name, rule in customizations.items():
        script = _d(rule).get("luaScript")
        if not isinstance(script, str) or not script:
            continue
        if _LUA_SYNTAX is None:
            import lupa.lua51

            runtime = lupa.lua51.LuaRuntime(register_eval=False, register_builtins=False)
            _LUA_SYNTAX = runtime.eval("function(s) local f, e = loadstring(s, '=luaScript'); return e end")
        # Lua 5.1 loads precompiled chunks without verifying them: only source is accepted
        problem = ("luaScript: a precompiled (binary) chunk is refused: give Lua source"
                   if script.startswith("\x1b") else _LUA_SYNTAX(script))
        if problem:
            errs.append(invalid(f"spec.customizations.{name}.luaScript", [], f"Lua syntax error: {problem}"))
    return errs


# --- MultiClusterService ------------------------------------------------------------------------

# Spec fields Karmada's multiclusterservice controllers never read (service_types.go marks the last
# three deprecated "in favor of ProviderClusters/ConsumerClusters"; ``ports`` is documented as a
# filter but no controller applies it): refused rather than stored and ignored.
MCS_UNUSED_FIELDS = {
    "ports": "Karmada's multiclusterservice controllers do not filter ports: every port of the Service is exposed",
    "range": "deprecated in favor of providerClusters/consumerClusters, which Karmada's controllers read instead",
    "serviceProvisionClusters": "deprecated in favor of providerClusters, which Karmada's controllers read instead",
    "serviceConsumptionClusters": "deprecated in favor of consumerClusters, which Karmada's controllers read instead",
}


def multicluster_service_errors(obj: dict) -> list[FieldError]:
    """MultiClusterService rules of ``pkg/webhook/multiclusterservice/validating.go`` (name a
    DNS-1035 label; one type, ``CrossCluster`` or ``LoadBalancer``; provider/consumer cluster names
    valid cluster names; port names DNS-1123 labels, unique; ports 1-65535), plus karmactl's refusals:
    ``LoadBalancer`` exposure (done by ``karmada-io/multicluster-cloud-provider``, not by Karmada)
    and the fields of :data:`MCS_UNUSED_FIELDS`."""
    errs: list[FieldError] = []
    name = _d(obj.get("metadata")).get("name")
    if isinstance(name, str) and name:
        errs += [invalid("metadata.name", name, m) for m in dns1035_label(name)]
    spec = _d(obj.get("spec"))
    types = _l(spec.get("types"))
    names: set = set()
    for i, port in enumerate(_l(spec.get("ports"))):
        path = index("spec.ports", i)
        pname = _d(port).get("name")
        if isinstance(pname, str) and pname:
            errs += [invalid(child(path, "name"), pname, m) for m in dns1123_label(pname)]
            if pname in names:
                errs.append(duplicate(child(path, "name"), pname))
            names.add(pname)
        pnum = _int(_d(port).get("port"))
        if pnum is not None and not 1 <= pnum <= 65535:
            errs.append(invalid(child(path, "port"), pnum, "must be between 1 and 65535, inclusive"))
    for i, t in enumerate(types):
        if t not in ("CrossCluster", "LoadBalancer"):
            errs.append(invalid(index("spec.types", i), t, "ExposureType Error"))
    if len({t for t in types if isinstance(t, str)}) > 1:
        errs.append(invalid("spec.types", types, "MultiClusterService types should not contain more than one type"))
    # the webhook reports them under spec.range.<field> (validating.go's paths); so does karmactl
    for field_name in ("providerClusters", "consumerClusters"):
        for i, sel in enumerate(_l(spec.get(field_name))):
            cname = _d(sel).get("name")
            if isinstance(cname, str):
                path = index(f"spec.range.{field_name}", i)
                errs += [invalid(path, cname, m) for m in cluster_name_errors(cname)]
    if "LoadBalancer" in types:
        errs.append(forbidden("spec.types", "LoadBalancer exposure is implemented by karmada-io/multicluster-cloud-"
                                            "provider, not by Karmada's controllers; karmactl supports CrossCluster"))
    elif isinstance(spec.get("types"), list) and not types:
        errs.append(required("spec.types", "CrossCluster is the only exposure type karmactl implements; "
                                           "an empty list would expose nothing"))
    for field_name, why in MCS_UNUSED_FIELDS.items():
        if spec.get(field_name) not in (None, [], {}):
            errs.append(forbidden(f"spec.{field_name}", f"not supported by karmactl: {why}"))
    return errs


# --- FederatedResourceQuota -----------------------------------------------------------------------
# pkg/webhook/federatedresourcequota/validating.go with the lifted Kubernetes helpers it calls
# (pkg/util/lifted/corevalidation.go, corehelpers.go)

_STANDARD_RESOURCES = frozenset({
    "cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory", "requests.ephemeral-storage",
    "limits.cpu", "limits.memory", "limits.ephemeral-storage", "pods", "resourcequotas", "services",
    "replicationcontrollers", "secrets", "configmaps", "persistentvolumeclaims", "storage", "requests.storage",
    "services.nodeports", "services.loadbalancers"})
_STANDARD_QUOTA_RESOURCES = _STANDARD_RESOURCES - {"storage"}
_INTEGER_RESOURCES = frozenset({"pods", "resourcequotas", "services", "replicationcontrollers", "secrets",
                                "configmaps", "persistentvolumeclaims", "services.nodeports",
                                "services.loadbalancers"})


def _huge_pages(name: str) -> bool:
    return name.startswith("hugepages-") or name.startswith("requests.hugepages-")


def is_extended_resource_name(name: str) -> bool:
    """``IsExtendedResourceName``: a domain-prefixed name outside ``kubernetes.io``, not ``requests.``-prefixed,
    that is a valid quota name once prefixed with ``requests.``."""
    if "/" not in name or "kubernetes.io/" in name or name.startswith("requests."):
        return False
    return not qualified_name("requests." + name)


def _resource_list_errors(rl, path: str) -> list[FieldError]:
    """``validateResourceList``: quota resource names and non-negative (integer where due) values."""
    errs: list[FieldError] = []
    for name in sorted(_d(rl), key=str):
        value, p = rl[name], f"{path}[{name}]"
        name = str(name)
        name_errs = [invalid(p, name, m) for m in qualified_name(name)]
        if not name_errs and "/" not in name and not (name in _STANDARD_RESOURCES or _huge_pages(name)):
            name_errs.append(invalid(p, name, "must be a standard resource type or fully qualified"))
        if "/" not in name and not (name in _STANDARD_QUOTA_RESOURCES or _huge_pages(name)):
            name_errs.append(invalid(p, name, "must be a standard resource for quota"))
        errs += name_errs
        try:
            amount = parse_quantity(value)
        except QuantityError:
            continue  # the schema reports it
        if amount < 0:
            errs.append(invalid(p, canonical_string(value), "must be greater than or equal to 0"))
        if (name in _INTEGER_RESOURCES or is_extended_resource_name(name)) and (amount * 1000) % 1000:
            errs.append(invalid(p, canonical_string(value), "must be an integer"))
    return errs


def federated_resource_quota_errors(name, spec: dict) -> list[FieldError]:
    """The FederatedResourceQuota webhook's rules (``validateFederatedResourceQuota``): the name at most
    63 characters (it becomes a label value), every ResourceList valid, each ``clusterName`` a valid
    cluster name, ``overall`` at least the sum of the static assignments for each resource, and every
    assigned resource present in ``overall``."""
    errs: list[FieldError] = []
    if isinstance(name, str) and len(name) > 63:
        errs.append(invalid("metadata.name", name, "must be no more than 63 characters"))
    overall = _d(spec.get("overall"))
    errs += _resource_list_errors(overall, "spec.overall")
    assignments = [a for a in _l(spec.get("staticAssignments")) if isinstance(a, dict)]
    for i, a in enumerate(_l(spec.get("staticAssignments"))):
        if not isinstance(a, dict):
            continue
        path = index("spec.staticAssignments", i)
        cluster = a.get("clusterName")
        if isinstance(cluster, str):
            msgs = cluster_name_errors(cluster)
            if msgs:
                errs.append(invalid(child(path, "clusterName"), cluster, ",".join(msgs)))
        errs += _resource_list_errors(a.get("hard"), child(path, "hard"))
    for res in sorted(overall, key=str):
        try:
            total = sum((parse_quantity(v) for a in assignments for k, v in _d(a.get("hard")).items() if k == res), 0)
            if parse_quantity(overall[res]) < total:
                errs.append(invalid(f"spec.overall[{res}]", canonical_string(overall[res]),
                                    "overall is less than assignments"))
        except QuantityError:
            continue
    for i, a in enumerate(_l(spec.get("staticAssignments"))):
        for res in sorted(_d(_d(a).get("hard")), key=str):
            if res not in overall:
                errs.append(invalid(f"{index('spec.staticAssignments', i)}.hard[{res}]", str(res),
                                    "assignment resourceName is not exist in overall"))
    return errs


# --- CustomResourceDefinition -------------------------------------------------------------------

def crd_errors(crd: dict) -> list[FieldError]:
    """The fields of a CustomResourceDefinition that define the kind karmactl registers
    (``spec.group``, ``spec.names``, ``spec.scope``, ``spec.versions``), as the API server's
    ``ValidateCustomResourceDefinition`` (``apiextensions-apiserver/pkg/apis/apiextensions/validation``)
    checks them: required, of the right shape, scope ``Namespaced`` or ``Cluster``, at least one
    version, version names DNS-1035 labels without duplicates, exactly one storage version, the
    object named ``<plural>.<group>``. Types are the OpenAPI schema's (``strict_errors``); here a
    wrong shape is reported once at its path and its children are not looked into.
    """
    errs: list[FieldError] = []
    spec = crd.get("spec")
    if spec is None:
        return [required("spec")]
    if not isinstance(spec, dict):
        return [wrong_type("spec", spec, "object")]
    group = spec.get("group")
    if not group:
        errs.append(required("spec.group"))
    elif not isinstance(group, str):
        errs.append(wrong_type("spec.group", group, "string"))
    names = spec.get("names")
    plural = None
    if names is None:
        errs.append(required("spec.names"))
    elif not isinstance(names, dict):
        errs.append(wrong_type("spec.names", names, "object"))
    else:
        errs += _crd_names_errors(names)
        plural = names.get("plural") if isinstance(names.get("plural"), str) else None
    scope = spec.get("scope")
    if not scope:
        errs.append(required("spec.scope"))
    elif scope not in ("Namespaced", "Cluster"):
        errs.append(not_supported("spec.scope", scope, ("Cluster", "Namespaced")))
    versions = spec.get("versions")
    if versions is None or versions == []:
        errs.append(required("spec.versions", "must have exactly one version marked as storage version"))
    elif not isinstance(versions, list):
        errs.append(wrong_type("spec.versions", versions, "array"))
    else:
        errs += _crd_versions_errors(versions)
    meta = crd.get("metadata") if isinstance(crd.get("metadata"), dict) else {}
    if isinstance(group, str) and group and plural and meta.get("name") != f"{plural}.{group}":
        errs.append(invalid("metadata.name", meta.get("name"), f'must be spec.names.plural+"."+spec.group '
                                                               f'("{plural}.{group}")'))
    return errs


def _crd_names_errors(names: dict) -> list[FieldError]:
    """``spec.names`` of a CRD: plural and kind required strings, singular and listKind strings,
    shortNames non-empty strings."""
    errs: list[FieldError] = []
    for part in ("plural", "kind"):
        value = names.get(part)
        if not value:
            errs.append(required(f"spec.names.{part}"))
        elif not isinstance(value, str):
            errs.append(wrong_type(f"spec.names.{part}", value, "string"))
    for part in ("singular", "listKind"):
        value = names.get(part)
        if value is not None and not isinstance(value, str):
            errs.append(wrong_type(f"spec.names.{part}", value, "string"))
    short = names.get("shortNames")
    if short is not None:
        if not isinstance(short, list):
            errs.append(wrong_type("spec.names.shortNames", short, "array"))
        else:
            for i, item in enumerate(short):
                if not isinstance(item, str) or not item:
                    errs.append(invalid(f"spec.names.shortNames[{i}]", item, "must be a non-empty string"))
    return errs


def _crd_versions_errors(versions: list) -> list[FieldError]:
    """``spec.versions`` of a CRD (a non-empty list): each an object (:func:`_crd_version_errors`),
    names unique, exactly one storage version."""
    errs: list[FieldError] = []
    seen: set = set()
    storage = 0
    for i, version in enumerate(versions):
        path = f"spec.versions[{i}]"
        if not isinstance(version, dict):
            errs.append(wrong_type(path, version, "object"))
            continue
        errs += _crd_version_errors(version, path, seen)
        storage += version.get("storage") is True
    if storage != 1:
        errs.append(invalid("spec.versions", versions, "must have exactly one version marked as storage version"))
    return errs


def _crd_version_errors(version: dict, path: str, seen: set) -> list[FieldError]:
    """One version of a CRD at ``path``: its name a DNS-1035 label not in ``seen`` (added to it),
    served and storage booleans, schema (and its openAPIV3Schema) an object."""
    errs: list[FieldError] = []
    name = version.get("name")
    if not name:
        errs.append(required(f"{path}.name"))
    elif not isinstance(name, str):
        errs.append(wrong_type(f"{path}.name", name, "string"))
    else:
        errs += [invalid(f"{path}.name", name, m) for m in dns1035_label(name)]
        if name in seen:
            errs.append(duplicate(f"{path}.name", repr(name)))
        seen.add(name)
    for flag in ("served", "storage"):
        if version.get(flag) is not None and not isinstance(version.get(flag), bool):
            errs.append(wrong_type(f"{path}.{flag}", version.get(flag), "boolean"))
    schema = version.get("schema")
    if schema is not None:
        if not isinstance(schema, dict):
            errs.append(wrong_type(f"{path}.schema", schema, "object"))
        elif schema.get("openAPIV3Schema") is not None and not isinstance(schema["openAPIV3Schema"], dict):
            errs.append(wrong_type(f"{path}.schema.openAPIV3Schema", schema["openAPIV3Schema"], "object"))
    return errs
