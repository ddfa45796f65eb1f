// Package network is the e2e suite of crd-demo's Network walkthrough: the
// articles' four kubectl commands, the network backend following the
// Network's life, a controller down while the Network is deleted, and bad
// input refused at admission.
package network

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"example.com/k8s-demo/e2e/harness"
)

func TestMain(m *testing.M) { harness.Main(m) }

// backendNetwork is a network as the backend's Neutron-like API returns it.
type backendNetwork struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	CIDR        string `json:"cidr"`
	GatewayIP   string `json:"gateway_ip"`
	Description string `json:"description"`
}

// backendNetworks asks the backend, as an operator would, what it holds.
func backendNetworks(ctx context.Context, url string) ([]backendNetwork, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/v2.0/networks", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /v2.0/networks: %s", resp.Status)
	}
	var body struct {
		Networks []backendNetwork `json:"networks"`
	}
	return body.Networks, json.NewDecoder(resp.Body).Decode(&body)
}

func TestNetworkWalkthrough(t *testing.T) {
	h := harness.New(t)
	dir := h.Path("crd-demo")
	h.Track("network/example-network")

	// The backend: its own process beside the cluster (it stands for an
	// external system), its state in a file; on an address the controller
	// reaches, wherever it runs.
	backendURL := fmt.Sprintf("http://%s:%d", h.PodReachableHost(), h.FreePort())
	h.Start(harness.ProcessSpec{Name: "network-backend", Path: h.Build("crd-demo", "./cmd/network-backend", "network-backend"),
		Args: []string{"--listen", strings.TrimPrefix(backendURL, "http://"), "--state-file", filepath.Join(h.Dir, "backend.json"), "-v=2"}})

	// The articles' first step, then the controller, with only its ClusterRole:
	// beside the cluster, or in it with `make deploy` (E2E_MANAGERS=in-cluster).
	var ctrl harness.Controller
	if harness.InCluster() {
		ctrl = h.Deploy(harness.DeploySpec{Dir: "crd-demo", Namespace: "crd-demo-system", Deployment: "network-controller",
			MakeArgs: []string{"BACKEND_URL=" + backendURL}})
	} else {
		h.KubectlIn(dir, "apply", "-f", "crd/network.yaml")
		h.WaitEstablished("", "crd/networks.samplecrd.k8s.io")
		h.KubectlIn(dir, "apply", "-f", "config/rbac/network-controller.yaml")
		kubeconfig := h.KubeconfigAs("controller", "crd-demo-network-controller")
		ctrl = h.Start(harness.ProcessSpec{Name: "network-controller", Path: h.Build("crd-demo", ".", "network-controller"),
			Args: []string{"--namespace", h.Namespace, "--backend-url", backendURL, "-v=4"},
			Env:  []string{"KUBECONFIG=" + kubeconfig}})
	}

	// The articles' other three steps, verbatim.
	h.KubectlIn(dir, "apply", "-f", "example/example-network.yaml")
	waitForBackend(h, backendURL, "192.168.0.0/16", "192.168.0.1")
	h.WaitFor("example-network to be Ready", time.Minute, func(ctx context.Context) (bool, string, error) {
		out, err := h.KubectlErr("get", "network")
		return err == nil && strings.Contains(out, "True"), out, err
	})
	out := h.KubectlIn(dir, "get", "network")
	for _, want := range []string{"CIDR", "GATEWAY", "READY", "AGE", "example-network", "192.168.0.0/16", "192.168.0.1"} {
		if !strings.Contains(out, want) {
			t.Errorf("kubectl get network lacks %q:\n%s", want, out)
		}
	}
	// The backend network carries the Network's UID, and the status its ID.
	ids := strings.Fields(h.Kubectl("get", "network", "example-network", "-o", "jsonpath={.metadata.uid} {.status.networkID}"))
	if nets, err := backendNetworks(h.Ctx, backendURL); err != nil || len(ids) != 2 || len(nets) != 1 ||
		nets[0].Description != ids[0] || nets[0].ID != ids[1] {
		t.Errorf("backend networks %+v (%v); want one, its description the Network's UID and its ID status.networkID: uid, networkID = %q", nets, err, ids)
	}
	out = h.KubectlIn(dir, "describe", "network", "example-network")
	for _, want := range []string{"Cidr:", "192.168.0.0/16", "Events:", "Normal"} {
		if !strings.Contains(out, want) {
			t.Errorf("kubectl describe network lacks %q:\n%s", want, out)
		}
	}

	// A cidr change reaches the backend.
	h.Kubectl("patch", "network", "example-network", "--type=merge", "-p", `{"spec":{"cidr":"10.1.0.0/16","gateway":"10.1.0.1"}}`)
	waitForBackend(h, backendURL, "10.1.0.0/16", "10.1.0.1")

	// Deleted while the controller is down: the finalizer keeps the Network
	// until the controller is back and has deleted the backend network.
	if err := ctrl.Stop(); err != nil {
		t.Fatal(err)
	}
	h.Kubectl("delete", "network", "example-network", "--wait=false")
	time.Sleep(time.Second)
	if nets, err := backendNetworks(h.Ctx, backendURL); err != nil || len(nets) != 1 {
		t.Fatalf("with the controller down the backend must still hold the network: %v %v", nets, err)
	}
	if err := ctrl.Restart(); err != nil {
		t.Fatal(err)
	}
	h.WaitFor("the backend network to be deleted and the Network gone", time.Minute, func(ctx context.Context) (bool, string, error) {
		nets, err := backendNetworks(ctx, backendURL)
		if err != nil {
			return false, "", err
		}
		out, _ := h.KubectlErr("get", "networks", "-o", "name")
		gone := strings.TrimSpace(out) == "" || strings.Contains(out, "No resources")
		return len(nets) == 0 && gone,
			fmt.Sprintf("backend %v; kubectl: %s", nets, strings.TrimSpace(out)), nil
	})
	// Its ClusterRole was enough: each of its verbs shows above, in the API
	// (the status applied, the finalizer added and removed, the events).
	h.ExpectAPIServerLogged(ctrl)
}

func waitForBackend(h *harness.H, url, cidr, gateway string) {
	h.Helper()
	h.WaitFor(fmt.Sprintf("the backend to hold %s/example-network with %s via %s", h.Namespace, cidr, gateway), time.Minute,
		func(ctx context.Context) (bool, string, error) {
			nets, err := backendNetworks(ctx, url)
			if err != nil {
				return false, "", err
			}
			name := h.Namespace + "/example-network"
			return len(nets) == 1 && nets[0].Name == name && nets[0].CIDR == cidr && nets[0].GatewayIP == gateway,
				fmt.Sprintf("%+v", nets), nil
		})
}
