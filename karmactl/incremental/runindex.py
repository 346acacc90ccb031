"""The index of the last run: what lets an offline run skip the work whose result cannot have
changed (issue 15's incremental engine).

Karmada's controllers reconcile one object at a time, triggered by watch events on what it read;
karmactl has no watches, so it keeps, under ``<state>/.karmactl/``, what a completed offline run
read and wrote, in three files written atomically, the first one last:

* ``run-index.json``, what every run reads (3 MB at 10,000 templates, decoded in a few
  milliseconds): the signatures ``[mtime_ns, size, inode]`` of the user files as they were read and
  of the files under ``computed/`` after the commit (Events excepted: history, not input), packed
  per directory (:class:`Signatures`); ``wakes``: per owner the earliest time at which a clock-based rule could change
  its result although no input changed (``Step.wake`` in ``karmactl/pipeline/registry.py``:
  toleration windows, grace periods, eviction history, WorkloadRebalancer TTLs), ``""`` for the
  whole state; ``warnings`` (an unchanged run repeats them) and ``now``, the run's clock; and the
  tokens of the two other files.
* ``run-index.detail.json``, what a partial run reads (:func:`read_detail`): ``where`` each user
  object's key was held, marked *split* (a resource template computed on its own) or not;
  ``byOwner``: the computed files of each *owner*: ``"<namespace>/<name>"`` of the ResourceBinding
  (``"/<name>"`` of the ClusterResourceBinding) whose template's result they are, or ``""`` for
  what several templates read (cluster status, Namespace and Service results, policy status...),
  exactly the split of ``karmactl/incremental/shards.py``; ``claims``: per computed file the
  ``"<kind>/<namespace>/<name>"`` of the (Cluster)PropagationPolicy a binding's or a template
  status's claim annotations name (:func:`claim_string`). Flat string maps: they decode several
  times faster than nested lists.
* ``run-index.shared.json`` (:class:`SharedFile`): the validated non-split user objects (Clusters,
  policies, overrides, settings, CRDs, Namespaces, Services...) with their sources, so a partial
  run reads neither the parse cache nor any file it has not to; policies that name their templates
  each in its own JSON text, decoded only when a partial run reaches them.

:func:`plan` compares the directory with the index: ``unchanged`` (stat every input and computed
file, read none), ``partial`` (only split templates' files changed, or some owners' wake time has
come: ``karmactl/incremental/partial.py`` computes those templates with the shared objects, as
a shard does, and writes only their files), or ``full`` with the reason. Any doubt is a full run:
a missing or corrupt index, another karmactl (its source stamp), a clock set back, a computed file
the index did not record (edited by hand, ``git checkout``, an online run, ``observe``), a pending
journal (a killed writer), any non-split object changed other than a (Cluster)PropagationPolicy
that names its templates.

A (Cluster)PropagationPolicy changed, added or removed (:func:`policy_change_owners`) reaches the
templates its old version (from the shared file) or its new one can select, and those whose
computed files carry its claim (the detail's ``claims``): ``shards.reach_of``, the matcher that sends
policies to shards. When every resource selector of both versions has a ``name``, that is the
templates of those kinds and names: the partial run reads them from their (unchanged) files and
computes them with the new policies; the shared file is rewritten with them. A selector without a
name (labels, a whole kind) may reach any template, and a Namespace or Service (read by other
templates) reached means the same: a full run. A policy changed in a run that warns is a full run
too (a warning may concern templates not computed).

Issue 15 asks for a fingerprint per binding of everything its result depends on. Here that
fingerprint is split along the lines the shards already prove: a split template's result depends on
its own file (signature), its own computed files (signatures: the previous result is input too),
the shared objects and their results (any change to one is a full run), and the clock (its wake
time). So comparing signatures is comparing the fingerprint, without reading or hashing anything;
and what a change could reach beyond its own template is checked after the fact: a partial run that
changes an object it does not own is dropped for a full run. The one shared change narrowed is the
policy that names its templates (above): the matched policy is the part of a binding's fingerprint
issue 15 names, and at 10,000 templates with a policy each it is the common edit; a Cluster,
override or settings change, or a policy selecting by labels, stays a full run.

JSON (orjson) rather than SQLite: the signatures are read whole by every run (the unchanged check
needs every one) and written whole after each one, which one orjson file does in milliseconds; the
index is written after the run's commit (and dropped before it), so a crash in between leaves no
index, or one whose computed signatures no longer match: a full run. The unchanged check's stat
calls (60,000 at 10,000 templates) are split between this process and a forked one
(:func:`computed_check`).
"""
from __future__ import annotations

import base64
import os
import secrets
import stat
from array import array
from dataclasses import dataclass, field

import orjson

from karmactl.api.objects import parse_time
from karmactl.api.snapshot import Settings
from karmactl.controllers.helper.template import DetectorConfig, is_template
from karmactl.controllers.helper.work import work_binding_key
from karmactl.incremental.shards import (PROPAGATION_POLICY_KINDS, SHARED_TEMPLATE_KINDS, claimed_policy_key,
                                         reach_of, shared_binding, template_binding_key)
from karmactl.store.fsio import (drop_inherited_lock, ensure_runtime_dir, pending_journal, read_runtime_file,
                                 write_atomic)
from karmactl.store.state import COMPUTED_DIR, RUNTIME_DIR, InputError, scan_computed_dirs

INDEX_FILE = "run-index.json"
SHARED_FILE = "run-index.shared.json"
DETAIL_FILE = "run-index.detail.json"
FORMAT = 3  # 2: computed entries carry the claim (``claim_string``); 3: signatures apart from the detail
SHARED = ""  # the owner of what several templates read
NO_OWNER = (SHARED, "")  # the tail of a computed entry nothing in the run's owner map claims
# A file modified within this many nanoseconds before a run read it may be modified again in the
# same tick of the file system's coarse clock without its signature changing ("racily clean", as
# git calls it): it is recorded with UNSURE, so the next run reads it again.
RACY_NS = 1_000_000_000
UNSURE = [-1, -1, -1]
# An unchanged check of at least this many computed files stats them in a forked process
# (:func:`computed_check`).
FORK_CHECK_MIN = 5000


def recorded_signature(sig: list, started_ns: int) -> list:
    """The signature to keep for a file read by a run that started at ``started_ns``
    (``time.time_ns()``): ``sig``, or :data:`UNSURE` when the file is racily clean."""
    return UNSURE if sig[0] >= started_ns - RACY_NS else sig


def owner_of_binding(key) -> str:
    """The owner string of a binding key: ``"<namespace>/<name>"`` (``"/<name>"`` cluster-scoped)."""
    return f"{key[2]}/{key[3]}"


def binding_key_of_owner(owner: str) -> tuple:
    """The ResourceBinding (``"<namespace>/<name>"``) or ClusterResourceBinding (``"/<name>"``)
    key of an owner string (the inverse of :func:`owner_of_binding`)."""
    namespace, _, name = owner.partition("/")
    return ("work.karmada.io", "ResourceBinding" if namespace else "ClusterResourceBinding", namespace, name)


def policy_string(pkey) -> str:
    """``"<kind>/<namespace>/<name>"`` of a (Cluster)PropagationPolicy key: how the index names a
    policy (claims, the shared file's keys)."""
    return f"{pkey[1]}/{pkey[2]}/{pkey[3]}"


def claim_string(which: str, obj: dict) -> str:
    """The claim a computed object carries, as the index keeps it: the :func:`policy_string` of
    the (Cluster)PropagationPolicy named by a binding's or an overlay's claim annotations
    (``shards.claimed_policy_key``; ``pkg/detector/claim.go``), ``""`` for none (and for Works)."""
    if which == "works":
        return ""
    pkey = claimed_policy_key(obj.get("metadata"))
    return "" if pkey is None else policy_string(pkey)


def is_split(key, obj: dict, config: DetectorConfig) -> bool:
    """Whether a user object is a template computed on its own (not read by other templates'
    computations): a resource template (``controllers.helper.template.is_template``) of a kind outside
    ``SHARED_TEMPLATE_KINDS``, and not karmactl's settings."""
    return key[:2] not in SHARED_TEMPLATE_KINDS and key != Settings.SETTINGS_KEY and is_template(key, obj, config)


class Owners:
    """Who owns each computed object of a snapshot (``which``: bindings, works, overlays).

    Args:
        split: keys of the split templates (:func:`is_split`).
        shared_bindings: keys of bindings of shared template kinds (``shards.shared_binding``).
    """

    def __init__(self, split, shared_bindings):
        self.split = split
        self.shared_bindings = shared_bindings

    @classmethod
    def of(cls, user: dict, bindings: dict, config: DetectorConfig) -> "Owners":
        """From the user objects and the bindings (both ``key -> object``) of a snapshot."""
        return cls({k for k, o in user.items() if is_split(k, o, config)},
                   {k for k, b in bindings.items() if shared_binding(b)})

    def owner(self, which: str, key, obj: dict) -> str:
        """The owner string of one computed object (module docs)."""
        if which == "bindings":
            return SHARED if key in self.shared_bindings else owner_of_binding(key)
        if which == "works":
            bkey = work_binding_key(obj)
            return SHARED if bkey is None or bkey in self.shared_bindings else owner_of_binding(bkey)
        return owner_of_binding(template_binding_key(key)) if key in self.split else SHARED

    def owner_map(self, store, snap, keep=None) -> dict:
        """``{relative path of a computed file: [owner, claim]}`` for every computed object of
        ``snap`` (those ``keep(which, key, obj)`` accepts, when given): the tail of its ``computed``
        entry (module docs; the claim by :func:`claim_string`)."""
        out = {}
        for which in ("bindings", "works", "overlays"):
            for key, obj in getattr(snap, which).items():
                if keep is None or keep(which, key, obj):
                    out[store.computed_rel(key)] = [self.owner(which, key, obj), claim_string(which, obj)]
        return out


def wake_map(entries, now: str) -> dict:
    """``{owner: earliest RFC 3339 time}`` from ``registry.wake_times`` entries (None -> ``""``)."""
    out: dict = {}
    for bkey, when in entries:
        owner = SHARED if bkey is None else owner_of_binding(bkey)
        if owner not in out or parse_time(when) < parse_time(out[owner]):
            out[owner] = when
    return out


class Signatures:
    """The signatures ``[mtime_ns, size, inode]`` of the files of a tree, directory by directory
    (``dir`` relative to the state directory, ``""`` for its top), each directory's names in the
    order it was listed: ``dirs`` ``{dir: (names, array("q") of three integers per name)}``.

    In the index a directory is ``[names joined by "/", base64 of the array]`` (:meth:`encode`;
    file names hold no ``/``): 60,000 signatures decode in a few milliseconds, where a list of
    integers per file took about 25. A directory listed in the recorded order is compared with
    two comparisons done in C (:meth:`changes`); another order is compared name by name.
    """

    def __init__(self, dirs: dict | None = None):
        self.dirs: dict = dirs if dirs is not None else {}
        self._moved: set = set()  # directories whose names changed since they were listed

    @classmethod
    def decode(cls, data: dict) -> "Signatures":
        """From :meth:`encode`'s form (raises ValueError, TypeError, AttributeError when corrupt)."""
        dirs = {}
        for d, (joined, packed) in data.items():
            names = joined.split("/")
            sigs = array("q")
            sigs.frombytes(base64.b64decode(packed))
            if not isinstance(d, str) or len(sigs) != 3 * len(names):
                raise ValueError(f"corrupt signatures of {d}")
            dirs[d] = (names, sigs)
        return cls(dirs)

    def encode(self) -> dict:
        """``{dir: [names joined by "/", base64 of the signatures]}``."""
        return {d: ["/".join(names), base64.b64encode(sigs.tobytes()).decode()]
                for d, (names, sigs) in self.dirs.items() if names}

    def add_dir(self, d: str, names: list, sigs: array) -> None:
        """Record a directory as listed: ``names`` and their signatures, three integers each."""
        if names:
            self.dirs[d] = (names, sigs)

    def count(self, within=None, outside=()) -> int:
        """How many files are recorded (in the subtrees of the directories ``within``, when given,
        and not in those of ``outside``)."""
        return sum(len(names) for d, (names, _sigs) in self.dirs.items()
                   if (within is None or _within(d, within)) and not _within(d, outside))

    def items(self):
        """Yield ``(rel, [mtime_ns, size, inode])`` of every recorded file."""
        for d, (names, sigs) in self.dirs.items():
            for i, name in enumerate(names):
                yield (f"{d}/{name}" if d else name), list(sigs[3 * i:3 * i + 3])

    def get(self, rel: str) -> list | None:
        """The recorded signature of one file (``rel`` relative to the state directory), or None."""
        d, _, name = rel.rpartition("/")
        names, sigs = self.dirs.get(d, ((), None))
        if name not in names:
            return None
        i = names.index(name)
        return list(sigs[3 * i:3 * i + 3])

    def set(self, rel: str, sig) -> None:
        """Record (``sig``: three integers) or forget (``sig`` None) one file's signature."""
        d, _, name = rel.rpartition("/")
        names, sigs = self.dirs.get(d, ([], array("q")))
        if name in names:
            i = names.index(name)
            if sig is None:
                del names[i]
                del sigs[3 * i:3 * i + 3]
                self._moved.add(d)
            else:
                sigs[3 * i:3 * i + 3] = array("q", sig)
        elif sig is not None:
            names.append(name)
            sigs.extend(sig)
            self._moved.add(d)
        if names:
            self.dirs[d] = (names, sigs)
        else:
            self.dirs.pop(d, None)

    def relist(self, root) -> None:
        """Put the names of the directories :meth:`set` added to or removed from in the order the
        directory lists them now, so the next run compares them in C again."""
        for d in self._moved:
            if d not in self.dirs:
                continue
            try:
                order = {name: i for i, name in enumerate(os.listdir(os.path.join(str(root), d)))}
            except OSError:
                continue
            names, sigs = self.dirs[d]
            ranked = sorted(range(len(names)), key=lambda i: order.get(names[i], len(order)))
            moved = array("q")
            for i in ranked:
                moved.extend(sigs[3 * i:3 * i + 3])
            self.dirs[d] = ([names[i] for i in ranked], moved)
        self._moved.clear()

    def changes(self, d: str, entries: list) -> tuple:
        """Compare one directory as listed now (``entries``, ``os.DirEntry`` objects to stat) with
        the record: ``(changed, gone)``, the names that are new or whose signature differs, and
        the recorded names no longer listed.

        Raises:
            OSError: an entry cannot be stat'ed.
        """
        names, sigs = self.dirs.get(d, ((), None))
        listed = array("q")
        for entry in entries:
            st = entry.stat()
            listed.extend((st.st_mtime_ns, st.st_size, st.st_ino))
        now = [entry.name for entry in entries]
        if now == names:
            if listed == sigs:
                return [], []
            return [name for i, name in enumerate(now) if listed[3 * i:3 * i + 3] != sigs[3 * i:3 * i + 3]], []
        at = {name: i for i, name in enumerate(names)}
        changed = []
        for j, name in enumerate(now):
            i = at.pop(name, None)
            if i is None or listed[3 * j:3 * j + 3] != sigs[3 * i:3 * i + 3]:
                changed.append(name)
        return changed, list(at)

    def __eq__(self, other) -> bool:
        return isinstance(other, Signatures) and dict(self.items()) == dict(other.items())

    def __repr__(self) -> str:
        return f"Signatures({self.count()} files in {len(self.dirs)} directories)"


@dataclass
class RunIndex:
    """The index (module docs): ``files`` the :class:`Signatures` of the user files as they were
    read, ``computed`` those of the computed files after the commit; ``wakes`` ``{owner: RFC
    3339}``, ``warnings`` ``[str]``, ``now`` the run's clock, ``tag`` what made it, ``token`` the
    shared file's. The detail (:func:`read_detail`, None until read): ``where`` ``{key string: "1"
    or "0" (split or not) + file rel}`` of every object the user files held (:func:`key_string`),
    ``by_owner`` ``{owner: computed rels joined by newlines}`` (:meth:`files_of`), ``claims``
    ``{computed rel: claim}`` (non-empty claims only), ``detail`` its token. Maps keyed by strings
    with string values decode several times faster than lists of lists: a partial run reads them
    whole."""

    tag: str
    now: str
    files: Signatures = field(default_factory=Signatures)
    computed: Signatures = field(default_factory=Signatures)
    wakes: dict = field(default_factory=dict)
    warnings: list = field(default_factory=list)
    token: str = ""
    where: dict | None = None
    by_owner: dict | None = None
    claims: dict | None = None
    detail: str = ""

    def objects_of(self, rels) -> dict:
        """``{file rel: [(key, split)]}`` of the objects the files ``rels`` held (detail read)."""
        out: dict = {}
        for kstr, value in self.where.items():
            rel = value[1:]
            if rel in rels:
                out.setdefault(rel, []).append((string_key(kstr), value[0] == "1"))
        return out

    def held_elsewhere(self, key, rels) -> bool:
        """Whether a user file other than those of ``rels`` held ``key`` (detail read)."""
        value = self.where.get(key_string(key))
        return value is not None and value[1:] not in rels

    def split_templates(self, names=None):
        """Yield ``(key, file rel)`` of every split template the user files held (detail read), or
        of those whose name is in ``names``."""
        for kstr, value in self.where.items():
            if value[0] == "1" and (names is None or kstr.rpartition("/")[2] in names):
                yield string_key(kstr), value[1:]

    def replace_objects(self, old: dict, new: dict) -> bool:
        """Record that the files of ``old`` (:meth:`objects_of`) now hold ``new`` (``{file rel:
        [(key, split)]}``, empty for a removed file); whether that changes the detail."""
        if all(set(old.get(rel, ())) == set(new.get(rel, ())) for rel in set(old) | set(new)):
            return False
        for objs in old.values():
            for key, _split in objs:
                self.where.pop(key_string(key), None)
        for rel, objs in new.items():
            for key, split in objs:
                self.where[key_string(key)] = ("1" if split else "0") + rel
        return True

    def record_computed(self, rel: str, sig, owner: str = SHARED, claim: str = "", was=None) -> bool:
        """Record a computed file a partial run wrote (``sig`` ``[mtime_ns, size, inode]``, its
        ``owner`` and ``claim``) or removed (``sig`` None); ``was`` its owner in the last run when
        the run read it. Whether that changes the detail (read)."""
        existed = self.computed.get(rel) is not None
        self.computed.set(rel, sig)
        if existed and was is None:  # a file the run did not read: find its old owner
            was = next((o for o in self.by_owner if rel in self.files_of(o)), None)
        if sig is None:
            if was is not None:
                self._set_files(was, [r for r in self.files_of(was) if r != rel])
            self.claims.pop(rel, None)
            return True
        changed = False
        if was != owner:
            if was is not None:
                self._set_files(was, [r for r in self.files_of(was) if r != rel])
            self._set_files(owner, self.files_of(owner) + [rel])
            changed = True
        if self.claims.get(rel, "") != claim:
            if claim:
                self.claims[rel] = claim
            else:
                self.claims.pop(rel, None)
            changed = True
        return changed

    def owner_of(self) -> dict:
        """``{computed rel: owner}`` (detail read)."""
        return {rel: owner for owner in self.by_owner for rel in self.files_of(owner)}

    def owners_of(self, rels) -> dict:
        """``{computed rel: owner}`` of some files (detail read), without splitting every owner's list."""
        out: dict = {}
        for owner, joined in self.by_owner.items():
            if any(rel in joined for rel in rels):
                out.update((rel, owner) for rel in joined.split("\n") if rel in rels)
        return out

    def files_of(self, owner: str) -> list:
        """The computed files (relative paths) of ``owner`` (detail read)."""
        joined = self.by_owner.get(owner)
        return joined.split("\n") if joined else []

    def _set_files(self, owner: str, rels: list) -> None:
        if rels:
            self.by_owner[owner] = "\n".join(rels)
        else:
            self.by_owner.pop(owner, None)


def key_string(key) -> str:
    """``"<group>/<kind>/<namespace>/<name>"`` of an object key (names hold no ``/``)."""
    return "/".join(key)


def string_key(text: str) -> tuple:
    """The key of a :func:`key_string`."""
    return tuple(text.split("/", 3))


def index_path(root) -> str:
    return os.path.join(str(root), RUNTIME_DIR, INDEX_FILE)


def _shared_path(root) -> str:
    return os.path.join(str(root), RUNTIME_DIR, SHARED_FILE)


def _detail_path(root) -> str:
    return os.path.join(str(root), RUNTIME_DIR, DETAIL_FILE)


def code_stamp() -> str:
    """Changes whenever any source file of karmactl changes (count, newest mtime, total size):
    an index made by other code is not trusted."""
    import karmactl

    base = os.path.dirname(karmactl.__file__)
    count = newest = total = 0
    for dirpath, dirs, files in os.walk(base):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in files:
            if name.endswith((".py", ".json")):
                st = os.stat(os.path.join(dirpath, name))
                count, newest, total = count + 1, max(newest, st.st_mtime_ns), total + st.st_size
    return f"{count}-{newest}-{total}"


def read_index(root, tag: str) -> RunIndex | None:
    """The index without its detail (:func:`read_detail`), or None when it is missing, unreadable,
    corrupt or made under another ``tag``."""
    try:
        data = orjson.loads(read_runtime_file(index_path(root)))
        if data.get("format") != FORMAT or data.get("tag") != tag:
            return None
        index = RunIndex(tag, data["now"], Signatures.decode(data["files"]), Signatures.decode(data["computed"]),
                         data["wakes"], data["warnings"], data["token"], detail=data["detail"])
        parse_time(index.now)
        if not isinstance(index.wakes, dict) or not _strings(index.wakes.values()) or \
                not isinstance(index.warnings, list) or not _strings(index.warnings) or \
                not _strings((index.token, index.detail)):
            return None
        return index
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def _strings(values) -> bool:
    """Whether every value is a ``str`` (a damaged index is not used: the run is a full one)."""
    return all(type(v) is str for v in values)


def read_detail(root, index: RunIndex) -> bool:
    """Fill ``index.where``, ``by_owner`` and ``claims`` from the detail file (once); False when
    it is missing, corrupt or not the index's (its token)."""
    if index.where is not None:
        return True
    try:
        data = orjson.loads(read_runtime_file(_detail_path(root)))
        if data.get("token") != index.detail or not index.detail:
            return False
        where, by_owner, claims = data["where"], data["byOwner"], data["claims"]
        if not all(isinstance(m, dict) and _strings(m.values()) for m in (where, by_owner, claims)):
            return False
    except (OSError, ValueError, KeyError, AttributeError):
        return False
    index.where, index.by_owner, index.claims = where, by_owner, claims
    return True


class SharedFile:
    """The shared file as read (:func:`read_shared`): ``objects``, ``[[object, path, document
    index, line]]`` of every shared object but the (Cluster)PropagationPolicies that name their
    templates (:func:`named_targets`); those are kept each in its own JSON text and decoded on
    demand, found by the templates they name (``"<kind>/<name>"``), by file and by key
    (:func:`policy_string`, as claims name them): at 10,000 templates with a policy
    each, a partial run decodes a handful instead of 10,000."""

    def __init__(self, header: dict, body: memoryview):
        self.objects: list = header["objects"]
        self._names: dict = header["names"]
        self._paths: dict = header["paths"]
        self._keys: dict = header["keys"]
        self._offsets: list = header["offsets"]
        self._body = body
        if not (self._offsets_ok() and self._lookups_ok() and self._objects_ok()):
            raise ValueError("inconsistent shared file")

    def _offsets_ok(self) -> bool:
        """The offsets are ints, ascending from 0 or more to the body's end, one per policy text."""
        offsets = self._offsets
        return (all(isinstance(m, dict) for m in (self._names, self._paths, self._keys))
                and isinstance(self.objects, list) and isinstance(offsets, list)
                and len(offsets) >= len(self._keys) + 1 and offsets[-1] == len(self._body)
                and all(type(o) is int for o in offsets)
                and not any(offsets[i] > offsets[i + 1] for i in range(len(offsets) - 1)) and offsets[0] >= 0)

    def _lookups_ok(self) -> bool:
        """Every index the lookups (by key, name, path) give is a policy text's."""
        count = len(self._offsets) - 1
        return (all(type(i) is int and 0 <= i < count for i in self._keys.values())
                and all(type(v) is list and all(type(i) is int and 0 <= i < count for i in v)
                        for m in (self._names, self._paths) for v in m.values()))

    def _objects_ok(self) -> bool:
        """Every shared object is ``[object, path, document index, line]``."""
        return all(type(e) is list and len(e) == 4 and type(e[0]) is dict and type(e[1]) is str
                   and type(e[2]) is int and type(e[3]) is int for e in self.objects)

    def named(self, kind: str, name: str) -> list:
        """The indices of the policies with a resource selector of this kind and name."""
        return self._names.get(f"{kind}/{name}", [])

    def in_file(self, path: str) -> list:
        """The indices of the policies of one user file (relative path)."""
        return self._paths.get(path, [])

    def of_claim(self, claim: str) -> list:
        """The index of the policy a :func:`claim_string` names, if it is one of these."""
        i = self._keys.get(claim)
        return [] if i is None else [i]

    def raw(self, i: int) -> memoryview:
        """The JSON text of policy ``i``'s ``[object, path, document index, line]``."""
        return self._body[self._offsets[i]:self._offsets[i + 1]]

    def entry(self, i: int) -> list:
        """Policy ``i``'s ``[object, path, document index, line]``, decoded (raises ValueError)."""
        return orjson.loads(self.raw(i))

    def replaced(self, dropped: dict, added: list) -> tuple | None:
        """The shared file as :func:`shared_file_bytes` gives it after a partial run that read some user
        files again: the policies ``dropped`` (``{index: key}``, those the files held) are no
        longer found, the ``added`` ones (``[(key, [object, path, document index, line])]``, what
        the files hold now: policies that name their templates) are appended; every other byte
        is kept (the dropped texts stay as dead bytes until a full run writes the file anew).
        None when the dead bytes would pass half the body, or a policy added does not name its
        templates: the caller writes the file anew (:func:`shared_file_bytes`)."""
        names = {t: list(indices) for t, indices in self._names.items()}
        paths = {p: list(indices) for p, indices in self._paths.items()}
        keys = dict(self._keys)
        for i, key in dropped.items():
            obj = self.entry(i)
            for target in named_targets(key, obj[0]) or ():
                names[target] = [j for j in names.get(target, ()) if j != i]
                if not names[target]:
                    del names[target]
            paths[obj[1]] = [j for j in paths.get(obj[1], ()) if j != i]
            if not paths[obj[1]]:
                del paths[obj[1]]
            keys.pop(policy_string(key), None)
        offsets = list(self._offsets)
        body = bytearray(self._body)
        for key, entry in added:
            targets = named_targets(key, entry[0])
            if targets is None:
                return None
            try:
                blob = orjson.dumps(entry)
            except TypeError:
                return None
            i = len(offsets) - 1
            body.extend(blob)
            offsets.append(len(body))
            for target in targets:
                names.setdefault(target, []).append(i)
            paths.setdefault(entry[1], []).append(i)
            keys[policy_string(key)] = i
        live = sum(offsets[i + 1] - offsets[i] for i in keys.values())
        if offsets[-1] > 2 * live + 65536:
            return None
        header = orjson.dumps({"objects": self.objects, "names": names, "paths": paths, "keys": keys,
                               "offsets": offsets})
        return header, body

    def carried(self, decoded) -> list:
        """What :func:`shared_file_bytes` carries over from this file (its ``kept``): the policies
        it holds but for the indices in ``decoded`` (a container of those a partial run read, and
        writes back from its snapshot)."""
        targets_of: dict = {}
        for target, indices in self._names.items():
            for i in indices:
                targets_of.setdefault(i, []).append(target)
        path_of = {i: path for path, indices in self._paths.items() for i in indices}
        return [(kstr, targets_of.get(i, []), path_of[i], bytes(self.raw(i)))
                for kstr, i in self._keys.items() if i not in decoded]


def read_shared(root, token: str) -> SharedFile | None:
    """The shared file, or None when it does not belong to the index (token) or is corrupt."""
    try:
        data = read_runtime_file(_shared_path(root))
        cut = data.index(b"\n")
        header = orjson.loads(data[:cut])
        if header.get("token") != token:
            return None
        return SharedFile(header, memoryview(data)[cut + 1:])
    except (OSError, ValueError, AttributeError, KeyError, TypeError, IndexError):
        return None


def write_index(root, index: RunIndex, shared: tuple | None = None, detail: bool = True) -> None:
    """Write the index atomically (and, when given, the shared file, :func:`shared_file_bytes`'s
    ``(header, body)``, under a new token; and, when ``detail``, its read detail under a new
    token: a run that changed no object list, owner or claim keeps the file it read). The index
    itself is written last: until then the one on disk is the last run's or none. A file system
    that refuses only costs later runs their speed: the index is removed then, never left stale."""
    try:
        ensure_runtime_dir(root)
        if shared is not None:
            index.token = secrets.token_hex(8)
            header, body = shared
            write_atomic(_shared_path(root), b"".join((b'{"token":"', index.token.encode(), b'",', header[1:], b"\n",
                                                       body)))
        if detail:
            index.detail = secrets.token_hex(8)
            write_atomic(_detail_path(root), orjson.dumps({
                "token": index.detail, "where": index.where, "byOwner": index.by_owner, "claims": index.claims}))
        write_atomic(index_path(root), orjson.dumps({
            "format": FORMAT, "tag": index.tag, "now": index.now, "token": index.token, "detail": index.detail,
            "files": index.files.encode(), "computed": index.computed.encode(), "wakes": index.wakes,
            "warnings": index.warnings}))
    except (OSError, TypeError):
        drop_index(root)


def drop_index(root) -> None:
    """Remove the index (the next offline run is a full one)."""
    try:
        os.unlink(index_path(root))
    except OSError:
        pass


def named_targets(key, obj: dict) -> list | None:
    """``["<kind>/<name>", ...]`` of the resource selectors of a (Cluster)PropagationPolicy whose
    every selector has a name (what it can select, as ``shards.reach_of`` matches templates: by
    kind and name), None for any other policy and any other object."""
    if not is_policy(key):
        return None
    selectors = (obj.get("spec") or {}).get("resourceSelectors") or []
    if not selectors or any(not isinstance(s, dict) or not s.get("name") for s in selectors):
        return None
    return [f"{s.get('kind')}/{s['name']}" for s in selectors]


def shared_file_bytes(entries, kept=()) -> tuple | None:
    """The shared file without its token, ``(header, body)`` (:func:`write_index` joins them):
    ``entries`` ``[(key, [object, path, document index, line])]`` of the shared objects, ``kept``
    ``[(key string, targets, path, JSON text)]`` of policies carried over undecoded from a
    :class:`SharedFile` (:meth:`SharedFile.carried`). None when an object cannot be JSON (the run
    then keeps no index). The policies' texts go into one ``bytearray`` as they are made: a sharded
    run makes this while its shards compute, and a list of 10,000 texts joined, then copied once
    more, left some 35 MB of freed but fragmented memory behind in that process."""
    objects, body, offsets, names, paths, keys = [], bytearray(), [0], {}, {}, {}

    def add(kstr: str, targets: list, path: str, blob) -> None:
        i = len(offsets) - 1
        body.extend(blob)
        offsets.append(len(body))
        for target in targets:
            names.setdefault(target, []).append(i)
        paths.setdefault(path, []).append(i)
        keys[kstr] = i

    try:
        for key, entry in entries:
            targets = named_targets(key, entry[0])
            if targets is None:
                objects.append(entry)
            else:
                add(policy_string(key), targets, entry[1], orjson.dumps(entry))
        for kstr, targets, path, blob in kept:
            add(kstr, targets, path, blob)
        header = orjson.dumps({"objects": objects, "names": names, "paths": paths, "keys": keys, "offsets": offsets})
    except TypeError:
        return None
    return header, body


def shared_objects_bytes(snap, config: DetectorConfig) -> tuple | None:
    """The shared file's body for a loaded snapshot: every non-split user object with its source
    (:func:`shared_file_bytes`)."""
    return shared_file_bytes([(k, [obj, snap.sources[k].path, snap.sources[k].index, snap.sources[k].line])
                              for k, obj in snap.user.items() if not is_split(k, obj, config) and k in snap.sources])


def computed_signatures(root, written: dict | None = None) -> Signatures:
    """The :class:`Signatures` of every file a load reads under ``computed/``
    (``state.scan_computed_dirs``), in listing order. ``written`` (``TreeWriter.written`` of the
    run that just committed, ``{rel: sig}``) gives the signature of each file it wrote, taken when
    it was written: a file listed with the same inode is not stat'ed again."""
    out = Signatures()
    known = written or {}
    for d, entries in scan_computed_dirs(root):
        names, sigs = [], array("q")
        for entry in entries:
            sig = known.get(f"{d}/{entry.name}") if known else None
            if sig is None or sig[2] != entry.inode():
                st = entry.stat()
                sig = (st.st_mtime_ns, st.st_size, st.st_ino)
            names.append(entry.name)
            sigs.extend(sig)
        out.add_dir(d, names, sigs)
    return out


def computed_owners(root, index: RunIndex) -> dict | None:
    """``{computed rel: owner}`` of the last run (``owner_of_binding`` strings, :data:`SHARED` for
    what several templates read): which template's results each computed file holds, as the index
    recorded it; None when the index's detail cannot be read (:func:`read_detail`). ``root`` is the
    state directory."""
    return index.owner_of() if read_detail(root, index) else None


def _within(d: str, dirs) -> bool:
    return any(d == x or d.startswith(x + "/") for x in dirs)


def computed_as_recorded(root, computed: Signatures, mine=None, theirs=()) -> bool:
    """Whether the files a load reads under ``computed/`` are exactly those of ``computed``, each
    with its recorded signature, compared directory by directory as they are listed, stopping at
    the first difference. ``mine`` (directories) checks only their subtrees, ``theirs`` leaves
    theirs out: what :func:`computed_check` splits."""
    start = None if mine is None else list(mine)
    expected = computed.count([COMPUTED_DIR] if mine is None else start, theirs)
    seen = 0
    try:
        for d in start or ():  # reached as the walk from computed/ reaches it: through no symlink
            parts = d.split("/")
            for i in range(2, len(parts) + 1):
                if not stat.S_ISDIR(os.lstat(os.path.join(str(root), *parts[:i])).st_mode):
                    return False
        for d, entries in scan_computed_dirs(root, start, theirs):
            changed, gone = computed.changes(d, entries)
            if changed or gone:
                return False
            seen += len(entries)
    except OSError:
        return False
    return seen == expected


def computed_check(root, computed: Signatures, user_files: int):
    """Start :func:`computed_as_recorded` and return a function that finishes it and gives its
    answer. When ``computed`` records :data:`FORK_CHECK_MIN` files or more, a forked child process
    checks most directories while this process stats the ``user_files`` user files and then, in
    the returned function, the largest directories up to an even share of the work (each process
    spends most of that time in ``stat`` calls: about 100 ms of 200 each at 10,000 templates); else
    everything is checked here. A child that fails answers False (a full run); a failed fork
    checks everything here."""
    total = computed.count()
    if total < FORK_CHECK_MIN:
        return lambda: computed_as_recorded(root, computed)
    share = (total + user_files) // 2 - user_files  # what this process takes of computed/
    sizes = {d: len(names) for d, (names, _sigs) in computed.dirs.items()}
    mine, load = [], 0
    for d in sorted(sizes, key=lambda d: -sizes[d]):
        if d != COMPUTED_DIR and load + sizes[d] <= share and not any(o.startswith(d + "/") for o in sizes):
            mine.append(d)
            load += sizes[d]
    try:
        pid = os.fork()
    except OSError:
        return lambda: computed_as_recorded(root, computed)
    if pid == 0:  # the child: only stat calls, then an exit code; no cleanup of the parent's state
        code = 2
        try:
            drop_inherited_lock()  # a parent killed meanwhile leaves no lock behind
            code = 0 if computed_as_recorded(root, computed, theirs=mine) else 1
        finally:
            os._exit(code)

    def answer() -> bool:
        try:
            here = computed_as_recorded(root, computed, mine=mine) if mine else True
        finally:
            _, status = os.waitpid(pid, 0)
        return here and os.waitstatus_to_exitcode(status) == 0

    return answer


def user_signatures(store, sigs: dict) -> Signatures:
    """``sigs`` (``{rel: signature}`` of the user files a run read) as :class:`Signatures`, each
    directory in the order it lists now (files listed but not read are left out; files read but no
    longer listed come last: the next run sees them gone)."""
    out = Signatures()
    left = dict(sigs)
    try:
        for d, entries in store.scan_user_dirs():
            names, packed = [], array("q")
            for entry in entries:
                sig = left.pop(f"{d}/{entry.name}" if d else entry.name, None)
                if sig is not None:
                    names.append(entry.name)
                    packed.extend(sig)
            out.add_dir(d, names, packed)
    except (InputError, OSError):
        pass
    for rel, sig in left.items():
        out.set(rel, sig)
    return out


def build_index(store, before, owners: dict, wakes: dict, warnings: list, now: str, tag: str,
                config: DetectorConfig, started_ns: int, split: set | None = None,
                written: dict | None = None) -> RunIndex:
    """The index after a full run that committed, with its detail: ``before`` is the loaded
    snapshot (its files' signatures in ``store.loaded_signatures``), ``owners`` ``{computed rel:
    [owner, claim]}`` of the computed snapshot, ``wakes`` from :func:`wake_map`, ``started_ns`` when
    the run started (``time.time_ns()``, see :func:`recorded_signature`); ``split``, when given,
    the keys of the split templates (:func:`is_split`), and then only ``before.sources`` is read (a
    sharded run lets go of the objects before it ends). Computed files are stat'ed now (after the
    commit), but for those in ``written`` (:func:`computed_signatures`)."""
    files = user_signatures(store, {rel: recorded_signature(sig, started_ns)
                                    for rel, sig in store.loaded_signatures.items()})
    where: dict = {}
    for key, src in before.sources.items():
        if src.path in store.loaded_signatures:
            split_ = key in split if split is not None else is_split(key, before.user[key], config)
            where[key_string(key)] = ("1" if split_ else "0") + src.path
    computed = computed_signatures(store.root, written)
    by_owner: dict = {}
    claims: dict = {}
    for rel, _sig in computed.items():
        owner, claim = owners.get(rel, NO_OWNER)
        by_owner.setdefault(owner, []).append(rel)
        if claim:
            claims[rel] = claim
    by_owner = {owner: "\n".join(rels) for owner, rels in by_owner.items()}
    return RunIndex(tag, now, files, computed, wakes, list(warnings), where=where, by_owner=by_owner, claims=claims)


def is_policy(key) -> bool:
    """Whether a key is a PropagationPolicy's or a ClusterPropagationPolicy's."""
    return tuple(key[:2]) in PROPAGATION_POLICY_KINDS


def _policy_name(pkey) -> str:
    return f"{pkey[1]} {pkey[2]}/{pkey[3]}" if pkey[2] else f"{pkey[1]} {pkey[3]}"


def policy_change_owners(old: dict, new: dict, templates: dict, index: RunIndex) -> tuple:
    """The owners whose results a change of (Cluster)PropagationPolicies can change, for a partial
    run: those of the templates the old or the new version of a changed policy can select, and those
    whose computed files carry a claim naming it (``shards.reach_of``, the matcher sharded runs use).

    Args:
        old: ``{policy key: object}``, the last run's versions of the changed policies (none for an
            added one).
        new: ``{policy key: object}``, their versions now (none for a removed one).
        templates: ``{template key: split}`` of the resource templates known to the run, last
            run's and this one's (split: :func:`is_split`; the others are Namespaces and Services):
            at least those of the kinds and names the changed policies' selectors name
            (:func:`named_targets`; ``reach_of`` matches by kind and name only).
        index: the last run's index, its detail read (the owners and claims of its results).

    Returns:
        ``(owners, "")``, or ``(None, reason)`` when a changed policy may select any template (a
        resource selector without ``name``) or reaches a template other templates read.
    """
    changed = {policy_string(k): k for k in set(old) | set(new)}
    hits = [(rel, changed[claim]) for rel, claim in index.claims.items() if claim in changed]
    owner_of = index.owners_of([rel for rel, _pkey in hits])
    claims = [(owner_of[rel], pkey) for rel, pkey in hits]  # the owner string stands for the claiming binding
    owners: set = set()
    for version in (old, new):
        for pkey, reached in sorted(reach_of(version, templates, claims).items()):
            if reached is None:
                return None, f"{_policy_name(pkey)} changed and selects without a name"
            for target in reached:
                if isinstance(target, str):
                    if target == SHARED:
                        return None, f"{_policy_name(pkey)} changed and claims a Namespace or Service"
                    owners.add(target)
                elif templates.get(target):
                    owners.add(owner_of_binding(template_binding_key(target)))
                else:
                    return None, f"{_policy_name(pkey)} changed and selects a {target[1]}, which other templates read"
    return owners, ""


@dataclass
class Plan:
    """What a run has to do (:func:`plan`). ``mode``: ``unchanged``, ``partial`` or ``full``;
    ``reason`` says why a run is full; ``touched`` the user files (relative paths) whose templates are
    recomputed (changed, added, or holding a template whose wake time has come), ``removed`` the
    files gone since, ``due`` the owners whose wake time has come."""

    mode: str
    reason: str = ""
    touched: list = field(default_factory=list)
    removed: list = field(default_factory=list)
    due: set = field(default_factory=set)


def _user_changes(store, files: Signatures) -> tuple:
    """``(touched, removed)``: the user files (relative paths) that are new or whose signature
    differs from ``files`` (the index's), and those of ``files`` that are gone; or ``(reason, [])``
    when a file cannot be listed or stat'ed (a full run)."""
    touched, removed, listed = [], [], set()
    try:
        for d, entries in store.scan_user_dirs():
            listed.add(d)
            try:
                changed, gone = files.changes(d, entries)
            except OSError as exc:
                return f"{d or '.'}: cannot read file: {exc}", []
            touched += [f"{d}/{name}" if d else name for name in changed]
            removed += [f"{d}/{name}" if d else name for name in gone]
    except InputError as exc:
        return str(exc), []
    for d, (names, _sigs) in files.dirs.items():
        if d not in listed:
            removed += [f"{d}/{name}" if d else name for name in names]
    return touched, removed


def plan(store, index: RunIndex | None, now: str) -> Plan:
    """Compare the state directory with ``index`` (module docs). Reads no file's contents; stats
    every input and computed file."""
    if index is None:
        return Plan("full", "no valid index of the last run")
    if pending_journal(store.root):
        return Plan("full", "a killed run left a journal")
    if parse_time(now) < parse_time(index.now):
        return Plan("full", "the clock is earlier than the last run's")
    whole = index.wakes.get(SHARED)
    try:
        whole_due = whole is not None and parse_time(now) >= parse_time(whole)
    except ValueError:
        return Plan("full", "the run index is damaged (a wake time)")
    if whole_due:
        return Plan("full", f"a time-based rule of the whole state is due ({whole})")
    files = index.files
    answer = computed_check(store.root, index.computed, files.count())
    try:
        touched, removed = _user_changes(store, files)
    finally:
        computed_ok = answer()  # (the child is reaped whatever happens here)
    if isinstance(touched, str):
        return Plan("full", touched)
    if not computed_ok:
        return Plan("full", "computed/ changed since the last run")
    try:
        due = {o for o, when in index.wakes.items() if o != SHARED and parse_time(now) >= parse_time(when)}
    except ValueError:
        return Plan("full", "the run index is damaged (a wake time)")
    if not touched and not removed and not due:
        return Plan("unchanged")
    return with_due(store, index, Plan("partial", touched=sorted(touched), removed=sorted(removed)), due)


def with_due(store, index: RunIndex, plan_: Plan, owners) -> Plan:
    """``plan_`` (``partial`` or ``unchanged``) with ``owners`` due as well: their results are
    recomputed, the files holding their templates read again (the wake times of :func:`plan`, or
    the bindings whose member copies changed, ``karmactl/incremental/engine.py: plan_online``);
    a ``full`` plan when the index's detail is missing."""
    owners = set(owners)
    if not owners:
        return plan_
    if not read_detail(store.root, index):
        return Plan("full", "the index's detail is missing")
    touched = list(plan_.touched)
    holders = {owner_of_binding(template_binding_key(key)): rel for key, rel in index.split_templates()}
    for owner in sorted(owners):
        rel = holders.get(owner)
        if rel is not None and rel not in touched and index.files.get(rel) is not None and rel not in plan_.removed:
            touched.append(rel)
    return Plan("partial", touched=sorted(touched), removed=list(plan_.removed), due=set(plan_.due) | owners)


__all__ = ["RunIndex", "Plan", "Owners", "Signatures", "SharedFile", "plan", "read_index", "read_detail",
           "read_shared", "write_index", "drop_index", "build_index", "user_signatures", "computed_signatures",
           "computed_as_recorded", "computed_check", "computed_owners", "wake_map", "code_stamp",
           "shared_objects_bytes", "shared_file_bytes", "with_due", "named_targets", "key_string", "string_key", "is_split",
           "owner_of_binding", "binding_key_of_owner", "policy_string", "claim_string", "is_policy",
           "policy_change_owners"]
