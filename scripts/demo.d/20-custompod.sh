# shellcheck shell=bash
# CustomPod three ways (crd-demo's client-go controller, kubebuilder-demo,
# operator-demo), sourced by demo.sh. Each runs in a namespace of its own, so
# that the three controllers of one CRD never act on each other's objects.

# custompod_walkthrough NAMESPACE SAMPLE CONTROLLER-COMMAND...
custompod_walkthrough() {
  local ns=$1 sample=$2
  shift 2
  kubectl get namespace "$ns" >/dev/null 2>&1 || run "the namespace" kubectl create namespace "$ns"
  background "controller-$ns" "$@" --namespace "$ns"
  run "the CustomPod to be created" kubectl apply -n "$ns" -f "$sample"
  custompod_wait "$ns" 1
  say "Scale up, through the scale subresource:"
  run "the scale to be accepted" kubectl scale -n "$ns" custompod/custompod-sample --replicas=3
  custompod_wait "$ns" 3
  say "And down again, as the articles do by editing replicas:"
  run "the change to be accepted" kubectl patch -n "$ns" custompod custompod-sample --type=merge -p '{"spec":{"replicas":1}}'
  custompod_wait "$ns" 1
  run "the CustomPod's columns" kubectl get -n "$ns" custompod
  stop "controller-$ns"
}

# custompod_wait NAMESPACE N: until N pods Running and the status says N, all ready.
custompod_wait() {
  wait_for "$2 pods Running and status.replicas=status.readyReplicas=$2" 60 bash -c "
    [ \"\$(kubectl get -n $1 custompod custompod-sample -o jsonpath={.status.replicas}/{.status.readyReplicas})\" = $2/$2 ] &&
    [ \"\$(kubectl get -n $1 pods -l zhhnzw.mock.com/custompod=custompod-sample --field-selector=status.phase=Running -o name | wc -l)\" -eq $2 ] &&
    kubectl get -n $1 pods -l zhhnzw.mock.com/custompod=custompod-sample"
}

chapter "CustomPod with raw client-go (crd-demo)"
cd "$ROOT/crd-demo" || exit 1
run "the CRD to be created" kubectl apply -f crd/custompod.yaml
run "the API server to serve custompods" kubectl wait --for=jsonpath='{.status.conditions[?(@.type=="Established")].status}'=True crd/custompods.zhhnzw.mock.com --timeout=60s
custompod_walkthrough demo-client-go example/example-custompod.yaml bin/custompod-controller

for module in kubebuilder-demo:kubebuilder operator-demo:operator-sdk; do
  tool=${module#*:} module=${module%:*}
  [ -f "$ROOT/$module/go.mod" ] || continue
  chapter "CustomPod with $tool ($module)"
  cd "$ROOT/$module" || exit 1
  say "The articles' steps: make install (the CRD), then the manager (make run builds and runs the same code)."
  run "the CRD to be installed" make -s install
  run "the manager to build" make -s build
  if [ "$module" = operator-demo ]; then
    # Its Vpc webhook wants a certificate, which the Vpc part below gives it.
    say "ENABLE_WEBHOOKS=false: this manager also serves a webhook for Vpc; here its controllers run alone."
    custompod_walkthrough "demo-$tool" config/samples/zhhnzw_v1_custompod.yaml env ENABLE_WEBHOOKS=false bin/manager --health-probe-bind-address=0
  else
    custompod_walkthrough "demo-$tool" config/samples/zhhnzw_v1_custompod.yaml bin/manager --health-probe-bind-address=0
  fi
done
cd "$ROOT" || exit 1
