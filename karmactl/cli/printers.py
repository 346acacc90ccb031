"""Output: kubectl-style tables with Karmada's printer columns, and -o yaml|json|name|wide|jsonpath.

Columns follow the CRDs' ``additionalPrinterColumns`` and the aggregated API server's table for
Clusters (semantics §11.4); built-in kinds use kubectl's standard columns.
"""
from __future__ import annotations

import json
import re

from karmactl.api.kinds import KindInfo
from karmactl.api.objects import human_duration, parse_time


def human_age(created: str | None, now: str) -> str:
    """kubectl's AGE of an object created at ``created`` (``<unknown>`` without a timestamp)."""
    if not created:
        return "<unknown>"
    try:
        # rounded: Events carry microseconds (their order within a run)
        return human_duration(round((parse_time(now) - parse_time(created)).total_seconds()))
    except ValueError:
        return "<unknown>"


def _cond(obj: dict, ctype: str, default: str = "") -> str:
    for c in (obj.get("status") or {}).get("conditions") or []:
        if c.get("type") == ctype:
            return str(c.get("status", ""))
    return default


def _or_none(value) -> str:
    return str(value) if value not in (None, "", []) else "<none>"


def _json_cell(value) -> str:
    """A CRD printer column of type string holding a map or list: compact JSON, keys sorted
    (client-go's JSONPath printer); ``<none>`` when absent."""
    if value in (None, {}, []):
        return "<none>"
    return json.dumps(value, sort_keys=True, separators=(",", ":")) if isinstance(value, (dict, list)) else str(value)


def _status(o: dict) -> dict:
    return o.get("status") or {}


def _spec(o: dict) -> dict:
    return o.get("spec") or {}


_NAME = ("NAME", lambda o, now: o["metadata"]["name"])
_AGE = ("AGE", lambda o, now: human_age((o.get("metadata") or {}).get("creationTimestamp"), now))


def columns_for(info: KindInfo, wide: bool):
    """``[(HEADER, f(obj, now) -> str)]`` for a kind (NAME and AGE included)."""
    k = info.kind
    if k == "Cluster":
        return _cluster_columns(wide)
    if k == "Event" and info.group == "events.k8s.io":
        return event_columns(wide)
    cols = _karmada_columns(k, wide)
    if cols is None:
        cols = _workload_columns(k, wide)
    return cols if cols is not None else [_NAME, _AGE]


def _karmada_columns(k: str, wide: bool):
    """The columns of Karmada's kinds but Cluster (their CRDs' ``additionalPrinterColumns``); None for others."""
    st, sp, name, age = _status, _spec, _NAME, _AGE
    if k in ("PropagationPolicy", "ClusterPropagationPolicy"):
        return [name, ("CONFLICT-RESOLUTION", lambda o, n: str(sp(o).get("conflictResolution", ""))),
                ("PRIORITY", lambda o, n: str(sp(o).get("priority", 0))), age]
    if k in ("ResourceBinding", "ClusterResourceBinding"):
        cols = [name, ("SCHEDULED", lambda o, n: _cond(o, "Scheduled")),
                ("FULLYAPPLIED", lambda o, n: _cond(o, "FullyApplied")), age]
        return cols + [("CLUSTERS", lambda o, n: _binding_clusters(o))] if wide else cols
    if k == "Work":
        cols = [name, ("WORKLOAD-KIND", lambda o, n: ",".join(m.get("kind", "") for m in (sp(o).get("workload") or {}).get("manifests") or [])),
                ("APPLIED", lambda o, n: _cond(o, "Applied"))]
        if wide:
            cols.append(("DISPATCHING", lambda o, n: _cond(o, "Dispatching")))
        return cols + [age]
    if k == "MultiClusterIngress":
        return [name, ("TRAFFIC-BLOCKED", lambda o, n: _or_none(",".join(st(o).get("trafficBlockClusters") or []))), age]
    if k == "FederatedResourceQuota":
        # the CRD's additionalPrinterColumns (type string: kubectl prints a map as compact JSON); no AGE
        return [name, ("OVERALL", lambda o, n: _json_cell(st(o).get("overall"))),
                ("OVERALL_USED", lambda o, n: _json_cell(st(o).get("overallUsed")))]
    return None


def _binding_clusters(o: dict) -> str:
    """``-o wide``'s CLUSTERS of a binding: its ``spec.clusters`` as ``name:replicas`` (``name`` for a
    workload without replicas), ``<none>`` before scheduling; karmactl's column (Karmada's CRD has none)."""
    targets = [t for t in _spec(o).get("clusters") or [] if isinstance(t, dict) and t.get("name")]
    return ",".join(f"{t['name']}:{t['replicas']}" if isinstance(t.get("replicas"), int) and t["replicas"] else t["name"]
                    for t in targets) or "<none>"


def _cluster_columns(wide: bool):
    """The aggregated API server's table for Clusters (semantics §11.4)."""
    st, sp = _status, _spec
    cols = [_NAME, ("VERSION", lambda o, n: str(st(o).get("kubernetesVersion", ""))),
            ("MODE", lambda o, n: str(sp(o).get("syncMode", ""))),
            ("READY", lambda o, n: _cond(o, "Ready", "Unknown")), _AGE]
    if wide:
        cols += [("ZONES", lambda o, n: _or_none(",".join(sp(o).get("zones") or []))),
                 ("REGION", lambda o, n: _or_none(sp(o).get("region"))),
                 ("PROVIDER", lambda o, n: _or_none(sp(o).get("provider"))),
                 ("API-ENDPOINT", lambda o, n: str(sp(o).get("apiEndpoint", ""))),
                 ("PROXY-URL", lambda o, n: _or_none(sp(o).get("proxyURL"))),
                 ("REMEDY-ACTIONS", lambda o, n: _or_none(",".join(st(o).get("remedyActions") or [])))]
    return cols


def _workload_columns(k: str, wide: bool):
    """kubectl's standard columns of the built-in workload kinds, Services and Pods; None for others."""
    st, sp, name, age = _status, _spec, _NAME, _AGE
    if k in ("Deployment", "StatefulSet", "ReplicaSet"):
        cols = [name, ("READY", lambda o, n: f"{st(o).get('readyReplicas', 0)}/{sp(o).get('replicas', 1 if 'replicas' not in sp(o) else 0)}")]
        if k == "Deployment":
            cols += [("UP-TO-DATE", lambda o, n: str(st(o).get("updatedReplicas", 0))),
                     ("AVAILABLE", lambda o, n: str(st(o).get("availableReplicas", 0)))]
        cols.append(age)
        if wide:
            tmpl = lambda o: ((sp(o).get("template") or {}).get("spec") or {}).get("containers") or []
            cols += [("CONTAINERS", lambda o, n: ",".join(c.get("name", "") for c in tmpl(o))),
                     ("IMAGES", lambda o, n: ",".join(c.get("image", "") for c in tmpl(o)))]
        return cols
    if k == "Service":
        return [name, ("TYPE", lambda o, n: str(sp(o).get("type", "ClusterIP"))),
                ("CLUSTER-IP", lambda o, n: str(sp(o).get("clusterIP", "<none>"))),
                ("PORT(S)", lambda o, n: ",".join(f"{p.get('port')}/{p.get('protocol', 'TCP')}" for p in sp(o).get("ports") or []) or "<none>"),
                age]
    if k == "Pod":
        return [name, ("STATUS", lambda o, n: str(st(o).get("phase", "Pending"))), age]
    return None


def event_columns(wide: bool):
    """kubectl's columns for Events: LAST SEEN, TYPE, REASON, OBJECT, MESSAGE (``-o wide`` adds
    SOURCE, FIRST SEEN, COUNT and NAME)."""
    from karmactl.pipeline.events import last_seen

    reg = lambda o: o.get("regarding") or {}  # noqa: E731
    cols = [("LAST SEEN", lambda o, n: human_age(last_seen(o), n)),
            ("TYPE", lambda o, n: str(o.get("type", ""))),
            ("REASON", lambda o, n: str(o.get("reason", ""))),
            ("OBJECT", lambda o, n: f"{str(reg(o).get('kind', '')).lower()}/{reg(o).get('name', '')}")]
    if wide:
        cols.append(("SOURCE", lambda o, n: str(o.get("reportingController", ""))))
    cols.append(("MESSAGE", lambda o, n: str(o.get("note", ""))))
    if wide:
        cols += [("FIRST SEEN", lambda o, n: human_age(o.get("eventTime"), n)),
                 ("COUNT", lambda o, n: str((o.get("series") or {}).get("count", 1))),
                 ("NAME", lambda o, n: o["metadata"]["name"])]
    return cols


def event_lines(events: list[dict], now: str) -> list[str]:
    """kubectl describe's ``Events:`` table rows (Type, Reason, Age, From, Message), oldest first;
    a repeated Event's age reads ``<last seen> (xN over <first seen>)``."""
    from karmactl.pipeline.events import last_seen

    if not events:
        return []
    table = [["Type", "Reason", "Age", "From", "Message"], ["----", "------", "----", "----", "-------"]]
    for e in sorted(events, key=lambda e: (last_seen(e), e["metadata"]["name"])):
        series = e.get("series") or {}
        age = human_age(e.get("eventTime"), now)
        if series.get("count", 1) > 1:
            age = f"{human_age(series.get('lastObservedTime'), now)} (x{series['count']} over {age})"
        table.append([str(e.get("type", "")), str(e.get("reason", "")), age, str(e.get("reportingController", "")),
                      str(e.get("note", ""))])
    widths = [max(len(r[i]) for r in table) for i in range(4)]
    return ["  ".join(r[i].ljust(widths[i]) for i in range(4)) + "  " + r[4] for r in table]


def kind_prefix(info: KindInfo) -> str:
    """``deployment.apps`` / ``service``: how kubectl names a kind in ``-o name`` and mixed-kind tables."""
    return f"{info.singular}{'.' + info.group if info.group else ''}"


def render_table(rows: list[tuple[KindInfo, dict]], now: str, wide: bool = False, namespaces: bool = False,
                 extra: list | None = None, with_kind: bool = False, no_headers: bool = False,
                 label_columns: list[str] | None = None, show_labels: bool = False) -> str:
    """A kubectl table for objects of one kind (NAMESPACE first with ``-A``).

    Args:
        extra: optional ``[(position, HEADER, f(obj) -> str)]`` inserted columns (CLUSTER, ADOPTION).
        with_kind: NAME reads ``kind.group/name`` (kubectl, when several kinds are asked for).
        no_headers: leave the header row out (``--no-headers``).
        label_columns: ``-L`` label keys, one column each, headed by the key's last ``/`` part in capitals.
        show_labels: a final LABELS column (``--show-labels``), ``k=v`` sorted, ``<none>`` when empty.
    """
    if not rows:
        return ""
    info = rows[0][0]
    cols = list(columns_for(info, wide))
    for pos, header, fn in extra or []:
        col = (header, lambda o, n, fn=fn: fn(o))
        if pos is None:
            cols.append(col)
        else:
            cols.insert(pos, col)
    if with_kind and cols[0][0] == "NAME":
        cols[0] = ("NAME", lambda o, n: f"{kind_prefix(info)}/{o['metadata']['name']}")
    if namespaces and info.namespaced:
        cols.insert(0, ("NAMESPACE", lambda o, n: (o.get("metadata") or {}).get("namespace", "")))
    labels = lambda o: (o.get("metadata") or {}).get("labels") or {}  # noqa: E731
    for key in label_columns or []:
        cols.append((key.rsplit("/", 1)[-1].upper(), lambda o, n, key=key: str(labels(o).get(key, ""))))
    if show_labels:
        cols.append(("LABELS", lambda o, n: ",".join(f"{k}={v}" for k, v in sorted(labels(o).items())) or "<none>"))
    return align([[h for h, _ in cols]] + [[fn(obj, now) for _, fn in cols] for _info, obj in rows], no_headers)


def align(table: list[list[str]], no_headers: bool = False) -> str:
    """Rows of cells (the header first) as kubectl's tabwriter aligns them: three spaces between columns."""
    widths = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
    lines = ["   ".join(cell.ljust(widths[i]) for i, cell in enumerate(r)).rstrip() for r in table]
    body = lines[1:] if no_headers else lines
    return "\n".join(body) + "\n" if body else ""


def as_list(objs: list[dict]) -> dict:
    return {"apiVersion": "v1", "kind": "List", "items": objs, "metadata": {"resourceVersion": ""}}


FORMATS = ("custom-columns", "custom-columns-file", "go-template", "go-template-file", "json", "jsonpath",
           "jsonpath-as-json", "jsonpath-file", "name", "template", "templatefile", "wide", "yaml")


def render(objs: list[tuple[KindInfo, dict]], fmt: str | None, now: str, single: bool, namespaces: bool = False,
           extra: list | None = None, no_headers: bool = False, label_columns: list[str] | None = None,
           show_labels: bool = False, with_kind: bool = False) -> str:
    """Render objects in an ``-o`` format (None = table; several kinds make one table each, with kind-prefixed
    names, separated by blank lines, as kubectl prints ``get deploy,svc``).

    ``with_kind``: kind-prefixed names even in one table (kubectl, when several types were asked for).
    Formats: wide, yaml, json, name, ``jsonpath=`` / ``jsonpath-file=`` / ``jsonpath-as-json=``,
    ``custom-columns=`` / ``custom-columns-file=``.

    Raises:
        ValueError: unknown or refused format, a bad jsonpath template or custom-columns spec.
    """
    plain = [o for _, o in objs]
    kinds = list(dict.fromkeys(info for info, _ in objs))
    if fmt in (None, "", "wide"):
        tables = [render_table([r for r in objs if r[0] == k], now, wide=fmt == "wide", namespaces=namespaces,
                               extra=extra, with_kind=with_kind or len(kinds) > 1, no_headers=no_headers,
                               label_columns=label_columns, show_labels=show_labels) for k in kinds]
        return "\n".join(tables)
    name, arg = _template_of(fmt)
    data = plain[0] if single else as_list(plain)
    if fmt == "json":
        return json.dumps(data, indent=4) + "\n"
    if fmt == "yaml":
        from karmactl.store import yamlio  # PyYAML only for -o yaml

        return yamlio.dump(data)
    if fmt == "name":
        return "".join(f"{kind_prefix(info)}/{o['metadata']['name']}\n" for info, o in objs)
    return _render_template(fmt, name, arg, data, plain, no_headers)


def _template_of(fmt: str) -> tuple[str, str]:
    """``(format name, template)`` of ``-o NAME=TEMPLATE``; a ``*-file`` format's template read from
    its file (and its name without ``-file``).

    Raises:
        ValueError: the template file cannot be read.
    """
    name, _, arg = fmt.partition("=")
    if name in ("jsonpath-file", "custom-columns-file", "go-template-file", "templatefile") and arg:
        try:
            with open(arg, encoding="utf-8") as f:
                arg = f.read().strip()
        except OSError as exc:
            raise ValueError(f"error reading template {arg}: {exc.strerror}") from None
        name = name.replace("-file", "").replace("templatefile", "template")
    return name, arg


def _render_template(fmt: str, name: str, arg: str, data, plain: list, no_headers: bool) -> str:
    """``-o jsonpath=``, ``jsonpath-as-json=`` and ``custom-columns=`` over ``data`` (the object, or a
    List of ``plain``).

    Raises:
        ValueError: a bad template, Go templates, an unknown format.
    """
    from karmactl.api import jsonpath

    if name in ("jsonpath", "jsonpath-as-json") and arg:
        if name == "jsonpath-as-json":
            values = [v for m in _jsonpath_exprs(arg) for v in jsonpath.find(m, data)]
            return json.dumps(values, indent=4) + "\n"
        return jsonpath.render(arg, data)
    if name == "custom-columns" and arg:
        cols = jsonpath.parse_custom_columns(arg.replace("\n", ",").strip(",") if "\n" in arg else arg)
        return align([[h for h, _ in cols]] + [[jsonpath.custom_column_value(e, o) for _, e in cols] for o in plain],
                     no_headers)
    if name in ("go-template", "template"):
        raise ValueError(f'output format "{name}" is not supported: Go templates have no maintained Python '
                         f'implementation; use -o jsonpath=TEMPLATE or -o custom-columns=SPEC')
    raise ValueError(f'unable to match a printer suitable for the output format "{fmt}", allowed formats are: '
                     + ",".join(FORMATS))


def _jsonpath_exprs(template: str) -> list[str]:
    exprs = re.findall(r"\{([^{}]*)\}", template)
    if not exprs or any(e.strip().startswith(("range", "end", '"')) for e in exprs):
        raise ValueError("jsonpath-as-json takes plain {expression} actions, not range or literals")
    return exprs


def _scalar(v) -> str:
    if isinstance(v, (dict, list)):
        return json.dumps(v)
    if isinstance(v, bool):
        return "true" if v else "false"
    return "" if v is None else str(v)


def describe_text(obj: dict, events: list[str] | None = None, extra: str = "") -> str:
    """kubectl describe's layout for custom resources: Name, Namespace, Labels, Annotations, then the
    object's fields as an indented ``Key:  value`` tree, then ``Events:`` (``events``: the table's
    lines from :func:`event_lines`)."""
    m = obj.get("metadata") or {}
    lines = [f"Name:         {m.get('name', '')}"]
    if m.get("namespace"):
        lines.append(f"Namespace:    {m['namespace']}")
    for title, data in (("Labels", m.get("labels")), ("Annotations", m.get("annotations"))):
        if data:
            items = sorted(data.items())
            lines.append(f"{title + ':':<14}{items[0][0]}: {items[0][1]}" if title == "Annotations" else f"{title + ':':<14}{items[0][0]}={items[0][1]}")
            for k, v in items[1:]:
                lines.append(" " * 14 + (f"{k}: {v}" if title == "Annotations" else f"{k}={v}"))
        else:
            lines.append(f"{title + ':':<14}<none>")
    lines.append(f"API Version:  {obj.get('apiVersion', '')}")
    lines.append(f"Kind:         {obj.get('kind', '')}")
    meta_rest = {k: v for k, v in m.items() if k not in ("name", "namespace", "labels", "annotations")}
    if meta_rest:
        lines.append("Metadata:")
        _tree(meta_rest, 1, lines)
    for section in ("spec", "status"):
        if obj.get(section) not in (None, {}):
            lines.append(f"{section.capitalize()}:")
            _tree(obj[section], 1, lines)
    for k, v in obj.items():
        if k not in ("apiVersion", "kind", "metadata", "spec", "status") and v not in (None, {}):
            if isinstance(v, (dict, list)):
                lines.append(f"{_title(k)}:")
                _tree(v, 1, lines)
            else:  # e.g. an Event's reason, note, type
                lines.append(f"{_title(k)}:  {_scalar(v)}")
    if extra:
        lines.append(extra.rstrip("\n"))
    lines.append("Events:" if events else "Events:       <none>")
    for e in events or []:
        lines.append(f"  {e}".rstrip())
    return "\n".join(lines) + "\n"


def _title(key: str) -> str:
    words = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", key)
    return " ".join(w[:1].upper() + w[1:] for w in words.split(" "))


def _tree(value, depth: int, lines: list[str]) -> None:
    """Nested fields as kubectl describe prints them; list items of maps are printed one after another."""
    pad = "  " * depth
    if isinstance(value, dict):
        for k, v in value.items():
            if isinstance(v, (dict, list)) and v:
                lines.append(f"{pad}{_title(str(k))}:")
                _tree(v, depth + 1, lines)
            else:
                scalar = "" if isinstance(v, (dict, list)) else _scalar(v)
                lines.append(f"{pad}{_title(str(k))}:  {scalar}".rstrip())
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, dict):
                _tree(item, depth, lines)
            else:
                lines.append(f"{pad}{_scalar(item)}")
    else:
        lines.append(f"{pad}{_scalar(value)}")


def print_one(c, info, obj: dict, output: str | None, message: str) -> None:
    """The object ``obj`` of ``info`` in an ``-o`` format (``c`` a :class:`karmactl.cli.context.Context`), else
    kubectl's one-line ``message`` (``patch``, ``create``).

    Raises:
        CLIError: an unknown format or bad template (exit 2).
    """
    import sys

    from karmactl.cli.context import CLIError, out

    if not output:
        out(message)
        return
    try:
        sys.stdout.write(render([(info, obj)], output, c.now, single=True))
    except ValueError as exc:
        raise CLIError(str(exc)) from None
