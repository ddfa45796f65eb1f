# shellcheck shell=bash
# operator-demo's other APIs: PodSet and PodBuggerTool (article 004) and Vpc
# (article 003), run by the same manager as its CustomPod. Sourced by demo.sh.

[ -f "$ROOT/operator-demo/go.mod" ] || return 0
chapter "PodSet, Vpc and PodBuggerTool (operator-demo)"
cd "$ROOT/operator-demo" || exit 1
say "The manager built for CustomPod runs the PodSet, Vpc and PodBuggerTool controllers too."
kubectl get namespace demo-operator-sdk >/dev/null 2>&1 || run "the namespace" kubectl create namespace demo-operator-sdk
say "Its Vpc webhook needs a serving certificate, and a webhook configuration that sends Vpc writes to this machine: localwebhook (bin/, from tools/localwebhook) makes both (make run runs it first)."
run "the certificate and the webhook configuration" localwebhook -name-prefix operator-demo- -namespace demo-operator-sdk
background manager-podset-vpc bin/manager --health-probe-bind-address=0 --namespace demo-operator-sdk --webhook-cert-path=bin/localwebhook

say "A PodSet of 3 busybox pods, scaled to 5 and back to 2; status.nodes lists them."
run "the PodSet to be created" kubectl apply -n demo-operator-sdk -f config/samples/apps_v1alpha1_podset.yaml
podset_wait() {
  wait_for "$1 PodSet pods Running, all ready" 60 bash -c "
    [ \"\$(kubectl get -n demo-operator-sdk pods -l apps.mock.com/podset=podset-sample --field-selector=status.phase=Running -o name | wc -l)\" -eq $1 ] &&
    [ \"\$(kubectl get -n demo-operator-sdk podset podset-sample -o jsonpath='{.status.nodes[*]}' | wc -w)\" -eq $1 ] &&
    [ \"\$(kubectl get -n demo-operator-sdk podset podset-sample -o jsonpath='{.status.readyReplicas}')\" = $1 ] &&
    kubectl get -n demo-operator-sdk podset podset-sample -o jsonpath='{.status.nodes}{\"\\n\"}'"
}
podset_wait 3
run "the resize to be accepted" kubectl patch -n demo-operator-sdk podset podset-sample --type=merge -p '{"spec":{"size":5}}'
podset_wait 5
run "the resize to be accepted" kubectl patch -n demo-operator-sdk podset podset-sample --type=merge -p '{"spec":{"size":2}}'
podset_wait 2

say "A Vpc: 10.0.0.0/16 carved into 4 subnets, one gateway pod each."
run "the Vpc to be created" kubectl apply -n demo-operator-sdk -f config/samples/network_v1_vpc.yaml
vpc_wait() {
  wait_for "$1 gateway pods Running" 60 bash -c "
    [ \"\$(kubectl get -n demo-operator-sdk vpc vpc-sample -o jsonpath='{.status.subnetnum}')\" = $1 ] &&
    [ \"\$(kubectl get -n demo-operator-sdk pods -l network.mock.com/vpc=vpc-sample --field-selector=status.phase=Running -o name | wc -l)\" -eq $1 ] &&
    kubectl get -n demo-operator-sdk pods -l network.mock.com/vpc=vpc-sample -o custom-columns=POD:.metadata.name,SUBNET:.spec.containers[0].env[0].value"
}
vpc_wait 4
run "the Vpc's status" kubectl get -n demo-operator-sdk vpc vpc-sample -o jsonpath='{.status.subnets}{"\n"}'
overlapping=$ROOT/e2e/operatordemo/testdata/vpc-overlapping.yaml
wait_for "the Vpc webhook to answer" 60 kubectl apply -n demo-operator-sdk --dry-run=server -f config/samples/network_v1_vpc.yaml
say "A second Vpc inside the first one's range: valid on its own, so the CRD's CEL rules accept it; the Vpc webhook, which sees the other Vpcs, refuses it and names the Vpc it overlaps."
printf '\033[36m$ kubectl apply -n demo-operator-sdk -f %s\033[0m\n' "${overlapping#"$ROOT"/}"
if kubectl apply -n demo-operator-sdk -f "$overlapping"; then
  echo "expected the Vpc webhook to refuse a Vpc that overlaps vpc-sample" >&2
  exit 1
fi
say "Two subnets instead: the gateways of subnets that no longer exist are replaced."
run "the change to be accepted" kubectl patch -n demo-operator-sdk vpc vpc-sample --type=merge -p '{"spec":{"subnetnum":2}}'
vpc_wait 2
say "Three equal subnets cannot be carved: the CRD's CEL rules refuse the change, naming the field, before the controller sees it."
printf '\033[36m$ %s\033[0m\n' "kubectl patch -n demo-operator-sdk vpc vpc-sample --type=merge -p '{\"spec\":{\"subnetnum\":3}}'"
if kubectl patch -n demo-operator-sdk vpc vpc-sample --type=merge -p '{"spec":{"subnetnum":3}}'; then
  echo "expected the API server to refuse subnetnum 3" >&2
  exit 1
fi

say "A PodBuggerTool (article 004): a running pod labelled debug.mock.com/debug=true gets a debugger, an ephemeral container; a pod without the label is left alone."
run "two pods, one labelled" kubectl apply -n demo-operator-sdk -f - <<'PODS'
apiVersion: v1
kind: Pod
metadata: {name: debug-me, labels: {debug.mock.com/debug: "true"}}
spec: {containers: [{name: app, image: busybox, command: [sleep, "3600"]}]}
---
apiVersion: v1
kind: Pod
metadata: {name: leave-me}
spec: {containers: [{name: app, image: busybox, command: [sleep, "3600"]}]}
PODS
run "the PodBuggerTool to be created" kubectl apply -n demo-operator-sdk -f config/samples/debug_v1alpha1_podbuggertool.yaml
wait_for "debug-me has the debugger, and the PodBuggerTool counts it" 60 bash -c "
  [ \"\$(kubectl get -n demo-operator-sdk pod debug-me -o jsonpath='{.spec.ephemeralContainers[*].name}')\" = debugger-podbuggertool-sample ] &&
  [ \"\$(kubectl get -n demo-operator-sdk podbuggertool podbuggertool-sample -o jsonpath='{.status.debuggedPods}')\" = 1 ] &&
  kubectl get -n demo-operator-sdk podbuggertool podbuggertool-sample &&
  kubectl get -n demo-operator-sdk pod debug-me -o jsonpath='{range .spec.ephemeralContainers[*]}debug-me: {.name} ({.image}), sharing container {.targetContainerName}{\"\\n\"}{end}'"
wait_for "leave-me is left alone" 5 bash -c "
  ecs=\$(kubectl get -n demo-operator-sdk pod leave-me -o jsonpath='{.spec.ephemeralContainers[*].name}')
  [ -z \"\$ecs\" ] && echo 'leave-me: no ephemeral container' || { echo \"leave-me has \$ecs\"; false; }"
say "kwok runs no container: the debugger is in debug-me's spec only. On kind it runs, and sees the app's processes (chapter 4)."
stop manager-podset-vpc
say "The manager is stopped, but its webhook configuration still sends Vpc writes to it: with failurePolicy Fail, the API server refuses them."
printf '\033[36m$ kubectl patch -n demo-operator-sdk vpc vpc-sample --type=merge -p {"spec":{"subnetnum":4}}\033[0m\n'
if kubectl patch -n demo-operator-sdk vpc vpc-sample --type=merge -p '{"spec":{"subnetnum":4}}'; then
  echo "expected the API server to refuse a Vpc write while its webhook is down" >&2
  exit 1
fi
run "the webhook configuration to be deleted" localwebhook -name-prefix operator-demo- -namespace demo-operator-sdk -delete
cd "$ROOT" || exit 1
