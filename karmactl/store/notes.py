"""Notes about what a load of the state directory left out (files ignored, documents that are not
objects): where they go, and silencing them for a block."""
from __future__ import annotations

from contextlib import contextmanager

# where notes about what a load left out go: ``f(text)``, or None to drop them (the CLI sets it
# with -v; a plain callable instead of ``logging``, which costs start-up time on every command)
note_sink = None


def note(text: str) -> None:
    """Hand ``text`` to :data:`note_sink`, or drop it when none is set."""
    if note_sink is not None:
        note_sink(text)


@contextmanager
def notes_silenced():
    """Drop the notes of what a load leaves out while the block runs (a second load in one run:
    its notes were given by the first)."""
    global note_sink
    sink, note_sink = note_sink, None
    try:
        yield
    finally:
        note_sink = sink
