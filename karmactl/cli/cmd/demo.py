"""``karmactl demo``: the whole tour in one command: local-up, apply the nginx sample, reconcile until
ready, show the results (with the helpers those commands use: :mod:`karmactl.cli.membership`,
:mod:`karmactl.cli.applying`, :mod:`karmactl.cli.converging`, :mod:`karmactl.cli.listing`).

Without ``--state`` (or ``KARMACTL_STATE``) the demo works in a state directory of its own under the
user's cache directory (:func:`demo_state_dir`), never in ``./state``: in a clone of the repository
that is the committed sample, which the demo must leave as it is."""
from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path
from typing import Optional

import typer

from karmactl.cli.applying import apply_cmd
from karmactl.cli.context import CLIError, Context, ExitCode, err, out
from karmactl.cli.converging import wait_converged
from karmactl.cli.flags import parse_duration
from karmactl.cli.listing import GetOptions, get_cmd
from karmactl.cli.membership import KUBE_APISERVER_HELP, KUBE_CLUSTER_HELP, local_up
from karmactl.cli.stores import member_layer

MEMBERS_MISSING = "member support is not installed (karmactl.members.layer)"


def _default_manifests() -> Path:
    here = Path("manifests") / "nginx"
    if here.is_dir():
        return here
    repo = Path(__file__).resolve().parents[3] / "manifests" / "nginx"
    if repo.is_dir():
        return repo
    raise CLIError("no sample manifests found (looked for ./manifests/nginx and the karmactl source tree); pass --manifests DIR")


def demo_state_dir(environ=None) -> Path:
    """The demo's own state directory: ``$XDG_CACHE_HOME/karmactl/demo`` (default
    ``~/.cache/karmactl/demo``), outside any repository."""
    environ = os.environ if environ is None else environ
    cache = environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(cache) / "karmactl" / "demo"


def demo(c: Context, manifests: Path | None = None, count: int = 3, timeout: float = 60.0,
         kube_apiserver: str | None = None, kube_cluster: str | None = None) -> None:
    """local-up (emulators, or real kube-apiservers with ``kube_apiserver``), apply the sample,
    reconcile until converged, then show clusters, bindings, Works, the member copies and the
    kubectl command to look at member2 directly."""

    manifests = manifests or _default_manifests()
    if not Path(manifests).exists():
        raise CLIError(f'the path "{manifests}" does not exist')
    err(f"== local-up: {count} member clusters" + (f" on {kube_apiserver or kube_cluster}"
                                                    if kube_apiserver or kube_cluster else ""))
    members = local_up(c, count, nodes=2 if kube_cluster else None, kube_apiserver=kube_apiserver,
                       kube_cluster=kube_cluster)
    err(f"== apply -f {manifests}")
    apply_cmd(c, [str(manifests)], True, False)
    err("== reconcile until converged")
    wait_converged(c, member_layer(c, missing=MEMBERS_MISSING, code=ExitCode.MEMBER_FAILURE), timeout)

    def show(title: str, kind: str, **kw):
        out(f"\n$ karmactl {title}")
        fresh = Context(state=c.state, now_text=c.now_text, verbose=c.verbose)
        sys.stdout.flush()
        get_cmd(fresh, [kind], GetOptions(ignore_not_found=True, **kw))

    show("get clusters", "clusters")
    show("get deploy", "deployments")
    show("get rb", "resourcebindings")
    show("get works -A", "works", all_namespaces=True)
    show("get deploy -s members", "deployments", scope="members")
    kubeconfig = next((m["kubeconfig"] for m in members if m["name"] == "member2"), members[-1]["kubeconfig"])
    state = shlex.quote(str(c.state))
    out(f"\nThe demo's state directory is {c.state}; look at it with:")
    out(f"  export KARMACTL_STATE={state}")
    out("  karmactl get deploy nginx -o yaml; karmactl describe rb nginx-deployment; karmactl plan")
    out("Look at a member with kubectl:")
    out(f"  kubectl --kubeconfig {kubeconfig} get deploy nginx -n default")
    out(f"Stop the members with: karmactl --state {state} local-down")


def register(app: typer.Typer) -> None:
    """Add ``demo`` to the app."""
    kube_apiserver_option = typer.Option(None, "--kube-apiserver", envvar="KARMACTL_KUBE_APISERVER", metavar="PATH",
                                         help=KUBE_APISERVER_HELP)

    @app.command("demo", rich_help_panel="Local members")
    def demo_command(ctx: typer.Context,
                     manifests: Optional[Path] = typer.Option(None, "--manifests", help="Directory to apply (default manifests/nginx)."),
                     timeout: str = typer.Option("60s", "--timeout", help="How long to wait for convergence."),
                     members: int = typer.Option(3, "--members", help="Number of members (member1..N; the sample uses member1 and member2)."),
                     kube_apiserver: Optional[str] = kube_apiserver_option,
                     kube_cluster: Optional[str] = typer.Option(None, "--kube-cluster", envvar="KARMACTL_KUBE_CLUSTER",
                                                                metavar="LAUNCHER", help=KUBE_CLUSTER_HELP)):
        """The tour: local-up, apply the nginx sample, reconcile until ready, show the results (in its own
        state directory, ~/.cache/karmactl/demo, unless --state or KARMACTL_STATE names one)."""
        c = ctx.obj
        source = ctx.parent.get_parameter_source("state") if ctx.parent is not None else None
        if source is not None and source.name == "DEFAULT":
            c = Context(state=demo_state_dir(), now_text=c.now_text, verbose=c.verbose, command=c.command)
        demo(c, manifests, members, parse_duration(timeout, "--timeout"), kube_apiserver, kube_cluster)
