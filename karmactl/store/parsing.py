"""Parsing many user files: in this process, or, from :data:`PARALLEL_PARSE_MIN_FILES` files on, in
forked worker processes that also check the objects of built-in kinds (:func:`parse_many`)."""
from __future__ import annotations

import os
from pathlib import Path

import orjson

from karmactl.api.kinds import group_of
from karmactl.store.objects import InputError
from karmactl.store.parse_cache import file_signature

PARSE_WORKERS = 2
PARSE_BATCHES_PER_WORKER = 4  # results stream back while the workers go on
PARALLEL_PARSE_MIN_FILES = 2000


_WORKER_JOB = None  # (StateStore, normalize, layout) for forked parse workers


def _start_methods() -> list[str]:
    import multiprocessing

    return multiprocessing.get_all_start_methods()


def parse_many(store, paths: list[str], normalize=None, layout=None) -> list[tuple[list, list]]:
    """``([(signature, documents, skipped) or None], errors)``: for each path (a string, as
    :meth:`~karmactl.store.state.StateStore.user_file_names` gives) in order, None when
    it failed (its :class:`InputError` is in ``errors``, in path order), else the signature
    ``[mtime_ns, size, inode]`` read before the file, the documents ``[[object, index, line,
    checked]]`` and ``skipped``, the notes about documents that are not objects.

    Large batches are parsed by two worker processes (YAML parsing is CPU-bound Python and
    these machines have two cores), each taking every other file so both get the same mix;
    the workers also check and ``normalize`` every object of a built-in kind (``checked``
    True). Objects of other kinds (custom resources, whose CustomResourceDefinition may be in
    any file) and CRDs themselves are left to the caller. Each batch sends its objects group by
    group (``layout``, see :meth:`~karmactl.store.state.StateStore.load`), and they are built in
    that order, equal strings shared (:func:`share_strings`).

    ``store`` is the :class:`~karmactl.store.state.StateStore` loading: its ``read_documents``,
    ``check_document``, ``rel`` and ``registry`` are what the workers use.
    """
    workers = min(PARSE_WORKERS, os.cpu_count() or 1)
    if len(paths) < PARALLEL_PARSE_MIN_FILES or workers < 2 or "fork" not in _start_methods():
        out, errors = [], []
        for p in paths:
            try:
                sig, skipped = file_signature(p), []
                docs = [[o, i, ln, False] for o, i, ln in store.read_documents(Path(p), skipped=skipped)]
                out.append((sig, docs, skipped))
            except InputError as exc:
                errors.append(exc)
                out.append(None)
        return out, errors
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    global _WORKER_JOB
    nb = workers * PARSE_BATCHES_PER_WORKER
    _WORKER_JOB = (store, normalize, layout)  # inherited by the forked workers, never pickled
    from karmactl.store.fsio import die_with_parent, kill_pool

    out: list = [None] * len(paths)
    errors = []
    canon: dict = {}  # share_strings
    try:
        pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("fork"),
                                   initializer=die_with_parent)
        try:
            # each batch is decoded as it arrives, while the workers parse the next ones
            for i, batch in enumerate(pool.map(_parse_batch, [paths[i::nb] for i in range(nb)])):
                if isinstance(batch, bytes):
                    batch = orjson.loads(batch)
                docs = batch["docs"]
                for objs, places in zip(batch["groups"], batch["places"]):
                    share_strings(objs, canon)
                    for obj, (j, d) in zip(objs, places):
                        docs[j][1][d][0] = obj
                for j, item in enumerate(docs):
                    out[i + j * nb] = item
                errors.extend((i + j * nb, fields) for j, fields in batch["errors"])  # InputError.fields()
        except BaseException:
            kill_pool(pool)
            raise
        pool.shutdown()
    finally:
        _WORKER_JOB = None
    return out, [InputError(*fields) for _position, fields in sorted(errors, key=lambda e: e[0])]


def _parse_batch(paths: list[str]) -> list:
    """Worker: parse files and check objects of built-in kinds. Returns ``{"docs": [per file:
    (signature, [[object, index, line, checked]], skipped) or None for a failing file], "errors": [[index in
    docs, InputError.fields()]]}``, as orjson bytes when JSON can hold it; the objects themselves
    are sent first, in ``"groups"`` (a list of objects per group of the layout function, one group
    without it) and ``"places"`` (``[file, document]`` of each), and None stands in for them in
    ``docs``."""
    store, normalize, layout = _WORKER_JOB
    crd = ("apiextensions.k8s.io", "CustomResourceDefinition")
    out: list = []
    errors = []
    for p in paths:
        path = Path(p)
        rel = store.rel(path)
        try:
            sig, skipped = file_signature(path), []
            docs = []
            for obj, index, line in store.read_documents(path, rel, skipped):
                api_version, kind = obj.get("apiVersion"), obj.get("kind")
                known = (isinstance(api_version, str) and isinstance(kind, str)
                         and (group_of(api_version), kind) != crd and store.registry.for_object(api_version, kind))
                if known:
                    docs.append([store.check_document(obj, index, line, rel, normalize), index, line, True])
                else:
                    docs.append([obj, index, line, False])
            out.append((sig, docs, skipped))
        except InputError as exc:
            errors.append([len(out), exc.fields()])
            out.append(None)
    # the objects group by group (one group without a layout), first: the parent builds them in this order
    groups: dict = {}
    for j, item in enumerate(out):
        for d, doc in enumerate(item[1] if item is not None else ()):
            objs, places = groups.setdefault(layout(doc[0]) if layout is not None else 0, ([], []))
            objs.append(doc[0])
            places.append((j, d))
            doc[0] = None
    order = sorted(groups)
    result = {"groups": [groups[g][0] for g in order], "places": [groups[g][1] for g in order],
              "docs": out, "errors": errors}
    try:
        # JSON crosses the process boundary several times faster than a pickle of the same dicts;
        # values JSON cannot hold (binary, sets, huge integers) fall back to pickling
        return orjson.dumps(result)
    except TypeError:
        return result


def share_strings(objs: list, canon: dict) -> None:
    """Make equal string values of ``objs`` (parsed objects, changed in place) one object each,
    through ``canon`` (``{string: string}``, kept across calls): JSON decoding builds a new string
    for every value, and 10,000 Deployments with their PropagationPolicies repeat ``default``,
    ``apps/v1``, ``Deployment``, defaulted fields... some 290,000 times, 15 MB that a forked shard
    process would otherwise copy too. Mapping keys are shared by the decoder already."""
    get = canon.setdefault
    stack = [o for o in objs if type(o) is dict or type(o) is list]
    while stack:
        o = stack.pop()
        for k, v in (o.items() if type(o) is dict else enumerate(o)):  # a value replaced in place
            if type(v) is str:
                c = get(v, v)
                if c is not v:
                    o[k] = c
            elif type(v) is dict or type(v) is list:
                stack.append(v)
