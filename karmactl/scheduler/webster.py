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
    heap = [_Party(n, v, s, descending) for n, (v, s) in merged.items()]
    heapq.heapify(heap)
    for _ in range(max(0, int(seats))):
        party = heap[0]
        party.seats += 1
        heapq.heapreplace(heap, party)
    return {p.name: p.seats for p in sorted(heap, key=lambda p: p.name)}
