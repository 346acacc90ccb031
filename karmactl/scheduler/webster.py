"""Webster / Sainte-Laguë apportionment, the one replica divider Karmada uses everywhere.

Follows ``pkg/util/helper/webstermethod.go`` (``AllocateWebsterSeats``) and the UID-based tie-break of
``pkg/util/helper/binding.go`` (``tieBreakerByUID``).
"""
from __future__ import annotations

import heapq

_FNV32_OFFSET = 0x811C9DC5
_FNV32_PRIME = 0x01000193


def fnv1a_32(text: str) -> int:
    """The 32-bit FNV-1a hash of ``text`` (UTF-8), as Go's ``hash/fnv.New32a``."""
    h = _FNV32_OFFSET
    for byte in text.encode("utf-8"):
        h ^= byte
        h = (h * _FNV32_PRIME) & 0xFFFFFFFF
    return h


def names_descending(tie_uid: str) -> bool:
    """Whether equal-priority, equal-seat ties go to the lexicographically *larger* name.

    Upstream hashes the template UID so that, across many workloads, ties do not always favour
    the same cluster; an empty UID (or an even hash) favours the smaller name.
    """
    return bool(tie_uid) and (fnv1a_32(tie_uid) & 1) == 1


class _Party:
    """A heap entry; ``__lt__`` means "gets the next seat first" (upstream ``WebsterPriorityQueue.Less``)."""

    __slots__ = ("name", "votes", "seats", "descending")

    def __init__(self, name: str, votes: int, seats: int, descending: bool):
        self.name, self.votes, self.seats, self.descending = name, votes, seats, descending

    def __lt__(self, other: "_Party") -> bool:
        # Priority is votes / (2*seats + 1). Upstream compares float64 quotients; we compare the exact
        # rationals by cross-multiplication, which only differs from Go for weights beyond 2**53.
        mine = self.votes * (2 * other.seats + 1)
        theirs = other.votes * (2 * self.seats + 1)
        if mine != theirs:
            return mine > theirs
        # Ties: fewer seats first (helps HA: small clusters get their first replica early), then name.
        if self.seats != other.seats:
            return self.seats < other.seats
        return self.name > other.name if self.descending else self.name < other.name


def allocate_webster_seats(seats: int, parties: list[tuple[str, int, int]], tie_uid: str = "") -> dict[str, int]:
    """Distribute ``seats`` new seats over ``parties`` with the Webster method.

    Args:
        seats: number of new seats (replicas) to hand out; <= 0 hands out none.
        parties: ``(name, votes, current_seats)`` triples; votes are weights (>= 0), current seats
            the replicas a party already holds (0 for a fresh allocation). A name listed twice is
            merged: votes from the last entry, seats summed (upstream builds a map).
        tie_uid: the tie-break UID (the binding's ``spec.resource.uid``); see :func:`names_descending`.

    Returns:
        ``{name: total seats}`` for every party (current + new), names in ascending order. Parties with
        zero votes only gain seats when every other party's quotient is also zero. When ``parties`` is
        empty the result is empty (the seats are lost, as upstream).
    """
    merged: dict[str, list[int]] = {}
    for name, votes, current in parties:
        entry = merged.setdefault(name, [0, 0])
        entry[0] = int(votes)
        entry[1] += int(current)
    if not merged:
        return {}
    descending = names_descending(tie_uid)
    seats = max(0, int(seats))
    if seats > _BULK_MIN_SEATS_PER_PARTY * len(merged):
        seats = _bulk(seats, merged)
    heap = [_Party(n, v, s, descending) for n, (v, s) in merged.items()]
    heapq.heapify(heap)
    for _ in range(seats):
        party = heap[0]
        party.seats += 1
        heapq.heapreplace(heap, party)
    return {p.name: p.seats for p in sorted(heap, key=lambda p: p.name)}


_BULK_MIN_SEATS_PER_PARTY = 8  # below this, one heap step per seat is as fast


def _bulk(seats: int, merged: dict[str, list[int]]) -> int:
    """Hand out, in place in ``merged`` (``{name: [votes, seats]}``), all but fewer than
    ``len(merged)`` of ``seats`` at once; return the seats left for the one-by-one loop.

    The one-by-one Webster loop hands out, in its heap order, the ``seats`` best of the quotients
    ``votes / (2s + 1)`` (s from each party's current seats up): a party's own quotients only get
    worse as s grows. So every quotient strictly above a threshold ``V / a`` (V the total votes) is
    among them as long as there are at most ``seats`` such quotients, and a party has
    ``ceil((a*votes - V) / (2V))`` quotients above it counting from s = 0. The largest integer
    ``a`` keeping the count within ``seats`` is found by bisection (each step of ``a`` adds at
    most one seat per party); the quotients left, ties included, go through the heap exactly as
    before. With no votes at all the heap gives seats round-robin by fewest seats, which is a
    level fill here. This keeps a Deployment of 2**31 - 1 replicas (Karmada's int32 maximum) from
    costing one heap step per replica.
    """
    total_votes = sum(v for v, _ in merged.values())

    if total_votes > 0:
        def above(a: int) -> list[int]:
            return [max(0, -((total_votes - a * v) // (2 * total_votes)) - s) if v > 0 else 0
                    for v, s in merged.values()]
    else:
        def above(a: int) -> list[int]:
            return [max(0, a - s) for _, s in merged.values()]

    lo, hi = 0, 1
    while sum(above(hi)) <= seats:
        lo, hi = hi, hi * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if sum(above(mid)) <= seats:
            lo = mid
        else:
            hi = mid
    extra = above(lo)
    for entry, more in zip(merged.values(), extra):
        entry[1] += more
    return seats - sum(extra)
