#!/usr/bin/env bash
# `make demo`: brings the local cluster up and walks through the tutorial,
# narrating each step: a title, the exact command, and its output. A failed
# step stops the demo, naming the step, the command and what was expected.
# The cluster is left up for exploring; KEEP=0 tears it down at the end.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
export CLUSTER=${CLUSTER:-kwok}
KEEP=${KEEP:-1}
cli=$LOCALBIN/e2e-cluster
declare -a done_steps=()

# say: narration between steps.
say() { printf '\n\033[1;34m## %s\033[0m\n' "$*"; }

# run "what is expected" command args...: shows the command, runs it, and
# stops the demo if it fails.
run() {
  local expect=$1
  shift
  printf '\033[36m$ %s\033[0m\n' "$*"
  if ! "$@"; then
    printf '\n\033[31mThe demo stopped at: %s\n  command:  %s\n  expected: %s\033[0m\n' "${current:-?}" "$*" "$expect" >&2
    exit 1
  fi
}

# wait_for "what" seconds command args...: retries a check until it succeeds,
# then shows its output. The check itself is plumbing, so it is not printed.
wait_for() {
  local what=$1 secs=$2 i
  shift 2
  printf '\033[36m... waiting until %s (at most %ss)\033[0m\n' "$what" "$secs"
  for ((i = 0; i < secs * 2; i++)); do
    if out=$("$@" 2>&1); then
      echo "$out"
      return 0
    fi
    sleep 0.5
  done
  echo "$out"
  printf '\n\033[31mThe demo stopped at: %s\n  command:  %s\n  expected: %s within %ss\033[0m\n' "${current:-?}" "$*" "$what" "$secs" >&2
  exit 1
}

# background NAME command args...: starts a controller or a server as you
# would in a second terminal, its output in .cache/demo/NAME.log. Names and
# pids are two lists, side by side: macOS's bash 3.2 has no associative arrays.
bg_names=()
bg_pids=()
logs=$ROOT/.cache/demo
mkdir -p "$logs"
background() {
  local name=$1
  shift
  printf '\033[36m$ %s &\033[0m   (in the background; output in %s)\n' "$*" "${logs#"$ROOT"/}/$name.log"
  "$@" >"$logs/$name.log" 2>&1 &
  bg_names+=("$name")
  bg_pids+=($!)
}
# stop NAME: stops what background NAME started, if it still runs.
stop() {
  local i=0
  while [ $i -lt ${#bg_names[@]} ]; do
    if [ "${bg_names[$i]}" = "$1" ] && [ -n "${bg_pids[$i]}" ]; then
      kill "${bg_pids[$i]}" 2>/dev/null
      wait "${bg_pids[$i]}" 2>/dev/null
      bg_pids[i]=
    fi
    i=$((i + 1))
  done
}
cleanup() {
  local rc=$? i=0
  while [ $i -lt ${#bg_names[@]} ]; do stop "${bg_names[$i]}"; i=$((i + 1)); done
  # KEEP=0 promises a torn-down cluster, also when a step failed.
  if [ "$KEEP" = 0 ] && [ $rc -ne 0 ]; then
    make -s -C "$ROOT" cluster-down CLUSTER="$CLUSTER" >/dev/null 2>&1
  fi
}
trap cleanup EXIT

chapter() {
  current=$1
  done_steps+=("$1")
  printf '\n\033[1m==> %s\033[0m\n' "$1"
}

chapter "The cluster ($CLUSTER)"
say "Bring up the local cluster: a real control plane, with fake nodes on kwok."
run "the cluster to come up" make -s -C "$ROOT" cluster-up CLUSTER="$CLUSTER"
KUBECONFIG=$("$cli" kubeconfig)
export KUBECONFIG PATH="$LOCALBIN:$PATH"
run "the pinned client and server versions" kubectl version
run "at least two Ready nodes" kubectl get nodes
say "A pod is scheduled for real; kwok's fake kubelet marks it Running."
kubectl delete pod demo-busybox --ignore-not-found --wait=false >/dev/null
run "the pod to be created" kubectl run demo-busybox --image=busybox --restart=Never -- sleep 3600
wait_for "the pod to be Running" 60 bash -c '[ "$(kubectl get pod demo-busybox -o jsonpath={.status.phase})" = Running ] && kubectl get pod demo-busybox -o wide'
run "the pod to go" kubectl delete pod demo-busybox --wait=false

# Each demo module adds its walkthrough here as it lands (scripts/demo.d/*.sh,
# run in name order, with the helpers above).
for w in "$ROOT"/scripts/demo.d/*.sh; do
  [ -e "$w" ] || continue
  # shellcheck source=/dev/null
  source "$w"
done

printf '\n\033[1mDone.\033[0m The walkthroughs that ran:\n'
printf '  - %s\n' "${done_steps[@]}"
if [ "$KEEP" = 0 ]; then
  say "KEEP=0: tearing the cluster down."
  run "the cluster to go" make -s -C "$ROOT" cluster-down CLUSTER="$CLUSTER"
else
  cat <<MSG

The cluster is still up. Explore it with:
  export KUBECONFIG=$KUBECONFIG
  export PATH=$LOCALBIN:\$PATH
  kubectl get nodes,pods -A
Tear it down with:
  make cluster-down
MSG
fi
