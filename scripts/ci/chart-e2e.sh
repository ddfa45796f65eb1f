#!/usr/bin/env bash
# A scaffold's Helm chart (dist/chart, written by `make chart`) on a kind
# cluster, as a user installs it, upgrades it and takes it away:
#   1. helm install, into a namespace that enforces PodSecurity "restricted"
#      (as config/manager's does), under a release name other than the
#      chart's (values.yaml's fullnameOverride keeps the names the manager's
#      flags expect);
#   2. helm test: the chart's test pod reaches the conversion webhook through
#      its Service, trusting only the CA the manager's rotator made;
#   3. the controller at work: the v1 sample, converted by that webhook,
#      made ready, then scaled 1 -> 3;
#   4. helm upgrade, a values change (crd.keep=false), then scaled 3 -> 1;
#   5. helm uninstall: every object of the release's manifest must be gone,
#      the CRDs too (keep was turned off in 4).
# CI's kind part runs it for both scaffolds (.ci/run).
#
# Usage: KUBECONFIG=... scripts/ci/chart-e2e.sh DEMO IMAGE KIND_CLUSTER
#   IMAGE is the demo's image, already built (make docker-build); it is
#   loaded into the nodes of KIND_CLUSTER here.
set -euo pipefail
if [ $# -ne 3 ]; then
  echo "usage: $0 DEMO IMAGE KIND_CLUSTER" >&2
  exit 2
fi
demo=${1%/} image=$2 cluster=$3
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=$root/bin
chart=$root/$demo/dist/chart
ns=$demo-system
release=$demo-release
work_ns=chart-e2e
cr=custompods.v2.zhhnzw.mock.com/custompod-sample
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

say() { printf '  [%3ds] %s\n' "$SECONDS" "$*"; }
kubectl() { "$bin/kubectl" "$@"; }
helm() { "$bin/helm" "$@"; }

# fail WHAT: says what failed, with what would explain it, and exits.
fail() {
  echo "chart-e2e: $demo: $*" >&2
  {
    echo "--- helm status"
    helm status "$release" -n "$ns" 2>&1 | sed -n 1,20p
    echo "--- pods"
    kubectl get pods -A -o wide 2>&1 | grep -v kube-system
    echo "--- the manager's log (last 40 lines)"
    kubectl logs -n "$ns" deploy/"$demo"-controller-manager --tail=40 2>&1
    echo "--- the manager's previous run, if it restarted (last 25 lines)"
    kubectl logs -n "$ns" deploy/"$demo"-controller-manager --previous --tail=25 2>&1
    echo "--- events in $ns"
    kubectl get events -n "$ns" --sort-by=.lastTimestamp 2>&1 | tail -15
    echo "--- events in $work_ns"
    kubectl get events -n "$work_ns" --sort-by=.lastTimestamp 2>&1 | tail -15
  } | sed 's/^/    /' >&2
  exit 1
}

# ready N: the sample's status reports N ready pods within 3 minutes.
ready() {
  kubectl wait -n "$work_ns" "$cr" --for=jsonpath='{.status.readyReplicas}'="$1" --timeout=3m >/dev/null ||
    fail "expected $cr to report $1 ready pods within 3 minutes, seen $(kubectl get -n "$work_ns" "$cr" -o jsonpath='{.status.readyReplicas}' 2>&1)"
}

say "loading $image into the nodes of kind cluster $cluster"
"$bin/kind" load docker-image "$image" --name "$cluster" >"$tmp/load.log" 2>&1 || { cat "$tmp/load.log" >&2; fail "kind load docker-image failed"; }
kubectl create namespace "$ns" >/dev/null
kubectl label namespace "$ns" pod-security.kubernetes.io/enforce=restricted >/dev/null

say "helm install $release $demo/dist/chart -n $ns"
helm install "$release" "$chart" -n "$ns" \
  --set manager.image.repository="${image%:*}" --set manager.image.tag="${image##*:}" \
  --wait --timeout 5m >/dev/null || fail "helm install did not finish"

say "helm test $release"
helm test "$release" -n "$ns" --logs --timeout 3m >"$tmp/test.log" 2>&1 || { cat "$tmp/test.log" >&2; fail "helm test failed"; }
verified='HTTP [1-5][0-9][0-9] from .*, certificate verify result 0 '
grep -Eq "$verified" "$tmp/test.log" ||
  { cat "$tmp/test.log" >&2; fail "expected the test pod to get an HTTP answer over a verified certificate ('$verified'), seen none"; }
grep -E "$verified" "$tmp/test.log" | sed 's/^/         /'

say "the controller: the v1 sample in namespace $work_ns, scaled 1 -> 3"
kubectl create namespace "$work_ns" >/dev/null
kubectl apply -n "$work_ns" -f "$root/$demo/config/samples/zhhnzw_v1_custompod.yaml" >/dev/null
ready 1
kubectl patch -n "$work_ns" "$cr" --type=merge -p '{"spec":{"replicas":3}}' >/dev/null
ready 3

say "helm upgrade $release --set crd.keep=false"
helm upgrade "$release" "$chart" -n "$ns" --reuse-values --set crd.keep=false \
  --wait --timeout 5m >/dev/null || fail "helm upgrade did not finish"
revision=$(helm history "$release" -n "$ns" --max 1 -o json | sed -n 's/.*"revision":\([0-9]*\).*/\1/p')
[ "$revision" = 2 ] || fail "expected revision 2 after the upgrade, seen '$revision'"
kubectl get crd custompods.zhhnzw.mock.com -o jsonpath='{.metadata.annotations}' | grep -q resource-policy &&
  fail "expected the upgrade to take helm.sh/resource-policy=keep off the CRD"
kubectl patch -n "$work_ns" "$cr" --type=merge -p '{"spec":{"replicas":1}}' >/dev/null
ready 1

say "helm uninstall $release"
helm get manifest "$release" -n "$ns" >"$tmp/manifest.yaml"
kubectl delete namespace "$work_ns" --wait --timeout=2m >/dev/null
helm uninstall "$release" -n "$ns" --wait --timeout 3m >/dev/null || fail "helm uninstall did not finish"
# The release's objects, and the pods they made (the manager's, which the
# garbage collector removes after its Deployment; the test pod, deleted once
# it succeeded).
left=""
for _ in $(seq 1 60); do
  left=$(kubectl get -f "$tmp/manifest.yaml" --ignore-not-found -o name 2>&1; kubectl get pods -n "$ns" -o name 2>&1)
  [ -z "$left" ] && break
  sleep 2
done
[ -z "$left" ] || fail "expected nothing of the release left two minutes after helm uninstall, seen: $(echo $left)"
kubectl delete namespace "$ns" --wait --timeout=2m >/dev/null
say "$demo's chart: installed, tested, upgraded and uninstalled; $(grep -c '^kind:' "$tmp/manifest.yaml") objects, none left"
