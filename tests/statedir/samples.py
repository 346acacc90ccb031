"""Objects the state-directory tests share: the nginx Deployment with its PropagationPolicy (as in
``tests/core``), and a PropagationPolicy with two errors."""
from __future__ import annotations

from tests.core.test_bad_input import GOOD_PP as POLICY
from tests.core.test_offline_run import NGINX as DEPLOYMENT

NGINX = DEPLOYMENT + "---" + POLICY

BAD_POLICY = """
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata:
  name: bad
spec:
  placement:
    clusterAffinity: {clusterNames: [member1]}
    clusterAffinities: [{affinityName: a, clusterNames: [member1]}]
"""
