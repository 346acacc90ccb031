#!/bin/sh
# karmactl in a CI pipeline (docs/gitops.md).
#
#   karmactl-ci.sh plan    merge requests: print what merging would change (a summary table, then the
#                          diffs), offline: the job needs no member credentials; fails only when the
#                          state directory is invalid (exit 2) or karmactl fails. With
#                          KARMACTL_PLAN_MARKDOWN=FILE it also writes the plan as a Markdown comment
#                          to FILE; in GitHub Actions (GITHUB_ACTIONS=true) invalid input becomes
#                          ::error annotations, in GitLab CI (GITLAB_CI=true) a Code Quality report
#                          (KARMACTL_CODEQUALITY, default gl-code-quality-report.json)
#   karmactl-ci.sh apply   the main branch, on push and on a schedule (the heartbeat): reconcile until
#                          the members have settled, then commit the computed status (state/computed/)
#                          back to the branch and push it — also when a member is down (exit 3) or the
#                          run timed out (exit 4): the observations (a member's first failure time)
#                          are the clocks the next job continues from a fresh clone
#
# apply refuses to act when its commit is no longer the tip of the branch (a newer push came in
# meanwhile): the newer pipeline applies the newer state; members never get an older one.
#
# Environment: KARMACTL_STATE (default: state), KARMACTL_TIMEOUT (default: 5m), KARMACTL (the
# command, default: karmactl), GIT_PUSH_REMOTE (default: origin; empty: do not fetch or push).
set -eu

state="${KARMACTL_STATE:-state}"
karmactl="${KARMACTL:-karmactl}"
remote="${GIT_PUSH_REMOTE-origin}"

case "${1:-}" in
plan)
    # invalid input as annotations on the merge request's lines: GitHub's ::error commands, or
    # GitLab's Code Quality report (artifacts:reports:codequality)
    annotations=""
    if [ "${GITHUB_ACTIONS:-}" = true ]; then
        annotations="--annotations github"
    elif [ "${GITLAB_CI:-}" = true ]; then
        annotations="--annotations gitlab --annotations-file ${KARMACTL_CODEQUALITY:-gl-code-quality-report.json}"
    fi
    set +e
    # shellcheck disable=SC2086 # $annotations is words
    $karmactl --state "$state" plan $annotations
    code=$?
    if [ -n "${KARMACTL_PLAN_MARKDOWN:-}" ]; then
        # the merge-request comment (also when the input is invalid: it lists the errors)
        $karmactl --state "$state" plan -o markdown > "$KARMACTL_PLAN_MARKDOWN" 2>/dev/null
    fi
    set -e
    # plan: 0 = no differences, 1 = differences (both fine for a merge request), 2+ = error
    if [ "$code" -gt 1 ]; then exit "$code"; fi
    ;;
apply)
    branch="$(git rev-parse --abbrev-ref HEAD)"
    if [ -n "$remote" ]; then
        git fetch -q "$remote" "$branch"
        tip="$(git rev-parse FETCH_HEAD)"
        if [ "$tip" != "$(git rev-parse HEAD)" ]; then
            echo "karmactl-ci: $(git rev-parse --short HEAD) is no longer the tip of $branch" \
                 "($(git rev-parse --short "$tip")): nothing applied; the newer pipeline applies it"
            exit 0
        fi
    fi
    set +e
    $karmactl --state "$state" reconcile --wait --timeout "${KARMACTL_TIMEOUT:-5m}"
    code=$?
    set -e
    # 0 settled, 3 some member failed, 4 not settled in time: the files hold this run's observations
    case "$code" in 0|3|4) ;; *) exit "$code" ;; esac
    git add -A -- "$state/computed"
    if git diff --cached --quiet; then
        echo "karmactl-ci: status unchanged, nothing to commit"
        exit "$code"
    fi
    # [skip ci]: the status commit must not start the pipeline again
    git -c user.name="${GIT_AUTHOR_NAME:-karmactl-ci}" -c user.email="${GIT_AUTHOR_EMAIL:-karmactl-ci@localhost}" \
        commit -q -m "karmactl: status after reconcile [skip ci]"
    if [ -n "$remote" ]; then
        if ! git push -q "$remote" "HEAD:$branch"; then
            echo "karmactl-ci: the branch moved while this job ran; its status is not pushed (the next job" \
                 "observes again)" >&2
            exit "$code"
        fi
    fi
    echo "karmactl-ci: committed $(git rev-parse --short HEAD)"
    exit "$code"
    ;;
*)
    echo "usage: $0 plan|apply" >&2
    exit 2
    ;;
esac
