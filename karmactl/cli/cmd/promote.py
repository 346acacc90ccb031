"""``karmactl promote``: put an object already running on a member under management: its template and a
policy placing it on that member (karmadactl ``pkg/karmadactl/promote/promote.go``)."""
from __future__ import annotations

import sys
from typing import Optional

import typer

from karmactl.cli.context import CLIError, Context, out
from karmactl.cli.objects import COMPUTED_KINDS
from karmactl.cli.stores import load_snapshot


def policy_name(namespace: str, name: str, info) -> str:
    """karmadactl promote's generated policy name (``names.GeneratePolicyName``): ``<name>-<hash>``, the
    hash FNV-1a 32 of ``<namespace><group>/<version>, Kind=<kind>`` in decimal, safe-encoded, lowercased."""
    from karmactl.api.names import fnv1a_32, safe_encode

    gvk = f"{info.group}/{info.version}, Kind={info.kind}"
    return f"{name.replace(':', '.')}-{safe_encode(str(fnv1a_32((namespace + gvk).encode('utf-8'))))}".lower()


def promote_cmd(c: Context, kind: str, name: str, namespace: str, cluster: str, name_of_policy: Optional[str],
                auto_create_policy: bool, deps: bool, dry_run: bool, output: Optional[str]) -> None:
    """karmadactl's ``promote``: read an object that already runs on a member, write it into the state
    directory as a resource template (server fields pruned as Karmada's ``prune.RemoveIrrelevantFields``
    does, ``work.karmada.io/conflict-resolution: overwrite`` added) and, unless
    ``--auto-create-policy=false``, a (Cluster)PropagationPolicy placing it on that member with
    ``conflictResolution: Overwrite`` and ``preserveResourcesOnDeletion: true``, so the next reconcile
    takes the running object over instead of conflicting with it. Follows
    ``pkg/karmadactl/promote/promote.go``.

    Raises:
        CLIError: an unregistered cluster, an unreachable member, the object absent there, or the
            template or policy already in the state directory (exit 2); ``-o`` other than yaml/json.
    """
    from karmactl.cli.kindnames import lookup_kind
    from karmactl.cli.printers import render

    if output not in (None, "yaml", "json"):
        raise CLIError("invalid output format: supported formats are json and yaml")
    if not cluster:
        raise CLIError("the cluster cannot be empty")
    snap = load_snapshot(c)
    info = lookup_kind(snap.registry, kind)
    if info is None:
        raise CLIError(f'the server doesn\'t have a resource type "{kind}"')
    if info.karmada or (info.group, info.kind) in COMPUTED_KINDS:
        raise CLIError(f"{info.kind} is a Karmada kind: only workloads running on a member can be promoted")
    clusters = {k[3]: o for k, o in snap.user.items() if k[:2] == ("cluster.karmada.io", "Cluster")}
    if cluster not in clusters:
        raise CLIError(f'cluster "{cluster}" is not registered in the state directory (karmactl join)')
    ns = namespace if info.namespaced else ""
    template = _template(_member_object(c, clusters[cluster], cluster, info, ns, kind, name), info)
    docs = [(info, template)]
    if auto_create_policy:
        policy = _policy(info, ns, name, cluster, name_of_policy or policy_name(ns, name, info), deps)
        docs.append((snap.registry.for_object(policy["apiVersion"], policy["kind"]), policy))
    if dry_run:
        for pinfo, o in docs:
            text = render([(pinfo, o)], output or "yaml", c.now, single=True)
            sys.stdout.write(text if output == "json" else "---\n" + text)
        return
    _store(c, docs, info, ns, name)
    if auto_create_policy:
        where = f"{ns}/{docs[1][1]['metadata']['name']}" if ns else docs[1][1]["metadata"]["name"]
        out(f"{docs[1][1]['kind']} ({where}) is created successfully")
    gvr = f"{info.group}/{info.version}, Resource={info.plural}" if info.group else f"/{info.version}, Resource={info.plural}"
    out(f'Resource "{gvr}"({ns + "/" if ns else ""}{name}) is promoted successfully')


def _member_object(c: Context, cluster_obj: dict, cluster: str, info, ns: str, kind: str, name: str) -> dict:
    """The object as the member ``cluster`` holds it.

    Raises:
        CLIError: the member cannot be reached, or the object is not there (exit 2).
    """
    from karmactl.cli.members_view import MemberAccessError, MemberReader, resource_path

    try:
        reader = MemberReader(cluster_obj, c.state)
    except MemberAccessError as exc:
        raise CLIError(f"cluster({cluster}): {exc}") from None
    try:
        obj = reader.get(resource_path(info, ns or None, name))
    except MemberAccessError as exc:
        if exc.status == 404:
            raise CLIError(f"the {kind} or {name} don't exist in cluster({cluster})") from None
        raise CLIError(f"cluster({cluster}): {exc}") from None
    finally:
        reader.close()
    return obj


def _template(obj: dict, info) -> dict:
    """The resource template of a member's object: server fields pruned (Karmada's
    ``prune.RemoveIrrelevantFields``), ``work.karmada.io/conflict-resolution: overwrite`` added."""
    from karmactl.api.constants import CONFLICT_RESOLUTION_ANNOTATION
    from karmactl.interpreter.prune import prune_manifest

    obj.setdefault("apiVersion", info.api_version)
    obj.setdefault("kind", info.kind)
    template = prune_manifest(obj, remove_job_ttl=False)
    meta = template.setdefault("metadata", {})
    annotations = meta.get("annotations") or {}
    annotations.setdefault(CONFLICT_RESOLUTION_ANNOTATION, "overwrite")
    meta["annotations"] = annotations
    return template


def _policy(info, ns: str, name: str, cluster: str, pname: str, deps: bool) -> dict:
    """The (Cluster)PropagationPolicy placing the promoted object on ``cluster`` (conflictResolution
    Overwrite, preserveResourcesOnDeletion)."""
    pkind = "PropagationPolicy" if info.namespaced else "ClusterPropagationPolicy"
    return {"apiVersion": "policy.karmada.io/v1alpha1", "kind": pkind,
            "metadata": {"name": pname, **({"namespace": ns} if ns else {})},
            "spec": {"propagateDeps": deps,
                     "resourceSelectors": [{"apiVersion": info.api_version, "kind": info.kind, "name": name}],
                     "placement": {"clusterAffinity": {"clusterNames": [cluster]}},
                     "conflictResolution": "Overwrite", "preserveResourcesOnDeletion": True}}


def _store(c: Context, docs: list, info, ns: str, name: str) -> None:
    """Append the template (``docs[0]``) and the policy to the state directory, none if any exists.

    Raises:
        CLIError: the template or the policy already in the state directory (exit 2).
    """
    from karmactl.reconcile import normalize_object
    from karmactl.store import edit
    from karmactl.store.fsio import state_lock
    from karmactl.store.state import Source, StateStore, key_of

    template = docs[0][1]
    with state_lock(c.state):
        store = StateStore(c.state)
        index = edit.index_user_objects(store)
        for pinfo, o in docs:
            normalize_object(o, Source("<promoted>", 0, 1), store.registry, strict=True)
            if key_of(o) in index:
                if o is template:
                    raise CLIError(f'{info.resource_ref} "{name}" already exists in the state directory')
                where = f"{ns}/{o['metadata']['name']}" if ns else o["metadata"]["name"]
                raise CLIError(f"the {o['kind']}({where}) already exist, please edit it to propagate resource")
        for pinfo, o in docs:
            edit.append_new(store, pinfo, o)
            edit.stamp_creation(store, key_of(o), o, c.now)

def register(app: typer.Typer) -> None:
    """Add ``promote`` to the app."""

    @app.command()
    def promote(ctx: typer.Context, kind: str = typer.Argument(..., metavar="TYPE"), name: str = typer.Argument(...),
                namespace: str = typer.Option("default", "-n", "--namespace"),
                cluster: str = typer.Option("", "-C", "--cluster", help="The member the object runs on (e.g. -C member1)."),
                policy_name_: Optional[str] = typer.Option(None, "--policy-name", help="Name of the policy to create (default: NAME-<hash>)."),
                auto_create_policy: bool = typer.Option(True, "--auto-create-policy/--no-auto-create-policy",
                                                        help="Also write a (Cluster)PropagationPolicy placing it on that member."),
                deps: bool = typer.Option(False, "-d", "--dependencies", help="Set propagateDeps on the policy."),
                dry_run: bool = typer.Option(False, "--dry-run", help="Print the template and policy; write nothing."),
                output: Optional[str] = typer.Option(None, "-o", "--output", help="json or yaml (with --dry-run).")):
        """Put an object already running on a member under management: its template and a policy (karmadactl promote)."""
        promote_cmd(ctx.obj, kind, name, namespace, cluster, policy_name_, auto_create_policy, deps, dry_run, output)
