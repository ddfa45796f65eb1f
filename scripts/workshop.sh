#!/usr/bin/env bash
# The workshop's checkpoints and its reset (docs/workshop.md).
#
#   scripts/workshop.sh check NAME   print OK, or what is missing and how to
#                                    get it; NAME is a checkpoint of the
#                                    agenda: start, concepts, crd-demo,
#                                    kubebuilder, versions, operator,
#                                    exercise-1 ... exercise-4, end
#   scripts/workshop.sh reset        put the cluster and the working tree
#                                    back to the start of any slot: what
#                                    "On the day" leaves
#
# make workshop-check CHECK=NAME and make workshop-reset run them. Both use
# the cluster of KUBECONFIG, or else `make -s kubeconfig`'s, and the
# namespace NS (default workshop).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

NS=${NS:-workshop}
KUBECTL=$LOCALBIN/kubectl
if [ -z "${KUBECONFIG:-}" ]; then
  KUBECONFIG=$(make -s -C "$ROOT" kubeconfig)
  export KUBECONFIG
fi
CRD=custompods.zhhnzw.mock.com
DEMOS="kubebuilder-demo crd-demo operator-demo"

k() { "$KUBECTL" "$@"; }

listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

ok=()
missing=()
have() { ok+=("$1"); }
lack() { missing+=("$1"); }

report() {
  local name=$1 i
  if [ ${#missing[@]} -eq 0 ]; then
    printf 'workshop-check %s: OK: %s\n' "$name" "$(IFS=';'; echo "${ok[*]}" | sed 's/;/; /g')"
    return 0
  fi
  printf 'workshop-check %s: missing:\n' "$name"
  for i in "${missing[@]}"; do printf '  - %s\n' "$i"; done
  printf 'Catch up with the commands of the slot in docs/workshop.md, or start the slot again: make -C %s workshop-reset\n' "$ROOT"
  return 1
}

# The state "On the day" leaves, which every slot starts from.
check_start() {
  if ! k get --raw /readyz >/dev/null 2>&1; then
    lack "the cluster does not answer at $KUBECONFIG: make cluster-up, then eval \"\$(make -s env)\""
    return
  fi
  have "the cluster answers"
  if k get namespace "$NS" >/dev/null 2>&1; then have "namespace $NS"; else lack "namespace $NS: kubectl create namespace $NS"; fi
  local cur
  cur=$(k config view --minify -o jsonpath='{..namespace}' 2>/dev/null || true)
  if [ "$cur" = "$NS" ]; then have "kubectl's namespace is $NS"; else lack "kubectl's namespace is \"${cur:-default}\", not $NS: kubectl config set-context --current --namespace $NS"; fi
  if k wait --for=condition=Established "crd/$CRD" --timeout=5s >/dev/null 2>&1; then have "CustomPod's CRD installed"; else lack "CustomPod's CRD: make install, in kubebuilder-demo/"; fi
  if [ -x "$ROOT/kubebuilder-demo/bin/manager" ]; then have "kubebuilder-demo/bin/manager built"; else lack "kubebuilder-demo/bin/manager: make build, in kubebuilder-demo/"; fi
}

# Nothing an exercise leaves behind: the working tree as committed, no
# CustomPod, Network or RBAC of the exercises.
check_clean() {
  local m dirty
  for m in $DEMOS; do
    dirty=$(git -C "$ROOT" status --porcelain -- "$m" | head -3)
    if [ -n "$dirty" ]; then lack "$m/ has changes: $(echo "$dirty" | tr '\n' ' ')(git checkout -- . in $m/)"; fi
  done
  [ ${#missing[@]} -gt 0 ] || have "the demos' files as committed"
  local left="" r
  for r in clusterrolebinding/workshop-$NS clusterrole/workshop-no-pod-create serviceaccount/workshop; do
    left="$left $(k get "$r" -n "$NS" -o name --ignore-not-found 2>/dev/null || true)"
  done
  left="$left $(k get custompods.v2.zhhnzw.mock.com -n "$NS" -o name 2>/dev/null || true)"
  if k get crd networks.samplecrd.k8s.io >/dev/null 2>&1; then
    left="$left $(k get networks -n "$NS" -o name 2>/dev/null || true)"
  fi
  left=$(echo $left)
  if [ -n "$left" ]; then lack "left by an exercise: $left"; else have "nothing left by an exercise"; fi
}

check() {
  local name=${1:-}
  case "$name" in
    start | end)
      check_start
      check_clean
      ;;
    concepts)
      check_start
      if k api-resources --api-group=samplecrd.k8s.io -o name 2>/dev/null | grep -qx networks.samplecrd.k8s.io; then
        have "the API server serves networks.samplecrd.k8s.io"
      else
        lack "the Network CRD: kubectl apply -f ../crd-demo/crd/network.yaml"
      fi
      ;;
    crd-demo)
      check_start
      local b
      for b in network-controller network-backend; do
        if [ -x "$ROOT/crd-demo/bin/$b" ]; then have "crd-demo/bin/$b built"; else lack "crd-demo/bin/$b: make -C ../crd-demo build"; fi
      done
      ;;
    kubebuilder)
      check_start
      if git -C "$ROOT" diff --quiet -- kubebuilder-demo/config; then
        have "kubebuilder-demo/config is what its markers make"
      else
        lack "kubebuilder-demo/config differs from the commit: git checkout -- config, then make manifests"
      fi
      ;;
    versions)
      check_start
      local v
      v=$(k get crd "$CRD" -o jsonpath='{range .spec.versions[*]}{.name}{"="}{.served}{"/"}{.storage}{" "}{end}' 2>/dev/null || true)
      if [ "$v" = "v1=true/false v2=true/true " ]; then have "CustomPod serves v1 and v2, and stores v2"; else lack "CustomPod's versions are \"$v\", want v1 and v2 served and v2 stored: make install, in kubebuilder-demo/"; fi
      ;;
    operator)
      check_start
      local csv=$ROOT/operator-demo/bundle/manifests/operator-demo.clusterserviceversion.yaml
      if [ -f "$csv" ] && git -C "$ROOT" diff --quiet -- operator-demo/bundle; then have "operator-demo's bundle as committed (operator-demo.v0.0.1)"; else lack "operator-demo/bundle differs from the commit: git checkout -- bundle, in operator-demo/"; fi
      ;;
    exercise-1)
      check_start
      if k get crd "$CRD" -o jsonpath='{.spec.versions[?(@.name=="v2")].schema.openAPIV3Schema.properties.spec.properties.template.properties.imagePullPolicy.default}' 2>/dev/null | grep -qx IfNotPresent; then
        have "v2's template has imagePullPolicy, default IfNotPresent"
      else
        lack "imagePullPolicy in v2's schema: git apply ../docs/workshop/exercise-1.patch, then make manifests generate install"
      fi
      if k get crd "$CRD" -o jsonpath='{.spec.versions[?(@.name=="v2")].additionalPrinterColumns[*].name}' 2>/dev/null | grep -qw Pull; then have "the Pull column"; else lack "the Pull column: the printcolumn marker, then make manifests install"; fi
      ;;
    exercise-2)
      check_start
      if [ "$(k auth can-i create pods -n "$NS" --as="system:serviceaccount:$NS:workshop" 2>/dev/null || true)" = yes ]; then have "the ServiceAccount workshop may create pods again"; else lack "create on pods for system:serviceaccount:$NS:workshop: bind it to manager-role"; fi
      if k wait custompod/custompod-sample-v2 -n "$NS" --for=condition=Ready --timeout=5s >/dev/null 2>&1; then have "custompod-sample-v2 Ready"; else lack "custompod-sample-v2 Ready: is the manager running in the second terminal?"; fi
      ;;
    exercise-3)
      check_start
      if k wait network/example-network -n "$NS" --for=condition=Ready --timeout=5s >/dev/null 2>&1; then have "example-network Ready"; else lack "example-network Ready: are the backend and the controller running?"; fi
      if listening 8090 && curl -s "127.0.0.1:8090/v2.0/networks?name=$NS/example-network" | grep -q "\"name\":\"$NS/example-network\""; then have "the backend has its network"; else lack "the backend's network: is bin/network-backend running in the second terminal?"; fi
      ;;
    exercise-4)
      check_start
      local csv=$ROOT/operator-demo/bundle/manifests/operator-demo.clusterserviceversion.yaml
      if grep -q 'name: operator-demo.v0.0.2' "$csv" && grep -q 'channels.v1: candidate' "$ROOT/operator-demo/bundle/metadata/annotations.yaml"; then have "the bundle is operator-demo.v0.0.2 on the candidate channel"; else lack "the 0.0.2 bundle: make bundle VERSION=0.0.2 CHANNELS=candidate DEFAULT_CHANNEL=candidate, in operator-demo/"; fi
      ;;
    *)
      echo "workshop-check: CHECK=NAME, one of: start concepts crd-demo kubebuilder versions operator exercise-1 exercise-2 exercise-3 exercise-4 end; got \"$name\"" >&2
      return 2
      ;;
  esac
  report "$name"
}

reset() {
  local p what busy=""
  # The workshop's processes listen on these; a reset under one of them
  # would be undone by it (make run points the CRD's conversion at itself).
  for p in 9443 8081 8090; do
    if listening "$p"; then
      case $p in
        9443) what="make run's webhook server (exercise 1)" ;;
        8081) what="a manager's health probes" ;;
        8090) what="the network backend (exercise 3)" ;;
      esac
      busy="$busy\n  - 127.0.0.1:$p: $what"
    fi
  done
  if [ -n "$busy" ]; then
    printf 'workshop-reset: something still runs, and would undo the reset:%b\nStop it (Ctrl-C in its terminal), then run make workshop-reset again.\n' "$busy" >&2
    return 1
  fi
  if ! k get --raw /readyz >/dev/null 2>&1; then
    echo "workshop-reset: the cluster does not answer at $KUBECONFIG: make cluster-up first" >&2
    return 1
  fi

  echo "workshop-reset: the demos' files, as committed"
  git -C "$ROOT" checkout -- $DEMOS
  rm -f "$ROOT/kubebuilder-demo/bin/workshop.kubeconfig" "$ROOT/kubebuilder-demo/bin/manager-role.yaml" \
    "$ROOT/crd-demo/bin/workshop-backend.json" "$ROOT/crd-demo/bin/workshop-controller.log"

  echo "workshop-reset: namespace $NS, and kubectl's namespace"
  k get namespace "$NS" >/dev/null 2>&1 || k create namespace "$NS"
  k config set-context --current --namespace "$NS" >/dev/null

  # CustomPods go as v2, the version they are stored in: no conversion, so
  # this works while the CRD's conversion points at a make run that is gone.
  if k get crd "$CRD" >/dev/null 2>&1; then
    echo "workshop-reset: CustomPods deleted (as v2: no conversion webhook needed)"
    k delete custompods.v2.zhhnzw.mock.com --all -n "$NS" --timeout=60s
  fi
  # A Network deleted while the controller was down waits for its
  # finalizer, which only the controller removes: remove it here (the
  # backend's state file is gone too, so no network is left behind).
  if k get crd networks.samplecrd.k8s.io >/dev/null 2>&1; then
    local n
    for n in $(k get networks -n "$NS" -o name); do
      k patch "$n" -n "$NS" --type=merge -p '{"metadata":{"finalizers":null}}' >/dev/null
    done
    echo "workshop-reset: Networks deleted"
    k delete networks --all -n "$NS" --timeout=60s
  fi
  k delete pods --all -n "$NS" --wait=false >/dev/null
  echo "workshop-reset: exercise 2's RBAC deleted"
  k delete clusterrolebinding "workshop-$NS" --ignore-not-found
  k delete clusterrole workshop-no-pod-create --ignore-not-found
  k delete serviceaccount workshop -n "$NS" --ignore-not-found

  # make install applies the CRD as committed: its conversion goes back to
  # the in-cluster Service, away from the URL make run had set.
  echo "workshop-reset: kubebuilder-demo: make install build"
  make -s -C "$ROOT/kubebuilder-demo" install build
  k wait --for=condition=Established "crd/$CRD" --timeout=60s >/dev/null
  check start
}

case "${1:-}" in
  check) shift; check "$@" ;;
  reset) reset ;;
  *)
    echo "usage: scripts/workshop.sh check NAME | reset" >&2
    exit 2
    ;;
esac
