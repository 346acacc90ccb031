"""The ``kube`` library Lua customizations ``require``: Kubernetes helpers over the native interpreter.

Follows ``pkg/resourceinterpreter/customized/declarative/luavm/kube.go``:

* ``kube.resourceAdd(q1, q2, ...)`` -> the sum of resource quantities (strings; nil counts 0) as
  Go's ``resource.Quantity.Add`` then ``String()`` print it: the sum keeps the format (DecimalSI,
  BinarySI, DecimalExponent) of the quantity added while the running sum was zero, so
  ``resourceAdd("0", "3072Mi")`` is ``"3Gi"`` and ``resourceAdd("1Gi", "500Mi")`` ``"1524Mi"``
  (:func:`sum_quantities`);
* ``kube.accuratePodRequirements(podTemplate)`` -> ``{nodeClaim, resourceRequest}`` of a pod
  template (``helper.GenerateReplicaRequirements``; :mod:`karmactl.interpreter.replica`), nil when
  the template asks for nothing (Go's nil pointer);
* ``kube.getPodDependencies(podTemplate, namespace)`` -> ``[{apiVersion, kind, namespace, name}]``
  the pod references (ConfigMaps, Secrets, ServiceAccount, PVCs; namespace nil means ``default``,
  a number is its text; :mod:`karmactl.interpreter.dependencies`), nil when there are none (Go's
  nil slice: Karmada's scripts write ``kube.getPodDependencies(...) or {}``);
* ``kube.getResourceQuantity(q)`` -> the quantity as a number (``AsApproximateFloat64``); a
  negative quantity is an error, as Karmada's.

Errors are raised in the script, at the caller's line. :func:`library` gives the Python side; the
Lua functions scripts call wrap it (:mod:`karmactl.interpreter.luasandbox`), so no Python object
is reachable from a script.
"""
from __future__ import annotations

from fractions import Fraction

from karmactl.api.quantity import canonical_string as canonical_quantity  # noqa: F401 - re-exported: modules
# written against this name print a quantity as Go's resource.Quantity.String() does; the home is api.quantity
from karmactl.interpreter._common import InterpreterError


def sum_quantities(quantities) -> str:
    """``resourceAdd``'s result: the sum of quantity strings (None counts 0) as Karmada's
    ``kube.resourceAdd`` prints it (``resource.Quantity.Add`` keeps the format of the operand added
    while the running sum was zero; ``String()`` canonicalises in that format).

    Raises:
        ValueError: a string that is not a quantity.
    """
    from karmactl.api.quantity import DECIMAL_SI, canonical_quantity, parse_quantity, quantity_format

    total, fmt = Fraction(0), DECIMAL_SI
    for q in quantities:
        if q is None:
            continue  # Quantity{}: adds nothing, and its empty format never reaches String()
        if total == 0:
            fmt = quantity_format(q)
        total += parse_quantity(q)
    return canonical_quantity(total, fmt)


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

    def lua_type(value) -> str:
        return vm._lua51.lua_type(value) or ("boolean" if isinstance(value, bool) else
                                             "number" if isinstance(value, (int, float)) else type(value).__name__)

    def quantity_text(value, position: int, fname: str) -> str | None:
        if value is None:
            return None
        if isinstance(value, bytes):
            value = value.decode()
        if not isinstance(value, str):
            raise TypeError(f"bad argument #{position} to {fname} (string expected, got {lua_type(value)})")
        return value

    def resource_add(n, *qs):
        return sum_quantities(quantity_text(q, i, "resourceAdd") for i, q in enumerate(qs, 1))

    def accurate_pod_requirements(n, pod=None, *_rest):
        from karmactl.interpreter.replica import _replica_requirements

        if n != 1:
            raise TypeError("getPodRequirements only accepts one argument")
        template = arg_object(pod, "table")
        return _replica_requirements(template.get("spec") or {}, False)

    def get_pod_dependencies(n, pod=None, namespace=None, *_rest):
        from karmactl.interpreter.dependencies import _pod_dependencies

        if n != 2:
            raise TypeError("getPodDependencies only accepts two argument")
        template = arg_object(pod, "table")
        ns = "default" if namespace is None else namespace
        if isinstance(ns, bytes):
            ns = ns.decode()
        if isinstance(ns, float):
            ns = int(ns) if ns.is_integer() else repr(ns)  # LNumber's text, as gopher-lua's CheckString
        if not isinstance(ns, (str, int)) or isinstance(ns, bool):
            raise TypeError(f"bad argument #2 to getPodDependencies (string expected, got {lua_type(ns)})")
        return _pod_dependencies(template.get("spec") or {}, str(ns)) or None

    def get_resource_quantity(n, q=None, *_rest):
        from karmactl.api.quantity import parse_quantity

        if n != 1:
            raise TypeError("getResourceQuantity only accepts one argument")
        text = quantity_text(q, 1, "getResourceQuantity")
        value = float(parse_quantity(text)) if text is not None else 0.0
        if value < 0:
            raise ValueError(f"int approximation unexpectedly returned a negative value: {text}")
        return value

    impl = vm.runtime.table_from({
        "resourceAdd": result(resource_add),
        "accuratePodRequirements": result(accurate_pod_requirements),
        "getPodDependencies": result(get_pod_dependencies),
        "getResourceQuantity": result(get_resource_quantity),
    })
    return impl
