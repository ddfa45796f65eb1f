# shellcheck shell=bash
# CustomPod three ways (crd-demo's client-go controller, kubebuilder-demo,
# operator-demo), sourced by demo.sh. Each runs in a namespace of its own, so
# that the three controllers of one CRD never act on each other's objects.

# custompod_walkthrough NAMESPACE SAMPLE V2-SAMPLE CONTROLLER-COMMAND...:
# SAMPLE is v1 (custompod-sample); the controller serves the conversion
# webhook too, so custompod_versions shows it at work.
custompod_walkthrough() {
  local ns=$1 sample=$2 v2sample=$3
  shift 3
  kubectl get namespace "$ns" >/dev/null 2>&1 || run "the namespace" kubectl create namespace "$ns"
  background "controller-$ns" "$@" --namespace "$ns"
  # SAMPLE is v1: the API server calls the controller's conversion webhook,
  # which answers once the controller has started.
  wait_for "the CustomPod to be created, through the conversion webhook" 60 kubectl apply -n "$ns" -f "$sample"
  custompod_wait "$ns" 1
  say "Scale up, through the scale subresource:"
  run "the scale to be accepted" kubectl scale -n "$ns" custompod/custompod-sample --replicas=3
  custompod_wait "$ns" 3
  say "And down again, as the articles do by editing replicas:"
  run "the change to be accepted" kubectl patch -n "$ns" custompod custompod-sample --type=merge -p '{"spec":{"replicas":1}}'
  custompod_wait "$ns" 1
  run "the CustomPod's columns" kubectl get -n "$ns" custompod
  custompod_versions "$ns" "$v2sample"
  stop "controller-$ns"
  say "With the webhook stopped, v2 (the stored version) still reads; v1 needs the conversion, and fails."
  run "v2 to read without the webhook" kubectl get -n "$ns" custompods.v2.zhhnzw.mock.com
  # One object: a list printed as a table was seen to come back without the webhook.
  printf '\033[36m$ %s\033[0m\n' "kubectl get -n $ns custompods.v1.zhhnzw.mock.com custompod-sample"
  local i
  for ((i = 0; i < 40; i++)); do
    if ! out=$(kubectl get -n "$ns" custompods.v1.zhhnzw.mock.com custompod-sample 2>&1); then
      echo "$out"
      return 0
    fi
    sleep 0.5
  done
  echo "$out"
  printf '\n\033[31mThe demo stopped at: %s\n  expected: v1 to fail without the conversion webhook\033[0m\n' "$current" >&2
  exit 1
}

# custompod_versions NAMESPACE V2-SAMPLE: the v1 CustomPod read as v2; a v2
# CustomPod read as v1 (its template in an annotation), changed through v1
# and read as v2 again, its template kept; the pods running v2's template.
custompod_versions() {
  local ns=$1 v2sample=$2 name want got
  name=$(kubectl create --dry-run=client -o jsonpath='{.metadata.name}' -f "$v2sample")
  say "The v1 CustomPod, read as v2 (the API server calls the conversion webhook): v1's pods ran busybox:1.36, sleep 3600."
  run "the v1 CustomPod read as v2" kubectl get -n "$ns" custompods.v2.zhhnzw.mock.com custompod-sample -o jsonpath='{.apiVersion} {.spec}{"\n"}'
  say "A v2 CustomPod with a template of its own, read as v1: the template is kept in an annotation."
  run "the v2 CustomPod to be created" kubectl apply -n "$ns" -f "$v2sample"
  run "the v2 CustomPod read as v1" kubectl get -n "$ns" custompods.v1.zhhnzw.mock.com "$name" -o jsonpath='{.apiVersion} {.spec} {.metadata.annotations.zhhnzw\.mock\.com/v2-template}{"\n"}'
  want=$(kubectl get -n "$ns" custompods.v2.zhhnzw.mock.com "$name" -o jsonpath='{.spec.template}')
  say "Written back through v1 (replicas 3), then read as v2: the template is still there."
  run "the change through v1 to be accepted" kubectl patch -n "$ns" custompods.v1.zhhnzw.mock.com "$name" --type=merge -p '{"spec":{"replicas":3}}'
  run "the v2 CustomPod read as v2" kubectl get -n "$ns" custompods.v2.zhhnzw.mock.com "$name" -o jsonpath='{.apiVersion} {.spec}{"\n"}'
  got=$(kubectl get -n "$ns" custompods.v2.zhhnzw.mock.com "$name" -o jsonpath='{.spec.template}')
  if [ -z "$want" ] || [ "$got" != "$want" ]; then
    printf '\n\033[31mThe demo stopped at: %s\n  expected: the template %s kept through v1, got %s\033[0m\n' "$current" "$want" "$got" >&2
    exit 1
  fi
  wait_for "3 pods of $name Running, with v2's template" 60 bash -c "
    [ \"\$(kubectl get -n $ns custompod $name -o jsonpath={.status.readyReplicas})\" = 3 ] &&
    kubectl get -n $ns pods -o custom-columns='NAME:.metadata.name,IMAGE:.spec.containers[0].image,COMMAND:.spec.containers[0].command'"
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
# Retried: kubectl 1.37's wait fails at once, rather than waiting, on a CRD
# so new that its .status.conditions is still null.
wait_for "the API server to serve custompods" 60 kubectl wait --for=jsonpath='{.status.conditions[?(@.type=="Established")].status}'=True crd/custompods.zhhnzw.mock.com --timeout=5s
say "custompod-controller --conversion-port 9443 also serves the conversion webhook (v1 <-> v2), with a self-signed certificate, and points the CRD at it."
custompod_walkthrough demo-client-go example/example-custompod.yaml example/example-custompod-v2.yaml bin/custompod-controller --conversion-port 9443

for module in kubebuilder-demo:kubebuilder operator-demo:operator-sdk; do
  tool=${module#*:} module=${module%:*}
  [ -f "$ROOT/$module/go.mod" ] || continue
  chapter "CustomPod with $tool ($module)"
  cd "$ROOT/$module" || exit 1
  say "The articles' steps: make install (the CRD), then the manager (make run builds and runs the same code)."
  say "A CRD has one conversion webhook for the cluster: make install points it at this module's Service, over the previous implementation's URL."
  run "the CRD to be installed" make -s install
  run "the manager to build" make -s build
  v2sample=$(ls config/samples/*_v2_custompod.yaml)
  say "The manager serves the conversion webhook: localwebhook (bin/, from tools/localwebhook; make run runs it first) makes its certificate and points the CRD's conversion at this machine."
  run "the certificate and the CRD's conversion" localwebhook -name-prefix "$module-" -namespace "demo-$tool"
  custompod_walkthrough "demo-$tool" config/samples/zhhnzw_v1_custompod.yaml "$v2sample" bin/manager --health-probe-bind-address=0 --webhook-cert-path=bin/localwebhook
  if [ "$module" = operator-demo ]; then
    run "the Vpc webhook configuration to be deleted" localwebhook -name-prefix "$module-" -namespace "demo-$tool" -delete
  fi
done
cd "$ROOT" || exit 1
