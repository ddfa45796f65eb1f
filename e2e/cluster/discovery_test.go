package cluster

import (
	"os"
	"path/filepath"
	"testing"
)

func TestForgetDiscovery(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("KUBECACHEDIR", cache)
	for _, d := range []string{"127.0.0.1_32758/zhhnzw.mock.com/v2", "127.0.0.1_40001"} {
		if err := os.MkdirAll(filepath.Join(cache, "discovery", d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:32758"}
contexts:
- name: c
  context: {cluster: c, user: u}
current-context: c
users:
- name: u
  user: {token: t}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := ForgetDiscovery(kubeconfig); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(cache, "discovery", "127.0.0.1_32758")); !os.IsNotExist(err) {
		t.Errorf("the cluster's cached discovery is still there (%v)", err)
	}
	if _, err := os.Stat(filepath.Join(cache, "discovery", "127.0.0.1_40001")); err != nil {
		t.Errorf("another server's cached discovery was removed: %v", err)
	}
}
