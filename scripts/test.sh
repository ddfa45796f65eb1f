#!/usr/bin/env bash
# `make test`: everything, in the order a failure is cheapest to find.
#   1. the pinned tools (built once, then skipped in a fraction of a second)
#   2. make verify: versions, gofmt, generated code and manifests
#   3. each demo module's own `make test` (unit and envtest suites)
#   4. the e2e suites, on a kwok cluster of their own that is removed after
# It stops at the first failure, and always says where the time went.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
trap summary EXIT

run_tests() {
  step "tools: make tools" "$ROOT/scripts/tools.sh" || return
  step "cluster command: build bin/e2e-cluster" bash -c "cd '$ROOT/e2e' && GOWORK=off go build -o '$LOCALBIN/e2e-cluster' ./cmd/cluster" || return
  step "verify: versions, gofmt, generated files" "$ROOT/scripts/verify.sh" || return
  local m
  for m in $(modules); do
    [ "$m" = e2e ] && continue
    if has_target "$ROOT/$m" test; then
      step "$m: make test" make -C "$ROOT/$m" test || return
    else
      step "$m: go test ./..." bash -c "cd '$ROOT/$m' && GOWORK=off KUBEBUILDER_ASSETS='$LOCALBIN' go test -count=1 ./..." || return
    fi
  done
  # The README's first command, start to finish, on a cluster of its own.
  step "demo: make demo KEEP=0 (CLUSTER_NAME=k8s-demo-test-demo)" \
    make -C "$ROOT" demo KEEP=0 CLUSTER=kwok CLUSTER_NAME=k8s-demo-test-demo || return
  # A cluster of its own, so that a cluster the user has up is left alone.
  # One package at a time (-p 1): the suites run managers on fixed ports and
  # `make install` in the same modules.
  step "e2e: the suites on a kwok cluster (CLUSTER_NAME=k8s-demo-test)" bash -c \
    "cd '$ROOT/e2e' && CLUSTER=kwok CLUSTER_NAME=k8s-demo-test '$LOCALBIN/e2e-cluster' run -- go test -count=1 -p 1 -timeout 30m ./..."
}

run_tests
