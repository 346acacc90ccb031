"""The ``karmactl`` typer app: the global flags and the one list of commands (as karmadactl's
``pkg/karmadactl/karmadactl.go`` lists its commands), kubectl and karmadactl conventions (DESIGN §5).

Each command (or family a user sees as one command: ``cluster condition set|unset``, ``label`` and
``annotate``, ``cordon`` and ``uncordon``...) is one module ``karmactl/cli/cmd/<command>.py`` with a
``register(app)`` that declares its flags and the functions that run it; :data:`COMMANDS` names them
all. Command modules never import each other (an import-linter contract in pyproject.toml): what
several share lives in the helper modules of ``karmactl/cli/`` (``context``, ``stores``, ``flags``,
``objects``, ``printers``, ``inputs``, ``applying``, ``listing``, ``converging``, ``membership``,
``clusters``).

Imported only when a command runs: :mod:`karmactl.cli.main` answers ``--help`` and completion
requests without it (typer costs more than the whole answer may take), and ``get``, ``describe``
and ``reconcile`` are parsed by :mod:`karmactl.cli.light` without it.
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

app = typer.Typer(name="karmactl", no_args_is_help=True, add_completion=False, rich_markup_mode=None,
                  context_settings={"help_option_names": ["-h", "--help"]},
                  help="Karmada-style multi-cluster propagation from a state directory: apply Karmada YAML, "
                       "reconcile bindings and Works, propagate to member clusters.")


def _print_version(value: bool) -> None:
    if value:
        from karmactl.cli.cmd.version import version_cmd
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
                                                      "auth-providers (refused otherwise)."),
         allow_proxy: Optional[str] = typer.Option(None, "--allow-proxy", envvar="KARMACTL_ALLOWED_PROXIES",
                                                   metavar="URL[,URL...]",
                                                   help="Proxies a Cluster's spec.proxyURL may name (else only the "
                                                        "proxy-url of the member's own kubeconfig is used).")):
    from karmactl.cli.context import start_context

    ctx.obj = start_context(state, now, verbose, lock_timeout, ctx.invoked_subcommand, kubeconfig_dir,
                            allow_exec_plugins, allow_proxy)


# The commands, one module each under karmactl/cli/cmd/ (karmadactl.go's list). The order is the order
# of `karmactl --help`'s list (typer lists commands as registered, groups such as cluster and create last).
COMMANDS = (
    "apply", "delete", "get", "describe", "reconcile", "plan", "cluster", "completion",
    "join", "unjoin", "local_up", "demo", "suspend", "taint", "cordon", "observe", "interpret", "export",
    "rebalance", "version", "api_resources", "api_versions", "patch", "create", "promote", "explain", "edit",
    "label", "fleet",
)

def _register_commands() -> None:
    """Add every command of :data:`COMMANDS` to :data:`app` (each module's ``register(app)``)."""
    import importlib

    for name in COMMANDS:
        importlib.import_module(f"karmactl.cli.cmd.{name}").register(app)


_register_commands()


_CLICK = []


def click_command():
    """The click command typer builds from :data:`app`, built once per process: calling ``app(...)``
    rebuilds the whole command tree on every call, which an in-process caller running many
    commands (the tests, the continuous loop's callers) pays each time."""
    if not _CLICK:
        import typer.main

        _CLICK.append(typer.main.get_command(app))
    return _CLICK[0]
