"""A Lua ResourceInterpreterCustomization online: the guestbook on two emulated members, its
replicas divided by the Lua replica rule, health and status read from the members through the Lua
rules, and a member-owned field kept by the Lua retention rule (checked with the real kubectl)."""
from __future__ import annotations

import shutil
from pathlib import Path

import yaml

from tests.conftest import write

from .conftest import MANIFESTS, reconcile_until

DATA = Path(__file__).resolve().parents[1] / "interpreter" / "data"

CRD_POLICY = """
apiVersion: policy.karmada.io/v1alpha1
kind: ClusterPropagationPolicy
metadata:
  name: guestbook-crd
spec:
  resourceSelectors:
  - apiVersion: apiextensions.k8s.io/v1
    kind: CustomResourceDefinition
    name: guestbooks.webapp.my.domain
  placement:
    clusterAffinity:
      clusterNames: [member1, member2]
"""

RETENTION = """\
function Retain(desiredObj, observedObj)
  if observedObj.spec.alias ~= nil then
    desiredObj.spec.alias = observedObj.spec.alias
  end
  return desiredObj
end
"""


def _guestbook(member) -> dict | None:
    return member.get_object("webapp.my.domain/v1", "Guestbook", "default", "guestbook-sample")


def test_guestbook_customization_online(state, tmp_path, cli, members, member_layer, kubectl):
    m1, m2 = members.start("member1"), members.start("member2")
    doc = yaml.safe_load((DATA / "webapp.my.domain" / "v1" / "Guestbook" / "customizations.yaml").read_text())
    doc["spec"]["customizations"]["retention"] = {"luaScript": RETENTION}
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "customization.yaml").write_text(yaml.safe_dump(doc))
    for name in ("guestbooks-crd.yaml", "guestbook.yaml"):
        shutil.copy(MANIFESTS / "guestbook" / name, tmp_path / "in" / name)
    write(tmp_path / "in" / "crd-policy.yaml", CRD_POLICY)
    shutil.copy(DATA / "guestbook-policy.yaml", tmp_path / "in" / "policy.yaml")
    cli.ok("apply", "-f", str(tmp_path / "in"))

    reconcile_until(cli, lambda: _guestbook(m1) is not None and _guestbook(m2) is not None, timeout=30)
    assert (_guestbook(m1)["spec"]["size"], _guestbook(m2)["spec"]["size"]) == (1, 1)

    # the members report: member1 has an active pod, member2 none -> Lua health Healthy / Unhealthy
    m1.set_status("webapp.my.domain/v1", "Guestbook", "default", "guestbook-sample",
                  {"active": "gb-0", "standby": ["gb-1"]})
    m2.set_status("webapp.my.domain/v1", "Guestbook", "default", "guestbook-sample", {"standby": ["gb-2"]})
    # a member-owned field: the Lua retention rule keeps it when karmactl updates the member copy
    kc1 = members.kubeconfig("member1")
    kubectl(kc1, "patch", "guestbooks", "guestbook-sample", "-n", "default", "--type", "merge",
            "-p", '{"spec": {"alias": "Phone"}}')

    def settled():
        rb = yaml.safe_load(cli.ok("get", "rb", "guestbook-sample-guestbook", "-o", "yaml"))
        health = {i["clusterName"]: i.get("health") for i in (rb.get("status") or {}).get("aggregatedStatus") or []}
        return health == {"member1": "Healthy", "member2": "Unhealthy"}

    reconcile_until(cli, settled, timeout=30)
    gb = yaml.safe_load(cli.ok("get", "guestbook", "guestbook-sample", "-o", "yaml"))
    assert gb["status"] == {"active": "member1/gb-0", "standby": ["member1/gb-1", "member2/gb-2"]}
    member_copy = yaml.safe_load(kubectl(kc1, "get", "guestbooks", "guestbook-sample", "-n", "default", "-o", "yaml"))
    assert member_copy["spec"]["alias"] == "Phone" and member_copy["spec"]["size"] == 1
    code, _out, err = cli("reconcile")
    assert code == 0 and "warning" not in err, err
