"""propagateDeps online: a Deployment's six dependencies reach the emulated members it is scheduled
to, leave a member it is no longer scheduled to, and go with it (checked with the real kubectl)."""
from __future__ import annotations

import base64

from tests.conftest import write

from .conftest import kubectl, reconcile

DEPENDENCIES = {"configmap/app-config", "configmap/env-config", "secret/db-secret", "secret/regcred",
                "serviceaccount/app-sa", "persistentvolumeclaim/app-data"}


def app(state, clusters: str) -> None:
    pull = base64.b64encode(b'{"auths": {}}').decode()
    write(state / "app.yaml", f"""
        apiVersion: apps/v1
        kind: Deployment
        metadata: {{name: app, namespace: default}}
        spec:
          replicas: 2
          selector: {{matchLabels: {{app: app}}}}
          template:
            metadata: {{labels: {{app: app}}}}
            spec:
              serviceAccountName: app-sa
              imagePullSecrets: [{{name: regcred}}]
              containers:
              - name: app
                image: nginx:1.25
                envFrom: [{{configMapRef: {{name: env-config}}}}]
                env: [{{name: PW, valueFrom: {{secretKeyRef: {{name: db-secret, key: pw}}}}}}]
              volumes:
              - {{name: conf, configMap: {{name: app-config}}}}
              - {{name: data, persistentVolumeClaim: {{claimName: app-data}}}}
        """)
    write(state / "policy.yaml", f"""
        apiVersion: policy.karmada.io/v1alpha1
        kind: PropagationPolicy
        metadata: {{name: app, namespace: default}}
        spec:
          propagateDeps: true
          resourceSelectors: [{{apiVersion: apps/v1, kind: Deployment, name: app}}]
          placement:
            clusterAffinity: {{clusterNames: [{clusters}]}}
            replicaScheduling: {{replicaSchedulingType: Duplicated}}
        """)
    write(state / "deps.yaml", f"""
        apiVersion: v1
        kind: ConfigMap
        metadata: {{name: app-config, namespace: default}}
        data: {{app.conf: "level=info"}}
        ---
        apiVersion: v1
        kind: ConfigMap
        metadata: {{name: env-config, namespace: default}}
        data: {{LEVEL: debug}}
        ---
        apiVersion: v1
        kind: Secret
        metadata: {{name: db-secret, namespace: default}}
        data: {{pw: {base64.b64encode(b"s3cret").decode()}}}
        ---
        apiVersion: v1
        kind: Secret
        metadata: {{name: regcred, namespace: default}}
        type: kubernetes.io/dockerconfigjson
        data: {{.dockerconfigjson: {pull}}}
        ---
        apiVersion: v1
        kind: ServiceAccount
        metadata: {{name: app-sa, namespace: default}}
        ---
        apiVersion: v1
        kind: PersistentVolumeClaim
        metadata: {{name: app-data, namespace: default}}
        spec: {{accessModes: [ReadWriteOnce], resources: {{requests: {{storage: 1Gi}}}}}}
        """)


def on_member(members, tmp_path, name: str) -> set:
    """The dependency kinds/names on a member, as the real kubectl lists them."""
    out = kubectl(members.kubeconfig(name), tmp_path / "kubectl-cache", "get",
                  "configmaps,secrets,serviceaccounts,persistentvolumeclaims", "-n", "default", "-o", "name")
    return {line.strip() for line in out.splitlines() if line.strip()} & DEPENDENCIES


def test_dependencies_follow_the_deployment_across_members(cli, state, members, tmp_path):
    app(state, "member1, member2")
    reconcile(cli, 0)
    assert on_member(members, tmp_path, "member1") == DEPENDENCIES
    assert on_member(members, tmp_path, "member2") == DEPENDENCIES
    assert on_member(members, tmp_path, "member3") == set()
    got = kubectl(members.kubeconfig("member2"), tmp_path / "kubectl-cache", "get", "secret", "db-secret",
                  "-n", "default", "-o", "jsonpath={.data.pw}")
    assert base64.b64decode(got) == b"s3cret"

    # member2 is dropped from the placement: the dependencies leave it with the Deployment
    app(state, "member1, member3")
    reconcile(cli, 10)
    assert members.deploy("member2", "app") is None
    assert on_member(members, tmp_path, "member2") == set()
    assert on_member(members, tmp_path, "member3") == DEPENDENCIES
    assert on_member(members, tmp_path, "member1") == DEPENDENCIES

    # the Deployment is deleted: its attached bindings and every member copy go
    cli.ok("delete", "deploy", "app", "-n", "default")
    reconcile(cli, 20)
    assert cli("get", "rb", "app-config-configmap", "-n", "default")[0] == 1
    for name in ("member1", "member2", "member3"):
        assert on_member(members, tmp_path, name) == set()
