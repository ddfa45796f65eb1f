// Package kubeconfig finds the cluster the controllers talk to.
package kubeconfig

import (
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Load returns the client configuration the way kubectl finds it: the file
// named by path if it is not empty, else $KUBECONFIG, else ~/.kube/config,
// else the service account of the pod the controller runs in. masterURL, if
// not empty, overrides the server address.
//
// The article used clientcmd.BuildConfigFromFlags, which reads only the file
// it is given and ignores $KUBECONFIG.
func Load(masterURL, path string) (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = path
	overrides := &clientcmd.ConfigOverrides{}
	overrides.ClusterInfo.Server = masterURL
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("loading kubeconfig (pass --kubeconfig, set KUBECONFIG, or run in a cluster): %w", err)
	}
	return cfg, nil
}
