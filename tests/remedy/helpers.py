"""Helpers shared by the remedy tests: a CoreDNS installation on an emulated member."""
from __future__ import annotations


def install_dns(api, endpoints=True):
    """Create CoreDNS as kubeadm does (Deployment coredns, Service and Endpoints kube-dns) through the API."""
    from kubernetes import client as k8s

    labels = {"k8s-app": "kube-dns"}
    k8s.AppsV1Api(api).create_namespaced_deployment("kube-system", {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "coredns", "labels": labels},
        "spec": {"replicas": 2, "selector": {"matchLabels": labels},
                 "template": {"metadata": {"labels": labels},
                              "spec": {"containers": [{"name": "coredns", "image": "coredns/coredns:1.11.1"}]}}}})
    k8s.CoreV1Api(api).create_namespaced_service("kube-system", {
        "apiVersion": "v1", "kind": "Service", "metadata": {"name": "kube-dns", "labels": labels},
        "spec": {"selector": labels, "ports": [{"name": "dns", "port": 53, "protocol": "UDP"}]}})
    if endpoints:
        k8s.CoreV1Api(api).create_namespaced_endpoints("kube-system", {
            "apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "kube-dns", "labels": labels},
            "subsets": [{"addresses": [{"ip": "10.244.0.2"}], "ports": [{"name": "dns", "port": 53, "protocol": "UDP"}]}]})


def set_dns_ready(member, ready: bool):
    status = {"replicas": 2, "readyReplicas": 2, "availableReplicas": 2} if ready else \
        {"replicas": 2, "readyReplicas": 0, "availableReplicas": 0, "unavailableReplicas": 2}
    member.set_status("apps/v1", "Deployment", "kube-system", "coredns", status)
