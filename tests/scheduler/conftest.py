"""Fixtures for the scheduler tests (builders live in ``helpers.py``)."""
from __future__ import annotations

import pytest

from .helpers import make_cluster


@pytest.fixture
def three_clusters():
    return [make_cluster("member1"), make_cluster("member2"), make_cluster("member3")]
