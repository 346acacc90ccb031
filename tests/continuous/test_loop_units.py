"""The pure parts of the continuous loop: when a Cluster's Ready flip is due, and the trigger text."""
from __future__ import annotations

from karmactl.controllers.cluster_status import threshold_due
from karmactl.continuous import summarize


def overlay(ready: str, seen: str, since: str) -> dict:
    return {"status": {"conditions": [{"type": "Ready", "status": ready}]},
            "observed": {"readyThreshold": {"lastObservedStatus": seen, "since": since}}}


def test_a_ready_flip_is_due_after_its_threshold():
    # failing since 10:00:05, still written Ready: flips 30 s later
    assert threshold_due(overlay("True", "False", "2026-01-01T10:00:05Z"), 20, 30) == "2026-01-01T10:00:35Z"
    # answering again since 10:01:00, written NotReady: flips after the success threshold
    assert threshold_due(overlay("False", "True", "2026-01-01T10:01:00Z"), 20, 30) == "2026-01-01T10:01:20Z"
    # False <-> Unknown: at once
    assert threshold_due(overlay("False", "Unknown", "2026-01-01T10:01:00Z"), 20, 30) == "2026-01-01T10:01:00Z"
    # nothing pending
    assert threshold_due(overlay("True", "True", "2026-01-01T10:00:00Z"), 20, 30) is None
    assert threshold_due(None, 20, 30) is None
    assert threshold_due({"status": {}}, 20, 30) is None


def test_trigger_text_names_the_edited_file_not_the_editors_temporaries():
    assert summarize(["files: apps", "files: apps/.nginx.yaml.swp", "files: apps/nginx.yaml"]) == \
        "files: apps/nginx.yaml (+2)"
    assert summarize(["cluster status: member2"]) == "cluster status: member2"
    assert summarize(["wake", "files: a.yaml"]) == "wake, files: a.yaml"
    assert summarize(["member: member1 Deployment default/a", "member: member2 Deployment default/a"]) == \
        "member: member1 Deployment default/a (+1)"
