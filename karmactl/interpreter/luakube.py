"""The ``kube`` library Lua customizations ``require``: Kubernetes helpers over the native interpreter.

Follows ``pkg/resourceinterpreter/customized/declarative/luavm/kube.go``:

* ``kube.resourceAdd(q1, q2, ...)`` -> the sum of resource quantities (strings, nil counts 0), as
  canonical quantity text (``"1500m"``, ``"3Gi"``);
* ``kube.accuratePodRequirements(podTemplate)`` -> ``{nodeClaim, resourceRequest}`` of a pod
  template (``helper.GenerateReplicaRequirements``; :mod:`karmactl.interpreter.replica`);
* ``kube.getPodDependencies(podTemplate, namespace)`` -> ``[{apiVersion, kind, namespace, name}]``
  the pod references (ConfigMaps, Secrets, ServiceAccount, PVCs; namespace nil means ``default``;
  :mod:`karmactl.interpreter.dependencies`);
* ``kube.getResourceQuantity(q)`` -> the quantity as a number.

Errors are raised in the script, at the caller's line. :func:`library` gives the Python side; the
Lua functions scripts call wrap it (:mod:`karmactl.interpreter.luasandbox`), so no Python object
is reachable from a script.
"""
from __future__ import annotations

import math
from fractions import Fraction

from karmactl.interpreter._common import InterpreterError

def canonical_quantity(value) -> str:
    """The canonical text of a quantity (``"0.5"`` -> ``"500m"``, ``"1024Mi"`` -> ``"1Gi"``), as Go's
    ``resource.Quantity`` prints it after parsing.

    Raises:
        ValueError: not a quantity.
    """
    from karmactl.api.quantity import parse_quantity

    return _format(parse_quantity(value), isinstance(value, str) and value.endswith("i"))


def _format(total: Fraction, binary: bool) -> str:
    from karmactl.interpreter.replica import format_binary_si, format_decimal_si

    if binary and total.denominator == 1:
        return format_binary_si(int(total))
    return format_decimal_si(math.ceil(total * 1_000_000_000), -9)


def library(vm) -> object:
    """The Lua table ``{name: function(nargs, ...) -> {value=... | err=message}}`` behind the
    ``kube`` library of :class:`karmactl.interpreter.luavm.LuaVM` ``vm``. Every failure, whatever
    its type, comes back as ``err`` text: no Python exception (an object) reaches a script."""
    from karmactl.interpreter.luavm import resolve_empty

    def result(fn):
        def call(n, *args):
            out = vm.runtime.table()
            try:
                out["value"] = vm.to_lua(fn(n, *args[:n]))
            except (InterpreterError, ValueError, TypeError) as exc:
                out["err"] = str(exc)
            except RecursionError:
                out["err"] = "the argument is nested too deeply"
            except Exception as exc:  # noqa: BLE001 - a script's input must never end the run
                out["err"] = f"{type(exc).__name__}: {exc}"
            return out
        return call

    def arg_object(value, what):
        if vm._lua51.lua_type(value) != "table":
            raise TypeError(f"bad argument #1 ({what} expected, got {vm._lua51.lua_type(value) or type(value).__name__})")
        return resolve_empty(vm.to_python(value), True)

    def quantity(value) -> Fraction:
        from karmactl.api.quantity import parse_quantity

        if value is None:
            return Fraction(0)
        if not isinstance(value, (str, bytes)):
            raise TypeError(f"string expected, got {vm._lua51.lua_type(value) or type(value).__name__}")
        return parse_quantity(value.decode() if isinstance(value, bytes) else value)

    def resource_add(n, *qs):
        total = sum((quantity(q) for q in qs), Fraction(0))
        binary = next((isinstance(q, str) and q.endswith("i") for q in qs if q), False)
        return _format(total, binary)

    def accurate_pod_requirements(n, pod=None, *_rest):
        from karmactl.interpreter.replica import _replica_requirements

        if n != 1:
            raise TypeError("getPodRequirements only accepts one argument")
        template = arg_object(pod, "table")
        return _replica_requirements(template.get("spec") or {}, False) or {}

    def get_pod_dependencies(n, pod=None, namespace=None, *_rest):
        from karmactl.interpreter.dependencies import _pod_dependencies

        if n != 2:
            raise TypeError("getPodDependencies only accepts two argument")
        template = arg_object(pod, "table")
        ns = "default" if namespace is None else namespace
        if isinstance(ns, float) and ns.is_integer():
            ns = int(ns)
        if not isinstance(ns, (str, int)) or isinstance(ns, bool):
            raise TypeError("bad argument #2 (string expected)")
        return _pod_dependencies(template.get("spec") or {}, str(ns))

    def get_resource_quantity(n, q=None, *_rest):
        if n != 1:
            raise TypeError("getResourceQuantity only accepts one argument")
        return float(quantity(q))

    impl = vm.runtime.table_from({
        "resourceAdd": result(resource_add),
        "accuratePodRequirements": result(accurate_pod_requirements),
        "getPodDependencies": result(get_pod_dependencies),
        "getResourceQuantity": result(get_resource_quantity),
    })
    return impl
