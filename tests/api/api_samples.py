"""Valid sample objects of every Karmada kind (Karmada's own samples where it has them)."""
import copy

PP = {  # samples/nginx/propagationpolicy.yaml
    "apiVersion": "policy.karmada.io/v1alpha1",
    "kind": "PropagationPolicy",
    "metadata": {"name": "nginx-propagation"},
    "spec": {
        "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "nginx"}],
        "placement": {
            "clusterAffinity": {"clusterNames": ["member1", "member2"]},
            "replicaScheduling": {
                "replicaDivisionPreference": "Weighted",
                "replicaSchedulingType": "Divided",
                "weightPreference": {"staticWeightList": [
                    {"targetCluster": {"clusterNames": ["member1"]}, "weight": 1},
                    {"targetCluster": {"clusterNames": ["member2"]}, "weight": 1},
                ]},
            },
        },
    },
}

CPP = {
    "apiVersion": "policy.karmada.io/v1alpha1",
    "kind": "ClusterPropagationPolicy",
    "metadata": {"name": "crd-propagation"},
    "spec": {
        "resourceSelectors": [{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                               "name": "guestbooks.webapp.my.domain"}],
        "placement": {"clusterAffinity": {"clusterNames": ["member1"]}},
    },
}

OP = {  # samples/nginx/overridepolicy.yaml style, imageOverrider
    "apiVersion": "policy.karmada.io/v1alpha1",
    "kind": "OverridePolicy",
    "metadata": {"name": "example", "namespace": "default"},
    "spec": {
        "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "nginx"}],
        "overrideRules": [{
            "targetCluster": {"clusterNames": ["member1"]},
            "overriders": {"imageOverrider": [
                {"component": "Registry", "operator": "replace", "value": "registry.k8s.io"},
            ]},
        }],
    },
}

COP = {
    "apiVersion": "policy.karmada.io/v1alpha1",
    "kind": "ClusterOverridePolicy",
    "metadata": {"name": "label-all"},
    "spec": {
        "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment"}],
        "overrideRules": [{"overriders": {"labelsOverrider": [{"operator": "add", "value": {"env": "prod"}}]}}],
    },
}

CLUSTER = {
    "apiVersion": "cluster.karmada.io/v1alpha1",
    "kind": "Cluster",
    "metadata": {"name": "member1", "labels": {"env": "prod"}},
    "spec": {
        "syncMode": "Push",
        "apiEndpoint": "https://172.18.0.3:6443",
        "secretRef": {"namespace": "karmada-cluster", "name": "member1"},
        "provider": "aws",
        "region": "us-east-1",
        "zones": ["us-east-1a"],
        "taints": [{"key": "cluster.karmada.io/not-ready", "effect": "NoSchedule"}],
    },
}

RB = {
    "apiVersion": "work.karmada.io/v1alpha2",
    "kind": "ResourceBinding",
    "metadata": {"name": "nginx-deployment", "namespace": "default"},
    "spec": {
        "resource": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "nginx", "namespace": "default"},
        "replicas": 2,
        "clusters": [{"name": "member1", "replicas": 1}, {"name": "member2", "replicas": 1}],
        "gracefulEvictionTasks": [{"fromCluster": "member3", "reason": "TaintUntolerated",
                                   "producer": "TaintManager", "purgeMode": "Gracefully"}],
    },
}

CRB = {
    "apiVersion": "work.karmada.io/v1alpha2",
    "kind": "ClusterResourceBinding",
    "metadata": {"name": "guestbooks-crd"},
    "spec": {"resource": {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                          "name": "guestbooks.webapp.my.domain"}},
}

WORK = {
    "apiVersion": "work.karmada.io/v1alpha1",
    "kind": "Work",
    "metadata": {"name": "nginx-687f7fb96f", "namespace": "karmada-es-member1"},
    "spec": {
        "workload": {"manifests": [{"apiVersion": "apps/v1", "kind": "Deployment",
                                    "metadata": {"name": "nginx"}, "spec": {"anything": {"goes": True}}}]},
        "suspendDispatching": False,
        "preserveResourcesOnDeletion": False,
    },
}

REMEDY = {  # docs/proposals/remedy-cluster-status-based-policy.md
    "apiVersion": "remedy.karmada.io/v1alpha1",
    "kind": "Remedy",
    "metadata": {"name": "foo"},
    "spec": {
        "clusterAffinity": {"clusterNames": ["member1"]},
        "decisionMatches": [{"clusterConditionMatch": {"conditionType": "ServiceDomainNameResolutionReady",
                                                       "operator": "Equal", "conditionStatus": "False"}}],
        "actions": ["TrafficControl"],
    },
}

MCI = {  # samples/multiclusteringress
    "apiVersion": "networking.karmada.io/v1alpha1",
    "kind": "MultiClusterIngress",
    "metadata": {"name": "demo-localhost", "namespace": "default"},
    "spec": {
        "ingressClassName": "nginx",
        "rules": [{"host": "demo.localdev.me", "http": {"paths": [{
            "path": "/web", "pathType": "Prefix",
            "backend": {"service": {"name": "web", "port": {"number": 8081}}},
        }]}}],
    },
}

CTP = {
    "apiVersion": "policy.karmada.io/v1alpha1",
    "kind": "ClusterTaintPolicy",
    "metadata": {"name": "detect-not-ready"},
    "spec": {
        "targetClusters": {"clusterNames": ["member1"]},
        "addOnConditions": [{"conditionType": "Ready", "operator": "NotIn", "statusValues": ["True"]}],
        "removeOnConditions": [{"conditionType": "Ready", "operator": "In", "statusValues": ["True"]}],
        "taints": [{"key": "not-ready", "effect": "NoExecute"}, {"key": "not-ready", "effect": "NoSchedule"}],
    },
}

DEPLOYMENT = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "nginx", "labels": {"app": "nginx"}},
    "spec": {"replicas": 2, "whatever": 1},
}

ALL = {
    "PropagationPolicy": PP, "ClusterPropagationPolicy": CPP, "OverridePolicy": OP,
    "ClusterOverridePolicy": COP, "Cluster": CLUSTER, "ResourceBinding": RB, "ClusterResourceBinding": CRB,
    "Work": WORK, "Remedy": REMEDY, "MultiClusterIngress": MCI, "ClusterTaintPolicy": CTP,
    "Deployment": DEPLOYMENT,
}


def sample(kind: str) -> dict:
    return copy.deepcopy(ALL[kind])
