"""Reading YAML builds what PyYAML's safe constructor builds (YAML 1.1 scalars, types and all),
whichever of karmactl's two paths (``karmactl/store/yamlio.py``) a file takes."""
from __future__ import annotations

import random

import pytest
import yaml

from karmactl.store import yamlio
from karmactl.store.state import InputError, StateStore

SCALARS = ["on", "off", "yes", "No", "~", "null", "", "''", '""', "0", "012", "0o12", "09", "0x1F", "0b101",
           "+12", "-0", "1_000", "1:30", "-1:30:00", "1e3", "1.5e+3", "1.", "-.5", "2026-01-01",
           "2026-01-01T00:00:00Z", "9223372036854775807", "!!str 12", "!!float 1", "!!bool yes", "true",
           "TRUE", "y", "123abc", "1_2.3_4", "'quoted'", '"dq\\n"', "a b", "&anchor x"]


def _typed(x):
    if isinstance(x, dict):
        return ("map", [(_typed(k), _typed(v)) for k, v in x.items()])
    if isinstance(x, list):
        return ("seq", [_typed(v) for v in x])
    return (type(x).__name__, x)


def _document(rng: random.Random, depth: int = 0) -> str:
    lines = []
    for i in range(rng.randint(1, 4)):
        key = f"k{i}"
        if depth < 3 and rng.random() < 0.3:
            lines.append(f"{key}:")
            lines += ["  " + ln for ln in _document(rng, depth + 1).splitlines()]
        elif rng.random() < 0.2:
            lines.append(f"{key}: [{', '.join(rng.choice(SCALARS[:36]) for _ in range(3))}]")
        else:
            lines.append(f"{key}: {rng.choice(SCALARS)}")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("seed", range(3))
def test_state_files_read_as_pyyaml_builds_them(tmp_path, seed):
    rng = random.Random(seed)
    store = StateStore(tmp_path)
    for n in range(60):
        text = (f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c{n}\n"
                + "".join(f"data{i}:\n" + "".join("  " + ln + "\n" for ln in _document(rng).splitlines())
                          for i in range(2)))
        if n % 3 == 0:
            text += "---\n" + text
        path = tmp_path / f"c{n}.yaml"
        path.write_text(text)
        try:
            expected = [d for d in yaml.load_all(text, Loader=yamlio._Loader) if d is not None]
        except yaml.YAMLError:  # the generator wrote invalid YAML: refused, with the file named
            with pytest.raises(InputError, match="invalid YAML"):
                store.read_documents(path)
            continue
        try:
            got = [obj for obj, _index, _line in store.read_documents(path)]
        except InputError as exc:  # numbers out of range, non-string keys: refused as before
            assert "integer" in str(exc) or "not a string" in str(exc) or "not a number" in str(exc), str(exc)
            continue
        assert _typed(got) == _typed(expected), text


def test_what_the_plain_path_cannot_build_is_refused_as_before(tmp_path):
    store = StateStore(tmp_path)
    cases = {
        "dup.yaml": ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {x: '1', x: '2'}\n", 'duplicate key "x"'),
        "key.yaml": ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {on: '1'}\n", "is not a string"),
        "big.yaml": ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\nx: 9223372036854775808\n", "64-bit"),
        "inf.yaml": ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\nx: .inf\n", "not a number"),
        "bin.yaml": ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\nx: !!binary aGk=\n", "binary"),
    }
    for name, (text, phrase) in cases.items():
        (tmp_path / name).write_text(text)
        with pytest.raises(InputError) as info:
            store.read_documents(tmp_path / name)
        assert phrase in str(info.value), (name, str(info.value))
    (tmp_path / "merge.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"
                                         "base: &b {x: '1'}\ndata: {<<: *b, y: '2'}\n")
    assert store.read_documents(tmp_path / "merge.yaml")[0][0]["data"] == {"x": "1", "y": "2"}
