"""kubectl's remaining habits: merged ``KUBECONFIG`` lists for ``join --context``, ``get rb -o wide`` with
CLUSTERS, "did you mean" for a mistyped kind or apiVersion, ``label k-`` saying "not labeled"."""
from __future__ import annotations

import yaml

from conftest import cluster_yaml, write
from karmactl.emulator import MemberServer


def test_join_reads_the_file_of_a_merged_kubeconfig_list_that_defines_the_context(cli, state, tmp_path, monkeypatch):
    monkeypatch.setenv("KARMACTL_KUBECONFIG_DIR", str(tmp_path))
    with MemberServer(name="member3", nodes=1) as srv:
        other = srv.write_kubeconfig(str(tmp_path / "kc" / "other.yaml"), context="elsewhere")
        mine = srv.write_kubeconfig(str(tmp_path / "kc" / "member3.yaml"), context="member3")
        monkeypatch.setenv("KUBECONFIG", f"{other}:{tmp_path / 'kc' / 'absent.yaml'}:{mine}")
        assert cli.ok("join", "member3", "--context", "member3") == "cluster(member3) is joined successfully\n"
        cluster = yaml.safe_load(cli.ok("get", "cluster", "member3", "-o", "yaml"))
        assert cluster["metadata"]["annotations"]["karmactl.io/kubeconfig"] == mine
        assert cluster["metadata"]["annotations"]["karmactl.io/context"] == "member3"
        # a context whose user another file of the list defines: one file per Cluster, said how to make one
        cfg = yaml.safe_load(open(other))
        cfg["contexts"].append({"name": "split", "context": {"cluster": "member3", "user": "nobody"}})
        write(tmp_path / "kc" / "other.yaml", yaml.safe_dump(cfg))
        code, _out, err = cli("join", "member4", "--context", "split")
        assert code == 2 and 'context "split" names user "nobody", which this file does not define' in err
        assert "kubectl config view --flatten --minify --context split" in err
