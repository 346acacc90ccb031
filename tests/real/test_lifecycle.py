"""What happens to member copies over time: drift, suspension, conflicts with existing objects,
deletion, all seen through the real kubectl."""
from __future__ import annotations

import json

import yaml

from .conftest import MANIFESTS, converge, get_json, replicas, sample


def _nginx(cli, ns, tmp_path, **pp_spec) -> dict:
    """Apply the nginx sample (1:2 static weights) into ``ns``; ``pp_spec`` is merged into the
    PropagationPolicy's spec. Returns the sample's input directory's files by kind."""
    src = sample(MANIFESTS / "nginx", ns, tmp_path / "in")
    pp_file = src / "propagationpolicy.yaml"
    pp = yaml.safe_load(pp_file.read_text())
    pp["spec"].update(pp_spec)
    pp_file.write_text(yaml.safe_dump(pp, sort_keys=False))
    cli.ok("apply", "-f", str(src))
    return {"dir": src, "deployment": src / "deployment.yaml", "policy": pp_file}


def _set_image(cli, deployment_file, image: str) -> None:
    dep = yaml.safe_load(deployment_file.read_text())
    dep["spec"]["template"]["spec"]["containers"][0]["image"] = image
    deployment_file.write_text(yaml.safe_dump(dep, sort_keys=False))
    cli.ok("apply", "-f", str(deployment_file))


def _image(member, ns) -> str:
    return get_json(member, "deploy", "nginx", "-n", ns)["spec"]["template"]["spec"]["containers"][0]["image"]


def test_kubectl_scale_on_a_member_is_reverted_by_the_next_reconcile(cli, joined, ns, tmp_path):
    _nginx(cli, ns, tmp_path)
    converge(cli)
    m2 = joined["member2"]
    m2.kubectl("scale", "deploy", "nginx", "-n", ns, "--replicas=5")
    assert replicas(m2, ns, "nginx") == 5
    converge(cli)
    assert replicas(m2, ns, "nginx") == 2


def test_fields_a_member_user_adds_are_removed_by_the_next_reconcile(cli, joined, ns, tmp_path):
    _nginx(cli, ns, tmp_path)
    converge(cli)
    m1 = joined["member1"]
    m1.kubectl("patch", "deploy", "nginx", "-n", ns, "--type=strategic", "-p", json.dumps(
        {"spec": {"minReadySeconds": 7, "template": {"spec": {"containers": [
            {"name": "nginx", "env": [{"name": "EXTRA", "value": "1"}]}]}}}}))
    converge(cli)
    spec = get_json(m1, "deploy", "nginx", "-n", ns)["spec"]
    assert spec.get("minReadySeconds", 0) == 0
    assert "env" not in spec["template"]["spec"]["containers"][0]


def test_retained_replicas_survive_reconcile(cli, joined, ns, tmp_path):
    """Karmada's retain rule for Deployments (``resourcetemplate.karmada.io/retain-replicas``, set on
    a template an HPA scales): the member's replicas are kept, not reverted."""
    files = _nginx(cli, ns, tmp_path)
    dep = yaml.safe_load(files["deployment"].read_text())
    dep["metadata"]["labels"]["resourcetemplate.karmada.io/retain-replicas"] = "true"
    files["deployment"].write_text(yaml.safe_dump(dep, sort_keys=False))
    cli.ok("apply", "-f", str(files["deployment"]))
    converge(cli)
    m1 = joined["member1"]
    m1.kubectl("scale", "deploy", "nginx", "-n", ns, "--replicas=4")
    _set_image(cli, files["deployment"], "nginx:1.25")  # a template change still ships
    converge(cli)
    assert replicas(m1, ns, "nginx") == 4
    assert _image(m1, ns) == "nginx:1.25"


def test_suspended_policy_ships_nothing_until_resumed(cli, joined, ns, tmp_path):
    files = _nginx(cli, ns, tmp_path)
    converge(cli)
    cli.ok("suspend", "pp", "nginx-propagation", "-n", ns)
    _set_image(cli, files["deployment"], "nginx:1.25")
    converge(cli)
    assert [_image(m, ns) for m in joined.values()] == ["nginx", "nginx"]

    cli.ok("resume", "pp", "nginx-propagation", "-n", ns)
    converge(cli)
    assert [_image(m, ns) for m in joined.values()] == ["nginx:1.25", "nginx:1.25"]


def test_delete_removes_the_member_copies(cli, joined, ns, tmp_path):
    _nginx(cli, ns, tmp_path)
    converge(cli)
    assert [replicas(m, ns, "nginx") for m in joined.values()] == [1, 2]
    cli.ok("delete", "deploy", "nginx", "-n", ns)
    converge(cli)
    assert [replicas(m, ns, "nginx") for m in joined.values()] == [None, None]


def _preexisting(member, ns, container: str = "nginx") -> None:
    """A Deployment ``nginx`` created on ``member`` by someone else (kubectl), before karmactl."""
    member.kubectl("create", "namespace", ns)
    member.kubectl("create", "-f", "-", input=json.dumps({
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "nginx", "namespace": ns},
        "spec": {"replicas": 5, "selector": {"matchLabels": {"app": "nginx"}},
                 "template": {"metadata": {"labels": {"app": "nginx"}},
                              "spec": {"containers": [{"name": container, "image": "busybox"}]}}}}))


def test_conflict_resolution_abort_leaves_a_preexisting_object_alone(cli, joined, ns, tmp_path):
    m1, m2 = joined["member1"], joined["member2"]
    _preexisting(m1, ns)
    _nginx(cli, ns, tmp_path)  # conflictResolution defaults to Abort
    # Exit code: 0 today although a Work failed to apply (README: 3 = "apply errors"); see the report.
    converge(cli, allowed_codes=(0, 3))

    copy = get_json(m1, "deploy", "nginx", "-n", ns)
    assert (copy["spec"]["replicas"], _image(m1, ns)) == (5, "busybox")
    assert "karmada.io/managed" not in copy["metadata"].get("labels", {})
    assert replicas(m2, ns, "nginx") == 2
    works = json.loads(cli.ok("get", "work", "-n", "karmada-es-member1", "-o", "json"))["items"]
    applied = {c["type"]: c for c in works[0]["status"]["conditions"]}["Applied"]
    assert (applied["status"], applied["reason"]) == ("False", "AppliedFailed")
    assert f"resource(kind=Deployment, {ns}/nginx) already exists in the cluster member1" in applied["message"]


def test_conflict_resolution_overwrite_adopts_a_preexisting_object(cli, joined, ns, tmp_path):
    m1 = joined["member1"]
    _preexisting(m1, ns)
    _nginx(cli, ns, tmp_path, conflictResolution="Overwrite")
    converge(cli)

    copy = get_json(m1, "deploy", "nginx", "-n", ns)
    assert (copy["spec"]["replicas"], _image(m1, ns)) == (1, "nginx")
    assert copy["metadata"]["labels"]["karmada.io/managed"] == "true"


def test_overwrite_drops_what_the_preexisting_object_had_beyond_the_template(cli, joined, ns, tmp_path):
    """Karmada's execution controller updates an adopted object to the Work's manifest, so a
    container the template does not have is gone; server-side apply alone keeps it (its owner is
    another field manager)."""
    m1 = joined["member1"]
    _preexisting(m1, ns, container="busybox")
    _nginx(cli, ns, tmp_path, conflictResolution="Overwrite")
    converge(cli)
    containers = get_json(m1, "deploy", "nginx", "-n", ns)["spec"]["template"]["spec"]["containers"]
    assert [(c["name"], c["image"]) for c in containers] == [("nginx", "nginx")]
