package cluster

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"example.com/k8s-demo/e2e/process"
	"example.com/k8s-demo/e2e/retries"
)

// kwok runs the control plane with kwokctl's "binary" runtime: every
// component is a local process started from the binaries `make tools` built,
// so nothing is pulled from a registry. kwok's controller fakes the nodes and
// the kubelet's work: pods are scheduled for real and marked Running.
type kwok struct {
	o Options
	// stopped holds the command lines of the cluster's processes, noted by
	// StopControlPlane for StartControlPlane; outage is when it began.
	stopped map[string]*exec.Cmd
	outage  time.Time
}

func newKwok(o Options) *kwok { return &kwok{o: o} }

func (k *kwok) Name() string { return "kwok" }

// workDir is kwokctl's KWOK_WORKDIR: each cluster is a directory below it.
func (k *kwok) workDir() string { return filepath.Join(k.o.WorkDir, "kwok") }

func (k *kwok) clusterDir() string { return filepath.Join(k.workDir(), "clusters", k.o.Name) }

func (k *kwok) Kubeconfig() string { return filepath.Join(k.clusterDir(), "kubeconfig.yaml") }

var kwokBinaries = []string{"kwokctl", "kwok", "etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubectl"}

func (k *kwok) Preflight(context.Context) error {
	return requireBinaries(k.o.BinDir, kwokBinaries...)
}

// kwokctl runs kwokctl on this provider's work directory. It never touches
// the user's ~/.kube/config: the cluster's kubeconfig stays in its directory.
func (k *kwok) kwokctl(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(k.o.BinDir, "kwokctl"), args...)
	cmd.Env = append(os.Environ(),
		"KWOK_WORKDIR="+k.workDir(),
		// kwokctl looks for kubectl on PATH; make it find the pinned one.
		"PATH="+k.o.BinDir+string(os.PathListSeparator)+os.Getenv("PATH"),
	)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if err != nil {
		return out.String(), fmt.Errorf("kwokctl %s: %w\n%s", strings.Join(args, " "), err, strings.TrimSpace(out.String()))
	}
	return out.String(), nil
}

func (k *kwok) Exists(ctx context.Context) (bool, error) {
	if _, err := os.Stat(k.clusterDir()); os.IsNotExist(err) {
		return false, nil
	}
	out, err := k.kwokctl(ctx, "get", "clusters")
	if err != nil {
		return false, err
	}
	for _, line := range strings.Fields(out) {
		if line == k.o.Name {
			return true, nil
		}
	}
	return false, nil
}

func (k *kwok) Up(ctx context.Context) error {
	if err := k.Preflight(ctx); err != nil {
		return err
	}
	start := time.Now()
	exists, err := k.Exists(ctx)
	if err != nil {
		return err
	}
	bin := func(n string) string { return filepath.Join(k.o.BinDir, n) }
	if exists {
		// Its processes may be gone (a reboot, a killed shell): start is a
		// no-op for the ones still running, and starts the others on the
		// ports the cluster's configuration names.
		progress(k.o.Log, start, "kwok cluster %q exists: making sure it runs", k.o.Name)
		if _, err := k.kwokctl(ctx, "start", "cluster", "--name", k.o.Name, "--wait", "2m"); err != nil {
			return fmt.Errorf("%w\n%s", err, k.components())
		}
		if err := k.stayUp(ctx, minUp); err != nil {
			return err
		}
	} else {
		progress(k.o.Log, start, "creating kwok cluster %q (control plane from %s)", k.o.Name, k.o.BinDir)
		config, err := k.writeConfig()
		if err != nil {
			return err
		}
		defer os.Remove(config)
		args := []string{"create", "cluster",
			"--config", config,
			"--name", k.o.Name,
			"--runtime", "binary",
			"--kubeconfig", "", // leave ~/.kube/config alone
			"--kube-apiserver-binary", bin("kube-apiserver"),
			"--kube-controller-manager-binary", bin("kube-controller-manager"),
			"--kube-scheduler-binary", bin("kube-scheduler"),
			"--etcd-binary", bin("etcd"),
			"--kwok-controller-binary", bin("kwok"),
			"--wait", "2m",
		}
		if k.o.KubeSchedulerConfig != "" {
			args = append(args, "--kube-scheduler-config", k.o.KubeSchedulerConfig)
		}
		if _, err := k.kwokctl(ctx, args...); err != nil {
			return fmt.Errorf("%w\n%s", err, k.components())
		}
		progress(k.o.Log, start, "control plane is up")
		if err := ForgetDiscovery(k.Kubeconfig()); err != nil {
			return err
		}
	}
	// From here on, a controller-manager or scheduler that exits is started
	// again, as a kubelet would.
	defer k.supervise(ctx, start)()
	if k.o.Nodes > 0 {
		args := []string{"scale", "node", "--name", k.o.Name, "--replicas", strconv.Itoa(k.o.Nodes)}
		if k.o.NodePods > 0 {
			// kwok's node template reads the pods a node takes from here
			// (capacity and allocatable); nodes that exist keep theirs.
			args = append(args, "--param", ".allocatable.pods="+strconv.Itoa(k.o.NodePods))
		}
		if _, err := k.kwokctl(ctx, args...); err != nil {
			return err
		}
	}
	if err := WaitForNodes(ctx, k.Kubeconfig(), k.o.Nodes, 2*time.Minute, k.o.Log); err != nil {
		return fmt.Errorf("kwok cluster %q: %w; %s", k.o.Name, err, k.components())
	}
	// Pods can be created only once the default ServiceAccount exists. A
	// new controller-manager on a busy 2-core machine has taken over a minute.
	if err := WaitForDefaultServiceAccount(ctx, k.Kubeconfig(), 3*time.Minute); err != nil {
		return fmt.Errorf("kwok cluster %q: %w; %s", k.o.Name, err, k.components())
	}
	progress(k.o.Log, start, "kwok cluster %q is ready; kubeconfig: %s", k.o.Name, k.Kubeconfig())
	return nil
}

func (k *kwok) Down(ctx context.Context) error {
	exists, err := k.Exists(ctx)
	if err != nil {
		return err
	}
	if exists {
		start := time.Now()
		pids := k.pids()
		if _, err := k.kwokctl(ctx, "delete", "cluster", "--name", k.o.Name); err != nil {
			return err
		}
		// kwokctl signals the components and returns; wait until they are
		// gone, so that their ports are free when Down returns.
		if err := waitForExit(ctx, pids, 30*time.Second); err != nil {
			return err
		}
		progress(k.o.Log, start, "deleted kwok cluster %q; its %d processes have exited", k.o.Name, len(pids))
	}
	// kwokctl leaves the empty clusters directory behind.
	removeEmptyDirs(filepath.Join(k.workDir(), "clusters"), k.o.WorkDir)
	return nil
}

// kwokctlConfig is a new cluster's configuration. It binds every component
// kwokctl starts (etcd, the API server, the controller-manager, the scheduler
// and kwok) to the loopback interface: kwokctl's default is 0.0.0.0, and etcd
// then serves plain HTTP with no authentication to anyone on the same
// network (at a workshop on shared Wi-Fi, anyone could read and write a
// learner's cluster). And it gives each of them its port, one this process
// found free: left to choose, kwokctl takes the first free port counting down
// from 32766, so two clusters created at the same moment (two terminals, or
// make test's lanes side by side) would choose the same ones, and the
// components that bind second would fail. These are all the ports the binary
// runtime binds: etcd's client and peer ports, the API server's, the
// controller-manager's, the scheduler's and kwok's.
const kwokctlConfig = `apiVersion: config.kwok.x-k8s.io/v1alpha1
kind: KwokctlConfiguration
options:
  bindAddress: 127.0.0.1
  etcdPort: %d
  etcdPeerPort: %d
  kubeApiserverPort: %d
  kubeControllerManagerPort: %d
  kubeSchedulerPort: %d
  kwokControllerPort: %d
`

// writeConfig writes kwokctlConfig, with free ports, into a file of its own
// in the work directory and returns its path. kwokctl copies it into the
// cluster's own configuration (kwok.yaml in the cluster's directory), which
// `kwokctl start cluster` reads again: a cluster started again listens on the
// ports it was created with.
func (k *kwok) writeConfig() (string, error) {
	if err := os.MkdirAll(k.workDir(), 0o755); err != nil {
		return "", err
	}
	ports, err := process.FreePorts(6)
	if err != nil {
		return "", err
	}
	f, err := os.CreateTemp(k.workDir(), k.o.Name+"-*.yaml")
	if err != nil {
		return "", err
	}
	_, err = fmt.Fprintf(f, kwokctlConfig, ports[0], ports[1], ports[2], ports[3], ports[4], ports[5])
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return f.Name(), err
}

// ProcessIDs implements Processes.
func (k *kwok) ProcessIDs() map[string]int { return k.pids() }

// pids reads the process IDs kwokctl recorded for the cluster's components.
func (k *kwok) pids() map[string]int {
	pids := map[string]int{}
	files, _ := filepath.Glob(filepath.Join(k.clusterDir(), "pids", "*.pid"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			pids[strings.TrimSuffix(filepath.Base(f), ".pid")] = pid
		}
	}
	return pids
}

// minUp is how long the components of a cluster started again must keep
// running before Up counts them as up (Deployments' minReadySeconds, for
// processes). The API server answers first; kwok-controller binds its port
// only once it has listed the nodes, about a second later.
const minUp = 5 * time.Second

// stayUp fails, naming the component and the end of its log, if one of the
// cluster's processes exits within d: one that could not bind its port, still
// held by a process `kwokctl stop` signalled but did not wait for, would
// otherwise leave a cluster that half works.
func (k *kwok) stayUp(ctx context.Context, d time.Duration) error {
	pids := k.pids()
	for deadline := time.Now().Add(d); time.Now().Before(deadline); {
		for name, pid := range pids {
			if syscall.Kill(pid, 0) != nil {
				return fmt.Errorf("kwok cluster %q: %s did not start; %s", k.o.Name, name, k.components())
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
	return nil
}

// waitForExit waits until none of the processes is alive.
func waitForExit(ctx context.Context, pids map[string]int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		var alive []string
		for name, pid := range pids {
			// Signal 0 checks that the process exists without touching it.
			if syscall.Kill(pid, 0) == nil {
				alive = append(alive, fmt.Sprintf("%s (pid %d)", name, pid))
			}
		}
		if len(alive) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("after %s these kwok cluster processes are still running: %s", timeout, strings.Join(alive, ", "))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// removeEmptyDirs removes dir and then its parents, up to and including top,
// while they are empty.
func removeEmptyDirs(dir, top string) {
	for strings.HasPrefix(dir, top) && os.Remove(dir) == nil && dir != top {
		dir = filepath.Dir(dir)
	}
}

// StopControlPlane kills the cluster's API server, as a crash or an outage
// would (SIGKILL: a graceful stop drains watches for a minute): clients see
// their connections cut, then refused until StartControlPlane. etcd, the
// controller-manager, the scheduler and kwok keep running and must reconnect,
// like every other client.
func (k *kwok) StopControlPlane(ctx context.Context) error {
	// Note how kwokctl started each process, to start them the same way. A
	// process that is not running keeps what an earlier outage noted.
	if k.stopped == nil {
		k.stopped = map[string]*exec.Cmd{}
	}
	pids := k.pids()
	for name, pid := range pids {
		cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil {
			if name == "kube-apiserver" {
				return fmt.Errorf("kwok: the API server (pid %d) is not running: %w", pid, err)
			}
			continue
		}
		environ, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		dir, _ := os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid))
		k.stopped[name] = &exec.Cmd{
			Args: strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00"),
			Env:  strings.Split(strings.TrimRight(string(environ), "\x00"), "\x00"), Dir: dir,
		}
	}
	pid, ok := pids["kube-apiserver"]
	if !ok {
		return fmt.Errorf("kwok: no pid file for the API server in %s", filepath.Join(k.clusterDir(), "pids"))
	}
	k.outage = time.Now()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return fmt.Errorf("kwok: stopping the API server (pid %d): %w", pid, err)
	}
	if err := waitForExit(ctx, map[string]int{"kube-apiserver": pid}, 30*time.Second); err != nil {
		return err
	}
	progress(k.o.Log, k.outage, "stopped the API server of kwok cluster %q (pid %d)", k.o.Name, pid)
	return nil
}

// supervised are the components that exit, by design, when the API server
// does not answer well enough: the controller-manager when /healthz is not
// ok within 10 seconds of its taking the lead (a new API server on a busy
// 2-core machine has taken longer over its RBAC bootstrap), both when they
// cannot renew their leader Lease. In a cluster the kubelet starts them
// again; kwok has no kubelet for its own components.
var supervised = []string{"kube-controller-manager", "kube-scheduler"}

// maxRestarts is how many times supervise starts one component again; one
// that keeps exiting has a cause a restart does not mend (a port another
// process holds), and the wait that follows names it.
const maxRestarts = 3

// supervise starts again, with `kwokctl start cluster` (which starts the
// cluster's processes that are not running, on their configured ports), a
// supervised component that has exited, until the returned func is called.
// Each restart is a retry: it is logged and recorded (e2e/retries), so that
// make test's summary names it.
func (k *kwok) supervise(ctx context.Context, start time.Time) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		restarts := map[string]int{}
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
			pids := k.pids()
			var exited []string
			for _, name := range supervised {
				if pid, ok := pids[name]; ok && syscall.Kill(pid, 0) != nil && restarts[name] < maxRestarts {
					restarts[name]++
					exited = append(exited, name)
					what := fmt.Sprintf("kwok cluster %q: %s exited (%s); started again, time %d", k.o.Name, name, lastWords(filepath.Join(k.clusterDir(), "logs", name+".log")), restarts[name])
					progress(k.o.Log, start, "%s", what)
					if err := retries.Record("e2e/cluster", what); err != nil {
						progress(k.o.Log, start, "%v", err)
					}
				}
			}
			if len(exited) > 0 {
				if _, err := k.kwokctl(ctx, "start", "cluster", "--name", k.o.Name); err != nil && ctx.Err() == nil {
					progress(k.o.Log, start, "starting %s again: %v", strings.Join(exited, " and "), err)
				}
			}
		}
	}()
	return func() { cancel(); <-done }
}

// lastWords is the last error a component logged (klog's lines that begin
// with E), or else its last line, cut to 300 bytes: why it exited.
func lastWords(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	line := lines[len(lines)-1]
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.HasPrefix(lines[i], "E") {
			line = lines[i]
			break
		}
	}
	if len(line) > 300 {
		line = line[:300] + "..."
	}
	return line
}

// renewDeadline is how long the controller-manager and the scheduler keep
// their leader Leases without the API server before they exit.
const renewDeadline = 10 * time.Second

// StartControlPlane starts the API server StopControlPlane stopped, with the
// same command line. A long outage makes the controller-manager and the
// scheduler exit (they lose their leader Leases); in a real cluster the
// kubelet restarts them, here this does: once they have had the time to give
// up, any that did is started again. It returns when the API server is ready
// (/readyz: it answers before it serves the CRDs' resources) and the nodes
// are Ready.
func (k *kwok) StartControlPlane(ctx context.Context) error {
	if k.stopped["kube-apiserver"] == nil {
		return fmt.Errorf("kwok: StartControlPlane without StopControlPlane")
	}
	start := time.Now()
	if err := k.restart("kube-apiserver"); err != nil {
		return err
	}
	if err := WaitForReady(ctx, k.Kubeconfig(), 2*time.Minute, k.o.Log); err != nil {
		return err
	}
	if err := WaitForNodes(ctx, k.Kubeconfig(), k.o.Nodes, 2*time.Minute, k.o.Log); err != nil {
		return err
	}
	select {
	// They give up renewDeadline after their last renewal, which came at
	// most a retry period (2 s) before the outage: allow for both, and a margin.
	case <-time.After(time.Until(k.outage.Add(renewDeadline + 5*time.Second))):
	case <-ctx.Done():
		return ctx.Err()
	}
	pids := k.pids()
	for name := range k.stopped {
		switch {
		case name == "kube-apiserver":
			continue
		case syscall.Kill(pids[name], 0) == nil:
			continue
		default:
			progress(k.o.Log, start, "%s exited during the outage: starting it again, as its supervisor would", name)
		}
		if err := k.restart(name); err != nil {
			return err
		}
	}
	progress(k.o.Log, start, "the API server of kwok cluster %q is back", k.o.Name)
	return nil
}

// restart starts a process StopControlPlane noted, in its own session as
// kwokctl starts them (it outlives this process, and `kwokctl delete
// cluster` finds it through its pid file).
func (k *kwok) restart(name string) error {
	c := k.stopped[name]
	logFile, err := os.OpenFile(filepath.Join(k.clusterDir(), "logs", name+".log"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer logFile.Close()
	cmd := exec.Command(c.Args[0], c.Args[1:]...)
	cmd.Env, cmd.Dir = c.Env, c.Dir
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("kwok: starting %s again: %w", name, err)
	}
	go func() { _ = cmd.Wait() }()
	return os.WriteFile(filepath.Join(k.clusterDir(), "pids", name+".pid"), []byte(strconv.Itoa(cmd.Process.Pid)), 0o644)
}

// components says which of the cluster's processes have exited, with the
// end of each one's log; when all run, the end of the controller-manager's,
// which makes the default ServiceAccount. It explains a cluster that came up
// but does not work.
func (k *kwok) components() string {
	var dead, names []string
	pids := k.pids()
	for name := range pids {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if syscall.Kill(pids[name], 0) != nil {
			dead = append(dead, name)
		}
	}
	var b strings.Builder
	show := dead
	if len(dead) == 0 {
		fmt.Fprintf(&b, "its %d processes (%s) are running", len(names), strings.Join(names, ", "))
		show = []string{"kube-controller-manager"}
	} else {
		fmt.Fprintf(&b, "these of its processes have exited: %s", strings.Join(dead, ", "))
	}
	for _, name := range show {
		p := filepath.Join(k.clusterDir(), "logs", name+".log")
		fmt.Fprintf(&b, "\nthe end of %s:\n%s", p, tail(p, 10))
	}
	return b.String()
}

// tail returns the last n lines of a file, indented.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "    (" + err.Error() + ")"
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "    " + strings.Join(lines, "\n    ")
}
