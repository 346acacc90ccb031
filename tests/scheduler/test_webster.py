"""Webster / Sainte-Laguë apportionment (pkg/util/helper/webstermethod.go)."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from karmactl.scheduler.webster import allocate_webster_seats, fnv1a_32, names_descending


def _odd_uid() -> str:
    return next(f"uid-{i}" for i in range(100) if fnv1a_32(f"uid-{i}") & 1)


def _even_uid() -> str:
    return next(f"uid-{i}" for i in range(100) if not fnv1a_32(f"uid-{i}") & 1)


@pytest.mark.parametrize("seats, weights, expected, uid", [
    pytest.param(3, {"member1": 1, "member2": 2}, {"member1": 1, "member2": 2}, "", id="3 seats 1:2"),
    pytest.param(9, {"A": 1, "B": 2}, {"A": 3, "B": 6}, "", id="9 seats 1:2"),
    pytest.param(9, {"A": 1, "B": 3}, {"A": 2, "B": 7}, "", id="9 seats 1:3"),
    pytest.param(4, {"a": 1, "b": 1, "c": 1}, {"a": 2, "b": 1, "c": 1}, "", id="4 seats equal, empty uid favours smaller name"),
    pytest.param(4, {"a": 1, "b": 1, "c": 1}, {"a": 1, "b": 1, "c": 2}, "odd", id="4 seats equal, odd-hash uid favours larger name"),
    pytest.param(4, {"a": 1, "b": 1, "c": 1}, {"a": 2, "b": 1, "c": 1}, "even", id="4 seats equal, even-hash uid favours smaller name"),
    pytest.param(5, {"a": 1, "b": 1, "c": 1}, {"a": 2, "b": 2, "c": 1}, "", id="5 seats equal"),
    pytest.param(12, {"A": 6, "B": 12, "C": 18}, {"A": 2, "B": 4, "C": 6}, "", id="12 seats 6:12:18"),
    pytest.param(10, {"A": 8, "B": 6}, {"A": 6, "B": 4}, "", id="10 seats 8:6"),
    pytest.param(0, {"A": 8, "B": 6}, {"A": 0, "B": 0}, "", id="zero seats"),
    pytest.param(3, {"A": 0, "B": 5}, {"A": 0, "B": 3}, "", id="zero-vote party gets nothing"),
    pytest.param(2, {"A": 0, "B": 0}, {"A": 1, "B": 1}, "", id="all zero votes share by seats then name"),
])
def test_worked_examples(seats, weights, expected, uid):
    uid = {"odd": _odd_uid(), "even": _even_uid()}.get(uid, uid)
    assert allocate_webster_seats(seats, [(n, w, 0) for n, w in weights.items()], uid) == expected


def test_fnv1a_known_values():
    # reference values of the 32-bit FNV-1a hash
    assert fnv1a_32("") == 0x811C9DC5
    assert fnv1a_32("a") == 0xE40C292C
    assert fnv1a_32("foobar") == 0xBF9CF968


def test_tie_break_direction():
    assert not names_descending("")
    assert names_descending(_odd_uid())
    assert not names_descending(_even_uid())


def test_current_seats_are_kept_and_counted():
    # A holds 3 seats (quotient 6/7), B none (2/1): B gets one, then B drops to 2/3 and A wins
    assert allocate_webster_seats(2, [("A", 6, 3), ("B", 2, 0)]) == {"A": 4, "B": 1}


def test_empty_parties():
    assert allocate_webster_seats(5, []) == {}


weights_st = st.dictionaries(st.sampled_from(list("abcdefgh")), st.integers(1, 50), min_size=1, max_size=8)


@settings(max_examples=60, deadline=None)
@given(weights=weights_st, seats=st.integers(0, 200), uid=st.text(max_size=8))
def test_sum_is_seats(weights, seats, uid):
    out = allocate_webster_seats(seats, [(n, w, 0) for n, w in weights.items()], uid)
    assert sum(out.values()) == seats
    assert list(out) == sorted(weights)


@settings(max_examples=60, deadline=None)
@given(weights=weights_st, seats=st.integers(0, 200), uid=st.text(max_size=8))
def test_house_monotone(weights, seats, uid):
    """Webster is house-monotone: one more seat never takes a seat from anybody."""
    parties = [(n, w, 0) for n, w in weights.items()]
    before = allocate_webster_seats(seats, parties, uid)
    after = allocate_webster_seats(seats + 1, parties, uid)
    assert all(after[n] >= before[n] for n in before)


@settings(max_examples=300, deadline=None)
@given(parties=st.lists(st.tuples(st.integers(0, 40), st.integers(0, 30)), min_size=1, max_size=6),
       seats=st.integers(0, 400), uid=st.sampled_from(["", "odd", "even"]))
def test_bulk_hand_out_equals_one_seat_at_a_time(monkeypatch_module, parties, seats, uid):
    """Large seat counts are handed out in bulk; the result is the one-by-one loop's, ties included."""
    import karmactl.scheduler.webster as webster

    tie = {"": "", "odd": _odd_uid(), "even": _even_uid()}[uid]
    named = [(f"m{i}", votes, current) for i, (votes, current) in enumerate(parties)]
    fast = allocate_webster_seats(seats, named, tie)
    monkeypatch_module.setattr(webster, "_BULK_MIN_SEATS_PER_PARTY", 10 ** 9)
    try:
        slow = allocate_webster_seats(seats, named, tie)
    finally:
        monkeypatch_module.undo()
    assert fast == slow


@pytest.fixture(scope="module")
def monkeypatch_module():
    mp = pytest.MonkeyPatch()
    yield mp
    mp.undo()


def test_int32_replicas_are_divided_without_one_step_per_replica():
    """Karmada's largest replica count (int32) over weighted clusters: proportional, exact sum."""
    out = allocate_webster_seats(2 ** 31 - 1, [("a", 1, 0), ("b", 2, 0), ("c", 4, 0)])
    assert sum(out.values()) == 2 ** 31 - 1
    assert out == {"a": 306783378, "b": 613566756, "c": 1227133513}  # 1:2:4 rounded as Sainte-Laguë rounds
    zero = allocate_webster_seats(2 ** 31 - 1, [("a", 0, 5), ("b", 0, 0)])
    assert zero == {"a": 1073741826, "b": 1073741826}
