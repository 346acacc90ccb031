"""The ``karmactl`` commands and their flags (typer), kubectl and karmadactl conventions (DESIGN §5).

Imported only when a command runs: :mod:`karmactl.cli.main` answers ``--help`` and completion
requests without it (typer costs more than the whole answer may take).
"""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from karmactl.cli.context import CLIError, Context, out

app = typer.Typer(name="karmactl", no_args_is_help=True, add_completion=False, rich_markup_mode=None,
                  context_settings={"help_option_names": ["-h", "--help"]},
                  help="Karmada-style multi-cluster propagation from a state directory: apply Karmada YAML, "
                       "reconcile bindings and Works, propagate to member clusters.")
cluster_app = typer.Typer(no_args_is_help=True, help="Cluster operations (conditions).")
condition_app = typer.Typer(no_args_is_help=True, help="Record or remove a condition on a Cluster's status.")
cluster_app.add_typer(condition_app, name="condition")
app.add_typer(cluster_app, name="cluster")


def ctx_of(ctx: typer.Context) -> Context:
    return ctx.obj


def _print_version(value: bool) -> None:
    if value:
        from karmactl.cli.verbs import version_cmd
        version_cmd(None)
        raise typer.Exit(0)


@app.callback()
def main(ctx: typer.Context,
         state: Path = typer.Option(Path("state"), "--state", envvar="KARMACTL_STATE", help="State directory."),
         now: Optional[str] = typer.Option(None, "--now", help="Pin the clock (RFC 3339), e.g. 2026-01-01T00:00:00Z."),
         verbose: int = typer.Option(0, "-v", "--verbose", count=True, help="More output on stderr."),
         version: bool = typer.Option(False, "--version", is_eager=True, help="Print the version and exit.",
                                      callback=_print_version),
         lock_timeout: str = typer.Option("0s", "--lock-timeout",
                                          help="Wait this long (e.g. 30s, 2m) for another karmactl holding the "
                                               "state directory, then exit 5 naming it."),
         kubeconfig_dir: Optional[Path] = typer.Option(None, "--kubeconfig-dir", envvar="KARMACTL_KUBECONFIG_DIR",
                                                       metavar="DIR",
                                                       help="Member kubeconfigs named by Clusters (karmactl.io/kubeconfig) "
                                                            "must be inside this directory, and so must the files they "
                                                            "name (default: STATE/.karmactl, which git ignores)."),
         allow_exec_plugins: bool = typer.Option(False, "--allow-exec-plugins", envvar="KARMACTL_ALLOW_EXEC_PLUGINS",
                                                 help="Let member kubeconfigs run exec credential plugins and "
                                                      "auth-providers (refused otherwise).")):
    from karmactl.cli.commands import start_context

    ctx.obj = start_context(state, now, verbose, lock_timeout, ctx.invoked_subcommand, kubeconfig_dir,
                            allow_exec_plugins)


# ---------------------------------------------------------------------------- apply / delete
@app.command()
def apply(ctx: typer.Context,
          filename: List[str] = typer.Option(..., "-f", "--filename", help="File, directory, http(s) URL or - for stdin (repeatable)."),
          recursive: bool = typer.Option(True, "-R", "--recursive", help="Walk directories recursively."),
          dry_run: bool = typer.Option(False, "--dry-run", help="Only print what would change.")):
    """Store every object found in the given YAML files in the state directory (kubectl apply)."""
    from karmactl.cli.commands import apply_cmd
    apply_cmd(ctx_of(ctx), filename, recursive, dry_run)


@app.command()
def delete(ctx: typer.Context,
           resources: Optional[List[str]] = typer.Argument(None, metavar="TYPE [NAME...] | TYPE/NAME...",
                                                           help="Resource type and names (deploy nginx, pp/web...)."),
           filename: Optional[List[str]] = typer.Option(None, "-f", "--filename", help="Delete the objects in these files."),
           namespace: str = typer.Option("default", "-n", "--namespace"),
           selector: Optional[str] = typer.Option(None, "-l", "--selector", help="Delete the objects matching a label selector."),
           all_objects: bool = typer.Option(False, "--all", help="Delete every object of the type (in the namespace)."),
           all_namespaces: bool = typer.Option(False, "-A", "--all-namespaces", help="With -l or --all: every namespace."),
           ignore_not_found: bool = typer.Option(False, "--ignore-not-found"),
           dry_run: bool = typer.Option(False, "--dry-run", help="Only print what would be deleted.")):
    """Remove objects from the state directory (the next reconcile removes what they propagated)."""
    from karmactl.cli.commands import delete_cmd
    delete_cmd(ctx_of(ctx), resources or [], filename or [], namespace, ignore_not_found, selector, all_objects,
               all_namespaces, dry_run)


# ---------------------------------------------------------------------------- get / describe
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
    from karmactl.cli.commands import get_from_flags
    get_from_flags(ctx_of(ctx), resources=resources, namespace=namespace, all_namespaces=all_namespaces,
                   output=output, selector=selector, field_selector=field_selector, operation_scope=operation_scope,
                   clusters=clusters, ignore_not_found=ignore_not_found, show_labels=show_labels,
                   label_columns=label_columns, sort_by=sort_by, no_headers=no_headers, watch=watch,
                   watch_only=watch_only)


@app.command()
def describe(ctx: typer.Context, kind: str = typer.Argument(..., metavar="TYPE | TYPE/NAME"),
             name: Optional[str] = typer.Argument(None),
             namespace: str = typer.Option("default", "-n", "--namespace"),
             all_namespaces: bool = typer.Option(False, "-A", "--all-namespaces")):
    """Show an object in detail."""
    from karmactl.cli.commands import describe_from_args
    describe_from_args(ctx_of(ctx), kind=kind, name=name, namespace=namespace, all_namespaces=all_namespaces)


# ---------------------------------------------------------------------------- reconcile / plan
@app.command()
def reconcile(ctx: typer.Context,
              offline: bool = typer.Option(False, "--offline", help="Never contact members; trust Cluster status in the files."),
              dry_run: bool = typer.Option(False, "--dry-run", help="Print what would change; write nothing."),
              wait: bool = typer.Option(False, "--wait", help="Repeat runs until nothing changes."),
              timeout: str = typer.Option("5m", "--timeout", help="With --wait: give up after this long (e.g. 90s, 5m)."),
              watch: bool = typer.Option(False, "-w", "--watch",
                                         help="Keep running: a pass whenever files, cluster health or the clock call "
                                              "for one (until Ctrl-C / SIGTERM)."),
              resync: str = typer.Option("30m", "--resync", help="With --watch: a whole pass at least this often."),
              metrics_addr: Optional[str] = typer.Option(None, "--metrics-addr",
                                                         help="With --watch: serve /metrics (Prometheus) and /healthz "
                                                              "on HOST:PORT.")):
    """Run the control plane once: detector, scheduler, controllers, execution on members, status."""
    from karmactl.cli.commands import reconcile_cmd
    reconcile_cmd(ctx_of(ctx), offline=offline, dry_run=dry_run, wait=wait, timeout=timeout, watch=watch,
                  resync=resync, metrics_addr=metrics_addr)


@app.command()
def plan(ctx: typer.Context,
         offline: bool = typer.Option(True, "--offline/--online", help="Online: also read the member copies."),
         output: Optional[str] = typer.Option(None, "-o", "--output", help="name: only the changed objects' names.")):
    """What a reconcile would change, as unified diffs (exit 0 no differences, 1 differences, >1 error).

    KARMACTL_EXTERNAL_DIFF="prog args" compares two directories (LIVE, MERGED) with prog instead.
    """
    from karmactl.cli.commands import plan_cmd
    plan_cmd(ctx_of(ctx), offline, output)


app.command(name="diff", help="Alias of plan.")(plan)


# ---------------------------------------------------------------------------- cluster condition
@condition_app.command("set")
def condition_set(ctx: typer.Context, name: str = typer.Argument(..., help="Cluster name."),
                  condition: str = typer.Argument(..., help="TYPE=True|False|Unknown"),
                  reason: Optional[str] = typer.Option(None, "--reason"),
                  message: Optional[str] = typer.Option(None, "--message")):
    """Record a condition on a Cluster's status, as the member's own report would."""
    from karmactl.cli.commands import condition_cmd
    if "=" not in condition:
        raise CLIError(f'invalid condition "{condition}": expected TYPE=True|False|Unknown')
    ctype, status = condition.split("=", 1)
    if status not in ("True", "False", "Unknown"):
        raise CLIError(f'invalid condition status "{status}": must be True, False or Unknown')
    condition_cmd(ctx_of(ctx), name, ctype, status, reason, message)


@condition_app.command("unset")
def condition_unset(ctx: typer.Context, name: str = typer.Argument(...), ctype: str = typer.Argument(..., metavar="TYPE")):
    """Remove a condition from a Cluster's status."""
    from karmactl.cli.commands import condition_cmd
    condition_cmd(ctx_of(ctx), name, ctype, None, None, None)


# ---------------------------------------------------------------------------- completion
@app.command()
def completion(shell: str = typer.Argument(..., help="bash, zsh or fish")):
    """Print a shell completion script (e.g. `source <(karmactl completion bash)`); it completes commands,
    flags, kinds, object names, namespaces, clusters, output formats and files."""
    from karmactl.cli.completing import script

    if shell not in ("bash", "zsh", "fish"):
        raise CLIError(f'unsupported shell "{shell}": use bash, zsh or fish')
    out(script(shell))


def _register_extra_commands():
    """Commands living in their own modules register themselves here (members, suspension, ...)."""
    import importlib
    for module in ("karmactl.cli.members_cmds", "karmactl.cli.ops_cmds", "karmactl.cli.failover_cmds",
                   "karmactl.cli.observe_cmds", "karmactl.cli.interpret_cmd", "karmactl.cli.export_cmd",
                   "karmactl.cli.rebalance_cmd", "karmactl.cli.verbs"):
        try:
            mod = importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise
            continue
        mod.register(app)


_register_extra_commands()
