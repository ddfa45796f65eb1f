// Package impls describes, once, the three implementations of the CustomPod
// operator that the e2e suite (custompod), the bench and compare run: where
// each one's controller is, how to run it with the settings they need, and
// the log line that says it works.
package impls

import (
	"regexp"
	"strconv"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Impl is one implementation's controller, run beside the cluster from a
// build of its module.
type Impl struct {
	// Name is how the tables and the tests name it.
	Name string
	// Dir is its module, relative to the repository root; Pkg the main
	// package of its controller, relative to Dir; Binary what to call the
	// build.
	Dir, Pkg, Binary string
	// Env is added to its environment.
	Env []string
	// Started matches the log line that says its CustomPod workers run.
	Started *regexp.Regexp
	// Lease is the Lease its replicas compete for, with leader election.
	Lease string
	// DefaultQPS and DefaultBurst are its client-side rate limit when told
	// none.
	DefaultQPS   float64
	DefaultBurst int

	// The flags that differ between crd-demo and the scaffolds: the one for
	// Settings.Workers, the one for each LogLevel, and those every run gets.
	workersFlag string
	logLevel    map[LogLevel]string
	always      []string
}

// Settings are what a caller asks of a run; a zero field leaves the
// implementation's default.
type Settings struct {
	// Namespace confines it to one namespace: runs side by side must not
	// reconcile each other's CustomPods.
	Namespace string
	// Workers is how many objects it reconciles at once.
	Workers int
	// QPS and Burst are its client-side rate limit, set when QPS is not 0;
	// a negative QPS is no limit.
	QPS   float64
	Burst int
	// LogLevel is how much it logs.
	LogLevel LogLevel
	// LeaderElection runs it as one of several replicas, with its Lease in
	// this namespace.
	LeaderElection string
}

// LogLevel is a level of logging, whichever logger the implementation uses.
type LogLevel string

const (
	Info  LogLevel = "info"
	Debug LogLevel = "debug"
)

// Args are its flags for s.
func (im *Impl) Args(s Settings) []string {
	args := append([]string(nil), im.always...)
	if s.Namespace != "" {
		args = append(args, "--namespace="+s.Namespace)
	}
	if s.Workers > 0 {
		args = append(args, im.workersFlag+"="+strconv.Itoa(s.Workers))
	}
	if s.QPS != 0 {
		args = append(args, "--kube-api-qps="+strconv.FormatFloat(s.QPS, 'f', -1, 64), "--kube-api-burst="+strconv.Itoa(s.Burst))
	}
	if s.LogLevel != "" {
		args = append(args, im.logLevel[s.LogLevel])
	}
	if s.LeaderElection != "" {
		args = append(args, "--leader-elect", "--leader-election-namespace="+s.LeaderElection)
	}
	return args
}

// ClientGo is crd-demo's CustomPod controller. crd-demo's Network
// controller takes the same flags (internal/kubeconfig, internal/leader,
// klog's).
var ClientGo = Impl{
	Name: "client-go", Dir: "crd-demo", Pkg: "./cmd/custompod-controller", Binary: "custompod-controller",
	Started:    regexp.MustCompile(`"Starting workers"`),
	Lease:      "crd-demo-custompod-controller",
	DefaultQPS: 5, DefaultBurst: 10,
	workersFlag: "--workers",
	logLevel:    map[LogLevel]string{Info: "-v=0", Debug: "-v=2"},
}

// Kubebuilder and OperatorSDK are the two scaffolds' managers: the same
// CustomPod controller (make verify: scripts/compare-scaffolds.sh), and in
// operator-demo's, more controllers beside it.
var (
	Kubebuilder = controllerRuntime("kubebuilder", "kubebuilder-demo", "1e94dc68.mock.com")
	OperatorSDK = controllerRuntime("operator-sdk", "operator-demo", "3a306b98.mock.com")
)

func controllerRuntime(name, dir, lease string) Impl {
	return Impl{
		Name: name, Dir: dir, Pkg: "./cmd", Binary: "manager",
		// Their webhooks (CustomPod's conversion webhook; operator-demo's
		// Vpc webhook) would need a certificate, and would re-point the
		// CustomPod CRD: the callers use v2, which needs no conversion.
		// GOGC is their Deployment's (config/manager/manager.yaml), so that
		// they are measured as they run in a cluster.
		Env:     []string{"ENABLE_WEBHOOKS=false", "GOGC=50"},
		Started: regexp.MustCompile(`Starting workers.*"controller": "custompod"`),
		Lease:   lease,
		// controller-runtime's defaults, which the scaffolds' flags keep.
		DefaultQPS: 20, DefaultBurst: 30,
		workersFlag: "--max-concurrent-reconciles",
		logLevel:    map[LogLevel]string{Info: "--zap-log-level=info", Debug: "--zap-log-level=debug"},
		// No health probes (all would take :8081) nor metrics, so that
		// several run side by side.
		always: []string{"--health-probe-bind-address=0", "--metrics-bind-address=0"},
	}
}

// CustomPods is the resource the three serve, at v2, the version the CRD
// stores: reading and writing it needs no conversion webhook.
var CustomPods = schema.GroupVersionResource{Group: "zhhnzw.mock.com", Version: "v2", Resource: "custompods"}
