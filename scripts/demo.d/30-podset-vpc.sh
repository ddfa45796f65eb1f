# shellcheck shell=bash
# operator-demo's other two APIs: PodSet (article 004) and Vpc (article 003),
# run by the same manager as its CustomPod. Sourced by demo.sh.

[ -f "$ROOT/operator-demo/go.mod" ] || return 0
chapter "PodSet and Vpc (operator-demo)"
cd "$ROOT/operator-demo" || exit 1
say "The manager built for CustomPod runs the PodSet and Vpc controllers too."
kubectl get namespace demo-operator-sdk >/dev/null 2>&1 || run "the namespace" kubectl create namespace demo-operator-sdk
background manager-podset-vpc bin/manager --health-probe-bind-address=0 --namespace demo-operator-sdk

say "A PodSet of 3 busybox pods, scaled to 5 and back to 2; status.nodes lists them."
run "the PodSet to be created" kubectl apply -n demo-operator-sdk -f config/samples/apps_v1alpha1_podset.yaml
podset_wait() {
  wait_for "$1 PodSet pods Running" 60 bash -c "
    [ \"\$(kubectl get -n demo-operator-sdk pods -l apps.mock.com/podset=podset-sample --field-selector=status.phase=Running -o name | wc -l)\" -eq $1 ] &&
    [ \"\$(kubectl get -n demo-operator-sdk podset podset-sample -o jsonpath='{.status.nodes[*]}' | wc -w)\" -eq $1 ] &&
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
say "Two subnets instead: the gateways of subnets that no longer exist are replaced."
run "the change to be accepted" kubectl patch -n demo-operator-sdk vpc vpc-sample --type=merge -p '{"spec":{"subnetnum":2}}'
vpc_wait 2
say "Three equal subnets cannot be carved: the Vpc says so, with a Warning event."
run "the change to be accepted" kubectl patch -n demo-operator-sdk vpc vpc-sample --type=merge -p '{"spec":{"subnetnum":3}}'
wait_for "Ready=False with reason InvalidSubnetting" 60 bash -c "
  kubectl get -n demo-operator-sdk vpc vpc-sample -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].reason}' | grep -q InvalidSubnetting &&
  kubectl get -n demo-operator-sdk vpc vpc-sample -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].message}{\"\\n\"}'"
stop manager-podset-vpc
cd "$ROOT" || exit 1
