#!/bin/sh
# karmactl in a CI pipeline (docs/gitops.md).
#
#   karmactl-ci.sh plan    merge requests: print what merging would change (unified diffs);
#                          fails only when the state directory is invalid (exit 2) or karmactl fails
#   karmactl-ci.sh apply   the main branch: reconcile until the members have settled, then commit
#                          the computed status (state/computed/) back to the branch and push it
#
# Environment: KARMACTL_STATE (default: state), KARMACTL_TIMEOUT (default: 5m), KARMACTL (the
# command, default: karmactl), GIT_PUSH_REMOTE (default: origin; empty: do not push).
set -eu

state="${KARMACTL_STATE:-state}"
karmactl="${KARMACTL:-karmactl}"

case "${1:-}" in
plan)
    set +e
    $karmactl --state "$state" plan
    code=$?
    set -e
    # plan: 0 = no differences, 1 = differences (both fine for a merge request), 2+ = error
    if [ "$code" -gt 1 ]; then exit "$code"; fi
    ;;
apply)
    $karmactl --state "$state" reconcile --wait --timeout "${KARMACTL_TIMEOUT:-5m}"
    git add -A -- "$state/computed"
    if git diff --cached --quiet; then
        echo "karmactl-ci: status unchanged, nothing to commit"
        exit 0
    fi
    # [skip ci]: the status commit must not start the pipeline again
    git -c user.name="${GIT_AUTHOR_NAME:-karmactl-ci}" -c user.email="${GIT_AUTHOR_EMAIL:-karmactl-ci@localhost}" \
        commit -q -m "karmactl: status after reconcile [skip ci]"
    remote="${GIT_PUSH_REMOTE-origin}"
    if [ -n "$remote" ]; then git push -q "$remote" "HEAD:$(git rev-parse --abbrev-ref HEAD)"; fi
    echo "karmactl-ci: committed $(git rev-parse --short HEAD)"
    ;;
*)
    echo "usage: $0 plan|apply" >&2
    exit 2
    ;;
esac
