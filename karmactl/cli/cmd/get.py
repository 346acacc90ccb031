"""``karmactl get``: kubectl's ``get`` over the state directory and, with ``--operation-scope``, the
members (karmadactl's ``get``). Its flags; the listing itself is :mod:`karmactl.cli.listing` (``demo``
lists with it too).

Runs without typer on the light path (:mod:`karmactl.cli.light`): typer is imported only by
:func:`register`, and this module has no ``from __future__ import annotations`` (typer reads the
annotations of the functions :func:`register` defines, which name ``typer`` locally).
"""
from typing import List, Optional

from karmactl.cli.context import Context
from karmactl.cli.listing import GetOptions, get_cmd


def get_from_flags(c: Context, resources: list[str] | None, namespace: str, all_namespaces: bool,
                   output: str | None, selector: str | None, field_selector: str | None, operation_scope: str,
                   clusters: str | None, ignore_not_found: bool, show_labels: bool, label_columns: list[str] | None,
                   sort_by: str | None, no_headers: bool, watch: bool, watch_only: bool) -> None:
    """``karmactl get`` from its parsed flags (named as the typer command's parameters; lists may be None
    when not given; ``-L a,b`` splits at commas): :func:`get_cmd`."""
    get_cmd(c, list(resources or []), GetOptions(
        namespace=namespace, all_namespaces=all_namespaces, output=output, selector=selector,
        field_selector=field_selector, scope=operation_scope, clusters=clusters, ignore_not_found=ignore_not_found,
        show_labels=show_labels, label_columns=[k for v in label_columns or [] for k in v.split(",") if k],
        sort_by=sort_by, no_headers=no_headers, watch=watch, watch_only=watch_only))


def register(app) -> None:
    """Add ``get`` to the typer ``app``."""
    import typer

    @app.command()
    def get(ctx: typer.Context,
            resources: Optional[List[str]] = typer.Argument(None, metavar="TYPE[.VERSION][.GROUP] [NAME...] | TYPE/NAME...",
                                                            help="Resource types (deploy, pp,rb, all...) and names, or TYPE/NAME."),
            namespace: str = typer.Option("default", "-n", "--namespace"),
            all_namespaces: bool = typer.Option(False, "-A", "--all-namespaces"),
            output: Optional[str] = typer.Option(None, "-o", "--output",
                                                 help="yaml|json|name|wide|jsonpath=...|jsonpath-file=...|"
                                                      "custom-columns=...|custom-columns-file=..."),
            selector: Optional[str] = typer.Option(None, "-l", "--selector", help="Label selector (k=v,k!=v,k in (a,b),!k)."),
            field_selector: Optional[str] = typer.Option(None, "--field-selector",
                                                         help="Field selector (f=v,f!=v), e.g. regarding.name=nginx."),
            operation_scope: str = typer.Option("karmada", "-s", "--operation-scope", help="karmada|members|all"),
            clusters: Optional[str] = typer.Option(None, "-C", "--clusters", help="Member clusters (with members/all)."),
            ignore_not_found: bool = typer.Option(False, "--ignore-not-found"),
            show_labels: bool = typer.Option(False, "--show-labels", help="Show all labels as the last column."),
            label_columns: Optional[List[str]] = typer.Option(None, "-L", "--label-columns",
                                                              help="Labels to show as columns (comma-separated, repeatable)."),
            sort_by: Optional[str] = typer.Option(None, "--sort-by", help="Sort by a JSONPath field, e.g. .metadata.name."),
            no_headers: bool = typer.Option(False, "--no-headers", help="No header row in tables."),
            watch: bool = typer.Option(False, "-w", "--watch", help="After listing, print rows as objects change."),
            watch_only: bool = typer.Option(False, "--watch-only", help="Print only changes, not the first list.")):
        """Display objects: the state directory's (status merged) and, with --operation-scope, the members'."""
        get_from_flags(ctx.obj, resources=resources, namespace=namespace, all_namespaces=all_namespaces,
                       output=output, selector=selector, field_selector=field_selector, operation_scope=operation_scope,
                       clusters=clusters, ignore_not_found=ignore_not_found, show_labels=show_labels,
                       label_columns=label_columns, sort_by=sort_by, no_headers=no_headers, watch=watch,
                       watch_only=watch_only)
