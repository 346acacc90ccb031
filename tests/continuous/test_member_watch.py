"""Watches of member copies (``karmactl/members/watching.py``) against an emulated member: events of
managed objects fire, others do not, and an expired resourceVersion (410 Gone) makes the watch list
again and say so."""
from __future__ import annotations

import threading
import time

import pytest



@pytest.fixture
def member(state):
    from karmactl.emulator import MemberServer

    srv = MemberServer(name="member1", port=0, fake_controller=False).start()
    srv.write_kubeconfig(str(state / ".karmactl" / "kubeconfigs" / "member1"), context="member1")
    yield srv
    srv.close()


def _cluster(srv) -> dict:
    return {"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster",
            "metadata": {"name": "member1", "annotations": {"karmactl.io/kubeconfig": ".karmactl/kubeconfigs/member1",
                                                            "karmactl.io/context": "member1"}},
            "spec": {"syncMode": "Push", "apiEndpoint": srv.url}}


def _cm(name: str, managed: bool) -> dict:
    labels = {"karmada.io/managed": "true"} if managed else {}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default", "labels": labels},
            "data": {"a": "1"}}


class Fired:
    def __init__(self):
        self.reasons: list = []
        self.cond = threading.Condition()

    def __call__(self, reason: str) -> None:
        with self.cond:
            self.reasons.append(reason)
            self.cond.notify_all()

    def wait_for(self, text: str, limit: float = 20.0, since: int = 0) -> None:
        deadline = time.monotonic() + limit
        with self.cond:
            while not any(text in r for r in self.reasons[since:]):
                left = deadline - time.monotonic()
                assert left > 0, f"{text!r} not fired: {self.reasons}"
                self.cond.wait(left)


def test_a_watch_fires_for_managed_objects_and_relists_after_410(state, member):
    from karmactl.members.layer import MemberLayer
    from karmactl.members.watching import MemberWatches

    layer = MemberLayer(state)
    client = layer.watch_client(_cluster(member), 2)
    fired = Fired()
    watches = MemberWatches(fired)
    path = client.resource_for("v1", "ConfigMap").path()
    try:
        watches.update({("member1", "v1", "ConfigMap"): (client, path)})
        time.sleep(0.5)  # the watch has listed and is streaming
        cms = member._type("v1", "ConfigMap")
        member.store.create(cms, "default", _cm("unmanaged", managed=False))
        member.store.create(cms, "default", _cm("app-config", managed=True))
        fired.wait_for("member: member1 ConfigMap default/app-config")
        assert not any("unmanaged" in r for r in fired.reasons)

        # the version the watch holds expires: it lists again and fires, since events may be lost
        watch = watches.watches[("member1", "v1", "ConfigMap")]
        member.store._history_floor = 10 ** 9
        member._generation += 1  # the server ends open watches (as kube-apiserver does on timeout)
        fired.wait_for("member: member1 ConfigMap re-listed")
        member.store._history_floor = 0
        # streaming again from the new list (after a backoff while every version was expired): a
        # new object shows as its own event, not only as one more re-list
        deadline = time.monotonic() + 30
        n = 0
        while not any("default/after-relist-" in r for r in fired.reasons):
            assert time.monotonic() < deadline, fired.reasons
            n += 1
            member.store.create(cms, "default", _cm(f"after-relist-{n}", managed=True))
            time.sleep(1.0)
        assert watch.is_alive()
    finally:
        watches.stop()
        client.close()


class _EmptyStreams:
    """A member that lists fine and ends every watch at once with nothing (or 410 for every version)."""

    def __init__(self, gone: bool):
        self.gone, self.lists, self.streams = gone, 0, 0

    def request(self, method, path, query=None):
        self.lists += 1
        return 200, {"metadata": {"resourceVersion": str(self.lists)}}

    def watch_lines(self, path, query, read_timeout, stop=None):
        self.streams += 1
        if self.gone:
            yield b'{"type": "ERROR", "object": {"code": 410, "message": "too old"}}'


@pytest.mark.parametrize("gone", [False, True])
def test_a_member_that_ends_every_watch_at_once_gets_no_busy_loop(gone):
    from karmactl.members.watching import ResourceWatch

    client, fired = _EmptyStreams(gone), Fired()
    watch = ResourceWatch("member1", "ConfigMap", client, "/api/v1/configmaps", fired)
    watch.start()
    time.sleep(2.5)
    watch.stop()
    watch.join(35)
    # with a backoff of 1 s, then 2 s: a handful of requests in 2.5 s, not thousands
    assert client.streams <= 4, client.streams
    assert len(fired.reasons) <= 3, fired.reasons
