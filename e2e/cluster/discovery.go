package cluster

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"k8s.io/client-go/tools/clientcmd"
)

// ForgetDiscovery removes kubectl's cached discovery of the API server that
// kubeconfig's current context names. A new cluster often gets an address an
// earlier one had (127.0.0.1 and a free port), and kubectl trusts its cache
// for hours: it would ask the new cluster for the API the old one served
// (another version of a CRD, say) and get "the server could not find the
// requested resource". kubectl keeps the cache in $KUBECACHEDIR, or else
// ~/.kube/cache, under discovery/<host_port>.
func ForgetDiscovery(kubeconfig string) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	dir := os.Getenv("KUBECACHEDIR")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return nil // no home, no cache
		}
		dir = filepath.Join(home, ".kube", "cache")
	}
	return os.RemoveAll(filepath.Join(dir, "discovery", discoveryDirName(cfg.Host)))
}

// unsafeFileChars is what kubectl replaces with "_" in a server's address to
// name its cache directory (k8s.io/cli-runtime's computeDiscoverCacheDir).
var unsafeFileChars = regexp.MustCompile(`[^(\w/.)]`)

func discoveryDirName(host string) string {
	host = strings.Replace(strings.Replace(host, "https://", "", 1), "http://", "", 1)
	return unsafeFileChars.ReplaceAllString(host, "_")
}
