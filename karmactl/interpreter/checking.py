"""Test cases of ResourceInterpreterCustomizations, run and compared as Karmada's test runner does.

Follows ``pkg/resourceinterpreter/default/thirdparty/thirdparty_test.go`` (``IndividualTest``,
``deepEqual``, ``processObjectWithExclusion``). Two formats:

* **Karmada's current one** (since v1.17): ``testdata/*-test.yaml`` beside each customization,
  one case per YAML document: ``name``, ``description``, ``operation``, the inputs inline
  (``desiredObj``, ``observedObj``, ``statusItems``, ``inputReplicas``) and the expected
  ``output`` (``{result name: value}``) -- :func:`case_of_document`;
* **the former one**: ``customizations_tests.yaml`` with ``tests: [{operation, desiredInputPath,
  observedInputPath, statusInputPath, desiredReplicas, expectedOutput}]``, inputs in files; the
  caller reads them and builds the same :class:`Case`.

A case passes when the operation runs and every result named in ``output`` equals it as Karmada
compares (:func:`same_result`): ``requires`` and ``components`` as typed structs with quantities
compared by value (``"1Gi"`` equals ``"1024Mi"``), ``dependencies`` and ``components`` sorted
first, objects (``retained``, ``revised``, ``aggregatedStatus``) without the fields the expected
object marks ``{{EXCLUDE}}``, everything else as JSON. A result the case does not name is not
checked; a name in ``output`` that the operation does not return fails the case.

Pure: no file is read here (the command, :mod:`karmactl.cli.cmd.interpret`, reads them).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from karmactl.interpreter._common import InterpreterError

EXCLUDE = "{{EXCLUDE}}"
"""The value that marks a field of an expected object as not compared."""

CASE_FIELDS = ("name", "description", "desiredObj", "observedObj", "statusItems", "inputReplicas",
               "operation", "output")
"""The fields of a case document (Karmada's ``IndividualTest``)."""

OPERATIONS = ("Retain", "InterpretReplica", "InterpretComponent", "ReviseReplica", "InterpretStatus",
              "AggregateStatus", "InterpretHealth", "InterpretDependency")
"""The operations a case may name (any case), as Karmada's ``AllResourceInterpreterCustomizationRules``."""

_OBJECT_RESULTS = ("retained", "revised", "aggregatedStatus")
_TYPED_RESULTS = ("requires", "dependencies", "components")


class CaseError(ValueError):
    """A case document that cannot be run (a field of the wrong type, an unknown field)."""


@dataclass
class Case:
    """One test case: an operation, its inputs and the expected results.

    Attributes:
        name: the case's name (``name``, or ``tests[i]`` in the former format).
        operation: a Karmada operation name (:data:`OPERATIONS`).
        source: where the case is written (``file:line``).
        desired, observed: the objects (None when not given).
        status_items: AggregatedStatusItems, or None when not given (the script gets nil; an empty
            list is an empty table, as Go's empty slice).
        replicas: ``inputReplicas`` for ReviseReplica.
        output: expected results by name; None checks nothing but that the operation runs.
    """

    name: str
    operation: str
    source: str
    desired: dict | None = None
    observed: dict | None = None
    status_items: list | None = None
    replicas: int = 0
    output: dict | None = field(default=None)

    def target(self) -> tuple[str, str] | None:
        """``(apiVersion, kind)`` of the case's object (desired first), None when it has none."""
        obj = self.desired if self.desired is not None else self.observed
        if not isinstance(obj, dict) or not obj.get("kind"):
            return None
        return str(obj.get("apiVersion") or ""), str(obj["kind"])


def case_of_document(doc, source: str, index: int) -> Case:
    """The :class:`Case` of one document of a ``*-test.yaml`` file (Karmada's ``IndividualTest``).

    Args:
        doc: the parsed document.
        source: ``file:line`` of the document, for messages.
        index: the document's position in its file (names a case without ``name``).

    Raises:
        CaseError: not a mapping, an unknown field, a field of the wrong type.
    """
    if not isinstance(doc, dict):
        raise CaseError("a test case must be a mapping (name, operation, desiredObj, observedObj, statusItems, "
                        "inputReplicas, output)")
    unknown = sorted(str(k) for k in doc if k not in CASE_FIELDS)
    if unknown:
        raise CaseError(f"unknown field {unknown[0]!r} (a case has {', '.join(CASE_FIELDS)})")
    for key in ("desiredObj", "observedObj", "output"):
        if doc.get(key) is not None and not isinstance(doc[key], dict):
            raise CaseError(f"{key}: must be a mapping")
    items = doc.get("statusItems")
    if items is not None and not (isinstance(items, list) and all(isinstance(i, dict) for i in items)):
        raise CaseError("statusItems: must be a list of AggregatedStatusItems (clusterName, status, applied, health)")
    replicas = doc.get("inputReplicas") or 0
    if isinstance(replicas, bool) or not isinstance(replicas, int):
        raise CaseError("inputReplicas: must be an integer")
    for key in ("name", "operation", "description"):
        if doc.get(key) is not None and not isinstance(doc[key], str):
            raise CaseError(f"{key}: must be a string")
    return Case(name=doc.get("name") or f"document {index + 1}", operation=doc.get("operation") or "",
                source=source, desired=doc.get("desiredObj"), observed=doc.get("observedObj"),
                status_items=items, replicas=replicas, output=doc.get("output"))


def run_case(interpreter, case: Case, builtin: bool = False) -> list[str]:
    """Run ``case`` with ``interpreter`` (a :class:`karmactl.interpreter.Interpreter` holding the
    customizations under test; with ``builtin``, its built-in layers answer: third-party rules, then
    native) and compare its results. Returns the problems, ``[]`` when it passes.

    An operation Karmada knows but this interpreter cannot run (``InterpretComponent`` without
    ``componentResource`` support) is one problem saying so.
    """
    op = next((o for o in OPERATIONS if o.lower() == (case.operation or "").lower()), None)
    if op is None:
        return [f"operation {case.operation or '(none)'} is not supported. Use one of: {', '.join(OPERATIONS)}"]
    try:
        results = interpreter.run_rule(op, case.desired, case.observed, case.status_items, case.replicas,
                                       builtin=builtin)
    except InterpreterError as exc:
        message = str(exc)
        if op == "InterpretComponent" and "is not supported" in message:
            return ["refused: this karmactl cannot run InterpretComponent (componentResource customizations "
                    "are not supported)"]
        return [f"execute {op} error: {message}"]
    expected = case.output or {}
    problems = []
    got = dict(results)
    for name, value in results:
        if name in expected and not same_result(name, expected[name], value):
            problems.append(f"unexpected result for {name}: expected {_show(expected[name])}, got {_show(value)}")
    for name in expected:
        if name not in got:
            problems.append(f"output key {name!r} is defined but not present in the results "
                            f"({', '.join(got) or 'none'})")
    return problems


def same_result(name: str, expected, actual) -> bool:
    """Whether one result equals its expected value as Karmada's ``deepEqual`` compares them."""
    if name in _OBJECT_RESULTS:
        excluded: set = set()
        expected = _exclude(expected, (), excluded, True)
        actual = _exclude(actual, (), excluded, False)
    elif name in _TYPED_RESULTS:
        expected, actual = _typed(expected), _typed(actual)
        if name == "dependencies":
            expected, actual = _sorted(expected, _dependency_key), _sorted(actual, _dependency_key)
        elif name == "components":
            expected, actual = _sorted(expected, _component_key), _sorted(actual, _component_key)
    return _equal(expected, actual)


# --------------------------------------------------------------------------- comparison

def _equal(a, b) -> bool:
    """Deep equality with JSON's types: a boolean is not a number, a string not a number, an
    empty list not an empty map; 1 equals 1.0 (both go through JSON in Karmada). The nil and
    empty slices and maps Go's semantic ``DeepEqual`` takes as equal are absent from typed
    results already (:func:`_typed`)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal(v, b[k]) for k, v in a.items())
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, (dict, list)) or isinstance(b, (dict, list)):
        return False
    if a is None or b is None:
        return a is b
    if isinstance(a, str) or isinstance(b, str):
        return type(a) is type(b) and a == b
    return a == b


def _exclude(value, path: tuple, excluded: set, collect: bool):
    """``processObjectWithExclusion``: with ``collect``, drop fields whose value is
    :data:`EXCLUDE` and remember their paths; else drop the remembered paths."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            p = path + (str(k),)
            if collect and v == EXCLUDE:
                excluded.add(p)
                continue
            if not collect and p in excluded:
                continue
            out[k] = _exclude(v, p, excluded, collect)
        return out
    if isinstance(value, list):
        return [_exclude(v, path + (str(i),), excluded, collect) for i, v in enumerate(value)]
    return value


def _typed(value, quantities: bool = False):
    """A typed result (ReplicaRequirements, DependentObjectReferences, Components) as Go's structs
    hold it: empty fields as absent, every ``resourceRequest`` quantity as its value (a Fraction)."""
    from karmactl.api.quantity import QuantityError, parse_quantity

    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            v = _typed(v, k == "resourceRequest")
            if v is None or v == "" or v == {} or v == []:
                continue
            if quantities and isinstance(v, (str, int, float)) and not isinstance(v, bool):
                try:
                    v = parse_quantity(v)
                except QuantityError:
                    pass
            out[k] = v
        return out
    if isinstance(value, list):
        return [_typed(v) for v in value]
    return value


def _sorted(value, key):
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        return value
    return sorted(value, key=key)


def _dependency_key(ref: dict):
    return tuple(str(ref.get(k) or "") for k in ("apiVersion", "kind", "namespace", "name"))


def _component_key(component: dict):
    return str(component.get("name") or "")


def _show(value) -> str:
    import json

    text = json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= 2000 else text[:2000] + f"... ({len(text) - 2000} more characters)"


__all__ = ["CASE_FIELDS", "Case", "CaseError", "EXCLUDE", "OPERATIONS", "case_of_document", "run_case", "same_result"]
