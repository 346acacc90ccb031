"""The computed files of a warm full sharded run, read shard by shard (issue 15: a 10,000-template
run under 300 MB, the run over an already reconciled state included).

A full offline run over a reconciled state (a Cluster, an override or the settings changed:
``runindex.plan`` answers ``full``) used to load every computed file (bindings, Works with their
manifests, status overlays: some 280 MB of objects at 10,000 templates) before forking its shard
processes (``sharded.run_sharded``), which then touched most of those pages. When the last run's
index is there, its owners (``runindex.computed_owners``: the binding whose template's results each
file holds, ``runindex.SHARED`` for what several templates read) say which shard will need each
file: the parent reads only the shared files and those the index does not know, and each shard
process reads the files of one shard just before computing it and lets them go with its results.

The owners are the last run's, so they are checked, never trusted: each object read in a shard
must be one the sharding of the whole snapshot would have given that shard alone, without changing
how anything else is split (``shards.Sharding.late_input_conflict``: its shard, no shared or joining
binding, no claim of a policy the shard does not get). A status file whose template is no longer a
split template is read by the parent (its object goes to every shard). A file that cannot be read,
or an object that does not fit, raises :class:`StaleShardInputs`: the run is computed again from
the whole snapshot loaded as before, which also reports a damaged file exactly as a load does.
"""
from __future__ import annotations

from karmactl.api.snapshot import Snapshot
from karmactl.incremental.shards import shard_of
from karmactl.incremental.runindex import binding_key_of_owner
from karmactl.store.state import InputError, computed_map, computed_order


class StaleShardInputs(Exception):
    """A computed file read in a shard process does not fit the shard the last run's index gave
    it (or cannot be read): the run must load every computed file first, as without an index."""


def deferrable(owners: dict, live: set, shared: str):
    """``f(relative path) -> bool``: whether a computed file can wait for its shard: the index
    knows it (``owners``: ``{relative path: owner}``), its owner is not ``shared`` (what several
    templates read), and a status file's owner is in ``live`` (the owners of the split templates
    loaded now; the status of a template gone or no longer split goes to every shard)."""
    def defer(rel: str) -> bool:
        owner = owners.get(rel)
        if owner is None or owner == shared:
            return False
        return computed_map(rel) != "overlays" or owner in live
    return defer


class ShardInputs:
    """The computed files left for the shard processes, by shard.

    Args:
        rels: relative paths of the files not read before the split
            (``StateStore.read_computed``'s skipped ones, in its order).
        owners: ``{relative path: owner string}`` (``runindex.computed_owners``; only the
            owners of ``rels`` are kept).
    """

    def __init__(self, rels: list, owners: dict):
        self.rels = rels
        self.owners = [owners[rel] for rel in rels]
        self.by_shard: list = []

    def split(self, shards: int) -> None:
        """Group the files by the shard of their owner (``shards.shard_of`` of its binding key),
        among ``shards`` (``Sharding.shards``), each group in load order; the lists given to the
        constructor are let go."""
        self.by_shard = [[] for _ in range(shards)]
        of_owner: dict = {}
        for rel, owner in zip(self.rels, self.owners):
            shard = of_owner.get(owner)
            if shard is None:
                shard = of_owner[owner] = shard_of(binding_key_of_owner(owner), shards)
            self.by_shard[shard].append(rel)
        self.rels = self.owners = None

    def add_to(self, store, sub: Snapshot, sharding, shard: int) -> None:
        """Read the files of shard ``shard`` into ``sub`` (its part of the snapshot, from
        ``Sharding.split``), each map then in the order a whole load gives
        (``state.computed_order``), so the shard computes exactly what it would have.

        Raises:
            StaleShardInputs: a file cannot be read or its object does not fit the shard
                (module docs); nothing is added then.
        """
        rels = self.by_shard[shard]
        if not rels:
            return
        got = Snapshot(store.registry)
        try:
            store.read_computed(got, rels)
        except InputError as exc:
            raise StaleShardInputs(f"a computed file cannot be read: {exc}") from None
        for which in ("bindings", "works", "overlays"):
            new = getattr(got, which)
            if not new:
                continue
            for key, obj in new.items():
                why = sharding.late_input_conflict(which, key, obj, shard)
                if why is not None:
                    raise StaleShardInputs(f"{store.computed_rel(key)}: {why}")
            old = getattr(sub, which)
            if not old.keys().isdisjoint(new):
                raise StaleShardInputs(f"a computed object of shard {shard} was read twice")
            merged = [(computed_order(store.computed_rel(k)), k, v) for k, v in old.items()]
            merged += [(computed_order(store.computed_rel(k)), k, v) for k, v in new.items()]
            merged.sort(key=lambda item: item[0])
            setattr(sub, which, {k: v for _order, k, v in merged})
