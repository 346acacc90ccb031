"""``strict_errors`` (``kubectl apply --validate=strict``) says the same whether its one-walk check
settles an object or ``jsonschema`` words the errors (``karmactl/api/openapi.py``)."""
from __future__ import annotations

import copy
import random

import pytest

from karmactl.api import openapi

BASES = [
    {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "labels": {"a": "b"}},
     "spec": {"replicas": 2, "selector": {"matchLabels": {"a": "b"}},
              "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 1}},
              "template": {"metadata": {"labels": {"a": "b"}},
                           "spec": {"containers": [{"name": "c", "image": "i", "ports": [{"containerPort": 80}],
                                                    "resources": {"requests": {"cpu": "100m", "memory": 1}}}]}}}},
    {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"},
     "spec": {"type": "ClusterIP", "ports": [{"port": 80, "targetPort": "http", "protocol": "TCP"}], "selector": {"a": "b"}}},
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"k": "v"}},
    {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
     "spec": {"completions": 3, "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "i"}]}}}},
]
VALUES = [None, "x", "", 1, 0, 1.5, 2.0, True, [], {}, ["a"], {"a": 1}, "100m", {"bogus": 1}, [{"name": "a"}]]


def _paths(obj, path=()):
    yield path
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _paths(v, path + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _paths(v, path + (i,))


def _mutated(rng: random.Random) -> dict:
    obj = copy.deepcopy(rng.choice(BASES))
    for _ in range(rng.randint(0, 3)):
        path = rng.choice([p for p in _paths(obj) if p and p[0] not in ("apiVersion", "kind")])
        parent = obj
        for part in path[:-1]:
            parent = parent[part]
        roll = rng.random()
        if roll < 0.6:
            parent[path[-1]] = copy.deepcopy(rng.choice(VALUES))
        elif isinstance(parent, dict) and roll < 0.85:
            parent[rng.choice(["bogus", "type", "name"])] = copy.deepcopy(rng.choice(VALUES))
        elif isinstance(parent, dict):
            del parent[path[-1]]
    return obj


@pytest.mark.parametrize("seed", range(4))
def test_the_walk_and_jsonschema_agree(seed, monkeypatch):
    rng = random.Random(seed)
    settled = 0
    for _ in range(150):
        obj = _mutated(rng)
        if openapi._scan(obj, openapi._compiled(openapi.definitions()[openapi.definition_name(
                *obj["apiVersion"].rpartition("/")[::2], obj["kind"])]), "", [], True):
            settled += 1
        fast = openapi.strict_errors(copy.deepcopy(obj))
        with monkeypatch.context() as m:
            m.setattr(openapi, "_scan", lambda *a: False)  # always ask jsonschema
            slow = openapi.strict_errors(copy.deepcopy(obj))
        assert fast == slow, obj
    assert settled > 20  # the walk really decided many of them


def test_a_valid_object_with_unknown_fields_names_them_in_walk_order():
    obj = copy.deepcopy(BASES[0])
    obj["spec"]["replica"] = 3
    obj["spec"]["template"]["spec"]["containers"][0]["imagePullPolice"] = "Always"
    assert openapi.strict_errors(obj) == [
        ("spec.replica", 'unknown field "spec.replica"'),
        ("spec.template.spec.containers[0].imagePullPolice",
         'unknown field "spec.template.spec.containers[0].imagePullPolice"')]
