"""join / unjoin against real members: TLS with the member's own CA and a bearer token."""
from __future__ import annotations

import base64

import yaml

from .conftest import MANIFESTS, converge, replicas, sample


def test_join_reports_ready_and_keeps_credentials_out_of_the_state_dir(cli, joined, state):
    converge(cli)
    out = cli.ok("get", "clusters", "-o", "wide")
    rows = {line.split()[0]: line.split() for line in out.splitlines()[1:]}
    for name, member in joined.items():
        assert rows[name][1:4] == ["v1.20.2", "Push", "True"], out
        assert member.server in rows[name], out

    secrets = []
    for member in joined.values():
        kubeconfig = yaml.safe_load(member.kubeconfig.read_text())
        secrets.append(kubeconfig["users"][0]["user"]["token"])
        ca = kubeconfig["clusters"][0]["cluster"]["certificate-authority-data"]
        secrets += [ca, base64.b64decode(ca).decode()]
        secrets += [(member.dir / "pki" / f).read_text() for f in ("ca.key", "apiserver.key")]
    files = [p for p in state.rglob("*") if p.is_file()]
    assert any(p.parent.name == "computed" or "computed" in p.parts for p in files)  # the walk sees the run's files
    leaked = [(str(p.relative_to(state)), s[:12]) for p in files for s in secrets if s.strip() in p.read_text(errors="replace")]
    assert leaked == []
    assert "BEGIN" not in "".join(p.read_text(errors="replace") for p in files)


def test_unjoin_deletes_the_member_copies_and_only_them(cli, joined, ns, tmp_path, state):
    cli.ok("apply", "-f", str(sample(MANIFESTS / "nginx", ns, tmp_path / "in")))
    converge(cli)
    m1, m2 = joined["member1"], joined["member2"]
    assert (replicas(m1, ns, "nginx"), replicas(m2, ns, "nginx")) == (1, 2)
    # Something on member2 karmactl never propagated stays untouched.
    m2.kubectl("create", "configmap", "outsider", "-n", ns, "--from-literal=k=v")

    cli.ok("unjoin", "member2")

    assert replicas(m2, ns, "nginx") is None
    assert m2.kubectl("get", "configmap", "outsider", "-n", ns, "-o", "name").stdout.strip() == "configmap/outsider"
    # member1 keeps its copy and, member2 gone from the schedulable clusters, holds all 3 replicas.
    assert replicas(m1, ns, "nginx") == 3
    assert not (state / "clusters" / "member2.yaml").exists()
    assert not list((state / "computed" / "works").glob("karmada-es-member2/*"))
