# shellcheck shell=bash
# The Network walkthrough (crd-demo; articles 000 and 002), sourced by demo.sh.

chapter "Network: a CRD, code-generator and a hand-written controller (crd-demo)"
cd "$ROOT/crd-demo" || exit 1
say "Build the controller and the network backend that stands in for OpenStack Neutron."
run "the binaries to build" make -s build
say "The articles' first step: register the Network type with the API server."
run "the CRD to be created" kubectl apply -f crd/network.yaml
# Retried: kubectl 1.37's wait fails at once, rather than waiting, on a CRD
# so new that its .status.conditions is still null.
wait_for "the API server to serve networks" 60 kubectl wait --for=jsonpath='{.status.conditions[?(@.type=="Established")].status}'=True crd/networks.samplecrd.k8s.io --timeout=5s
say "Run the backend and the controller, as in two more terminals."
rm -f "$logs/network-backend.json"
background network-backend bin/network-backend --listen 127.0.0.1:18090 --state-file "$logs/network-backend.json"
background network-controller bin/network-controller --backend-url http://127.0.0.1:18090 --namespace default
say "Create the Network of the articles, and look at it."
run "the Network to be created" kubectl apply -f example/example-network.yaml
wait_for "the Network to be Ready" 60 bash -c '[ "$(kubectl get network example-network -o jsonpath="{.status.conditions[?(@.type==\"Ready\")].status}")" = True ]'
run "the printer columns" kubectl get network
run "the Ready condition and the events" kubectl describe network example-network
say "The backend now holds the network (its state file):"
run "the backend's state" cat "$logs/network-backend.json"
say "Change the CIDR: the controller updates the backend."
run "the change to be accepted" kubectl patch network example-network --type=merge -p '{"spec":{"cidr":"10.1.0.0/16","gateway":"10.1.0.1"}}'
wait_for "the backend to hold 10.1.0.0/16" 60 grep -q '10.1.0.0/16' "$logs/network-backend.json"
run "the backend's state" cat "$logs/network-backend.json"
say "Bad input is refused by the API server, before any controller sees it:"
printf '\033[36m$ kubectl patch network example-network --type=merge -p {"spec":{"gateway":"192.168.0.1"}}\033[0m\n'
if kubectl patch network example-network --type=merge -p '{"spec":{"gateway":"192.168.0.1"}}'; then
  echo "expected the API server to refuse a gateway outside the CIDR" >&2
  exit 1
fi
say "Delete the Network: its finalizer holds it until the backend network is gone."
run "the Network to be deleted" kubectl delete network example-network --timeout=60s
wait_for "the backend to be empty" 30 bash -c "! grep -q example-network '$logs/network-backend.json'"
run "the backend's state" cat "$logs/network-backend.json"
stop network-controller
stop network-backend
cd "$ROOT" || exit 1
