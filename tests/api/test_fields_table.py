"""``docs/fields.md`` lists every spec field of every Karmada kind karmactl validates
(``karmactl/api/validation_schema.py: SPEC_SCHEMAS``): a field added to the schema without a row, or
a row naming no field of the schema, fails here (issue 27)."""
from __future__ import annotations

import re
from pathlib import Path

from karmactl.api.validation_schema import SPEC_SCHEMAS, Arr, Obj

TABLE = Path(__file__).resolve().parents[2] / "docs" / "fields.md"
STATUSES = {"acted on", "refused", "warned", "kept"}


def schema_fields(schema, prefix: str = "spec"):
    """Every property path below ``schema`` (``[]`` marks an array's items)."""
    if isinstance(schema, Arr):
        yield from schema_fields(schema.items, prefix + "[]")
    elif isinstance(schema, Obj):
        for name, sub in schema.props.items():
            path = f"{prefix}.{name}"
            yield path
            yield from schema_fields(sub, path)


def table_rows() -> dict:
    """``{kind: [(field pattern, status)]}`` from the sections (``## Kind, Kind``) of the table."""
    rows, kinds = {}, []
    for line in TABLE.read_text().splitlines():
        if line.startswith("## "):
            kinds = [k.strip() for k in line[3:].split(",")]
            for k in kinds:
                rows.setdefault(k, [])
            continue
        m = re.match(r"\| `([^`]+)` \| ([a-z ]+) \|", line)
        if m and kinds:
            for k in kinds:
                rows[k].append((m.group(1), m.group(2)))
    return rows


def covers(pattern: str, path: str) -> bool:
    if pattern.endswith(".**"):
        base = pattern[:-3]
        return path == base or path.startswith(base + ".") or path.startswith(base + "[]")
    return pattern == path


def test_every_schema_field_has_a_row_and_every_row_a_field():
    rows = table_rows()
    missing, stale, bad = [], [], []
    for (_group, kind), (schema, _required) in SPEC_SCHEMAS.items():
        fields = list(schema_fields(schema))
        patterns = rows.get(kind)
        assert patterns is not None, f"docs/fields.md has no section for {kind}"
        missing += [f"{kind} {f}" for f in fields if not any(covers(p, f) for p, _s in patterns)]
        stale += [f"{kind} {p}" for p, _s in patterns if not any(covers(p, f) for f in fields)]
        bad += [f"{kind} {p}: {s}" for p, s in patterns if s not in STATUSES]
    assert missing == [], "fields without a row in docs/fields.md"
    assert stale == [], "rows of docs/fields.md naming no field of the schema"
    assert bad == []


def test_a_new_schema_field_without_a_row_is_caught(monkeypatch):
    from karmactl.api import validation_schema as S

    spec, required = S.SPEC_SCHEMAS[("policy.karmada.io", "FederatedResourceQuota")]
    grown = Obj(dict(spec.props, newField=S.Str()), spec.required)
    monkeypatch.setitem(S.SPEC_SCHEMAS, ("policy.karmada.io", "FederatedResourceQuota"), (grown, required))
    rows = table_rows()["FederatedResourceQuota"]
    assert [f for f in schema_fields(grown) if not any(covers(p, f) for p, _s in rows)] == ["spec.newField"]
