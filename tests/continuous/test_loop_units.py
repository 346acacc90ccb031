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


def _work(cluster: str, binding: str, kind: str = "Deployment", name: str = "nginx") -> tuple:
    key = ("work.karmada.io", "Work", f"karmada-es-{cluster}", f"{name}-x")
    work = {"metadata": {"annotations": {"resourcebinding.karmada.io/name": binding,
                                         "resourcebinding.karmada.io/namespace": "default"}},
            "spec": {"workload": {"manifests": [{"apiVersion": "apps/v1", "kind": kind,
                                                 "metadata": {"namespace": "default", "name": name}}]}}}
    return key, work


def test_a_member_event_names_the_binding_of_its_object_and_a_relist_asks_for_a_full_pass():
    from karmactl.continuous import ControlLoop, LoopOptions

    loop = ControlLoop(None, None, lambda: "", LoopOptions(), locked=None, on_pass=None)
    loop._full = ""
    loop.targets.update(dict([_work("member1", "nginx-deployment"), _work("member2", "nginx-deployment")]), whole=True)
    loop.targets.update(dict([_work("member1", "web-deployment", name="web")]), whole=False)
    assert loop._full_reason(["member: member2 Deployment default/nginx", "member: member1 Deployment default/web",
                              "files: apps/a.yaml", "wake"]) == ("", {"default/nginx-deployment", "default/web-deployment"})
    # an object no Work targets (a Work deleted meanwhile) asks for nothing
    assert loop._full_reason(["member: member1 Deployment default/gone"]) == ("", set())
    # a watch that listed again may have missed events; a Cluster's status reaches any binding
    assert loop._full_reason(["member: member1 Deployment re-listed"])[0] == "the watch of member1 Deployment listed again"
    assert loop._full_reason(["cluster status: member2"])[0] == "cluster status: member2"
    # a settle pass observes again the bindings not converged
    loop.unsettled = {"default/web-deployment"}
    assert loop._full_reason(["settle"]) == ("", {"default/web-deployment"})
    # a partial pass's Works replace those of its bindings only
    loop.targets.update({}, whole=False)
    loop.targets.update(dict([_work("member2", "nginx-deployment")]), whole=False)
    assert loop.targets.owner("member1 Deployment default/nginx") is None
    assert loop.targets.owner("member1 Deployment default/web") == "default/web-deployment"
    loop.targets.update({}, whole=False, owners={"default/web-deployment"})  # its Works are gone
    assert loop.targets.owner("member1 Deployment default/web") is None


def test_a_hung_pass_process_is_killed_at_its_deadline_and_a_finished_ones_result_is_read():
    import os
    import time

    import pytest

    from karmactl.continuous import PassFailed, _read_result

    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # a pass process that never finishes (as one stuck on a lock inherited at fork)
        os.close(read)
        time.sleep(600)
        os._exit(0)
    os.close(write)
    started = time.monotonic()
    with pytest.raises(PassFailed, match="did not finish in time"):
        _read_result(read, pid, time.monotonic() + 0.5)
    assert time.monotonic() - started < 30  # killed, not waited for
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # reaped
    os.close(read)

    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # a finished pass whose own child keeps the pipe's write end open
        os.close(read)
        grandchild = os.fork()
        if grandchild == 0:
            for fd in range(3):  # only the pipe held: nothing else waits for this process
                os.close(fd)
            time.sleep(120)
            os._exit(0)
        os.write(write, str(grandchild).encode())
        os._exit(0)
    os.close(write)
    import threading

    got = []
    reader = threading.Thread(target=lambda: got.append(_read_result(read, pid, None)), daemon=True)
    reader.start()
    reader.join(60)  # a hang guard: the result is read once the pass process has exited
    assert got, "the result was not read while a grandchild held the pipe open"
    os.kill(int(got[0]), 9)
    os.close(read)
