// CoreDNS with the plugins kubeadm's Corefile uses
// (k8s.io/kubernetes cmd/kubeadm/app/phases/addons/dns/manifests.go), and the
// few a user adds when debugging cluster DNS (log, debug, hosts, rewrite,
// whoami). CoreDNS's own main imports every plugin (core/plugin), the cloud
// DNS backends among them, whose SDKs take minutes to compile and which a kind
// node never uses. scripts/tools.sh builds this file against the pinned
// COREDNS_VERSION.
package main

import (
	"github.com/coredns/coredns/coremain"

	// Each plugin registers itself with CoreDNS when imported.
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/debug"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/forward"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/hosts"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/loadbalance"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/loop"
	_ "github.com/coredns/coredns/plugin/metrics"
	_ "github.com/coredns/coredns/plugin/ready"
	_ "github.com/coredns/coredns/plugin/reload"
	_ "github.com/coredns/coredns/plugin/rewrite"
	_ "github.com/coredns/coredns/plugin/whoami"
)

func main() { coremain.Run() }
