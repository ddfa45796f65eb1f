package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/yaml"

	"example.com/k8s-demo/e2e/cluster"
	"example.com/k8s-demo/e2e/process"
)

// bench holds what every run shares: the cluster and the built binaries.
type bench struct {
	root string
	cfg  *rest.Config // the bench's own client: no rate limit
	dyn  dynamic.Interface
	kube kubernetes.Interface
	// kubeconfig is the cluster's, for kubectl.
	kubeconfig string
	// freshOptions, with -cluster=fresh, make each run's cluster; fresh is
	// the one up, freshCRDs what was applied to it as it was made, and
	// clusters counts them.
	freshOptions *cluster.Options
	fresh        cluster.Provider
	freshCRDs    []string
	clusters     int
	// next is the next run's cluster, being made while this run finishes;
	// nextCRDs are what it gets, and nil when no run follows this one.
	next     *pendingCluster
	nextCRDs []string
	kubectl  string
	work     string // .cache/bench
	timeout  time.Duration
	log      io.Writer
	seq      int
	// otherPods: pods of no controller, created in each run's namespace
	// before the controller starts.
	otherPods int
	// workers: how many objects every controller reconciles at once.
	workers int

	builds process.Builds
}

// result is one run: one implementation, N objects, one QPS setting.
type result struct {
	Impl     string
	Kind     string
	N        int
	QPS      qpsSetting
	Converge time.Duration // from the first object seen to the last converged
	P50, P99 time.Duration // per object: seen → converged
	Requests requestCounts // the controller's (or the loop's), watches apart
	PeakRSS  uint64        // bytes
	PeakAnon uint64        // bytes, sampled (process.PeakAnon)
	CPU      time.Duration // user + system
	Startup  time.Duration // exec to the log line that says its workers run; 0 for the plain loop
	StartRSS uint64        // bytes: the high-water mark before the first of the N objects
	StartCPU time.Duration // user + system before the first of the N objects
	Deleted  time.Duration // Networks only: delete all → all gone from the backend
	// Cluster is the CPU time each of the cluster's components spent over
	// the same span as Requests (kwok clusters only).
	Cluster map[string]time.Duration
	// Compressed counts the responses the API server compressed for the
	// process, over the whole run, its watches included (countingProxy).
	Compressed requestCounts
	// FailedConversions counts, by CRD, the API server's calls to a
	// conversion webhook that failed during the run.
	FailedConversions requestCounts
}

func (b *bench) logf(format string, args ...any) {
	fmt.Fprintf(b.log, "bench: "+format+"\n", args...)
}

// build compiles a controller the way a reader would (GOWORK=off, in its
// module), once per bench, into .cache/bench/bin.
func (b *bench) build(module, pkg, name string) (string, error) {
	return b.builds.Build(filepath.Join(b.root, module), pkg, filepath.Join(b.work, "bin", module, name), b.logf)
}

// kubectlApply applies files to the cluster of kubeconfig and waits until
// the CRDs among them are established. A CRD goes with no conversion
// webhook (withoutWebhook): the files, so changed, reach kubectl on its
// standard input.
func (b *bench) kubectlApply(kubeconfig string, files ...string) error {
	docs := make([][]byte, len(files))
	for i, f := range files {
		doc, err := b.withoutWebhook(f)
		if err != nil {
			return err
		}
		docs[i] = doc
	}
	manifest := bytes.Join(docs, []byte("\n---\n"))
	for _, verb := range [][]string{{"apply"}, {"wait", cluster.WaitEstablished, "--timeout=60s"}} {
		args := append([]string{"--kubeconfig", kubeconfig}, verb...)
		cmd := exec.Command(b.kubectl, append(args, "-f", "-")...)
		cmd.Stdin = bytes.NewReader(manifest)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("kubectl %s -f - (%s): %v\n%s", strings.Join(args, " "), strings.Join(files, ", "), err, out)
		}
	}
	return nil
}

// withoutWebhook reads file (relative to the repository's root), and makes
// a CRD in it convert between its versions with strategy None. The bench
// runs no conversion webhook, and the scaffolds' config/crd/bases, which it
// installs as `make install` does, name none; crd-demo's CRD names its
// controller's. A CRD whose webhook cannot be reached costs the API server
// while nobody reads the other version: the watch cache of each served
// version converts every stored object, fails, and lists them all from etcd
// again (docs/bench.md, "What is measured, and how").
func (b *bench) withoutWebhook(file string) ([]byte, error) {
	raw, err := os.ReadFile(filepath.Join(b.root, file))
	if err != nil {
		return nil, err
	}
	var obj map[string]any
	if err := yaml.Unmarshal(raw, &obj); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	u := unstructured.Unstructured{Object: obj}
	if u.GetKind() != "CustomResourceDefinition" {
		return raw, nil
	}
	if strategy, _, _ := unstructured.NestedString(obj, "spec", "conversion", "strategy"); strategy != "Webhook" {
		return raw, nil
	}
	if err := unstructured.SetNestedMap(obj, map[string]any{"strategy": "None"}, "spec", "conversion"); err != nil {
		return nil, err
	}
	return yaml.Marshal(obj)
}

// failedConversions reads the API server's metrics: how many of its calls
// to a CRD's conversion webhook failed, by CRD (a counter since the API
// server started).
func (b *bench) failedConversions(ctx context.Context) (map[string]int, error) {
	raw, err := b.kube.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the API server's metrics: %w", err)
	}
	return conversionFailures(bytes.NewReader(raw))
}

// conversionFailures picks the failed calls out of the API server's
// metrics (Prometheus' text format), by CRD: the count of the histogram of
// the calls' durations, with succeeded="false".
func conversionFailures(metrics io.Reader) (map[string]int, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(metrics)
	if err != nil {
		return nil, fmt.Errorf("parsing the API server's metrics: %w", err)
	}
	failed := map[string]int{}
	for _, m := range families["apiserver_crd_conversion_webhook_duration_seconds"].GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if n := m.GetHistogram().GetSampleCount(); labels["succeeded"] == "false" && n > 0 {
			failed[labels["crd_name"]] += int(n)
		}
	}
	return failed, nil
}

// startController builds im's controller and runs it on the stage's
// namespace, through the stage's counting proxy.
func (b *bench) startController(st *stage, im implementation, q qpsSetting, backendURL string) (*process.Process, error) {
	bin, err := b.build(im.ctrl.Dir, im.ctrl.Pkg, im.ctrl.Binary)
	if err != nil {
		return nil, err
	}
	return process.Start(process.Spec{Name: im.name, Path: bin, Args: im.args(st.ns, q, b.workers, backendURL),
		Env: append([]string{"KUBECONFIG=" + st.kubeconfig}, im.ctrl.Env...), LogFile: filepath.Join(st.dir, "controller.log")})
}

// tail is the end of the process's log, for error messages.
func tail(p *process.Process) string {
	return p.Spec.Name + " log (" + p.Spec.LogFile + "), last lines:\n  " + strings.ReplaceAll(p.Tail(15), "\n", "\n  ")
}

// usage reads the process's peak RSS and CPU time from /proc while it runs.
func usage(p *process.Process) (rss uint64, cpu time.Duration, err error) {
	if rss, err = p.PeakRSS(); err != nil {
		return 0, 0, err
	}
	cpu, err = procCPU(p.Pid())
	return rss, cpu, err
}

// procCPU reads a process's user and system time from /proc.
func procCPU(pid int) (time.Duration, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The fields after the command name's closing parenthesis: state is the
	// first, utime the 12th and stime the 13th, in clock ticks (100 a second).
	f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond, nil
}

// clusterCPU reads the CPU time each of the cluster's components has spent
// so far: nil for a cluster that is not processes on this machine.
func (b *bench) clusterCPU() (map[string]time.Duration, error) {
	p, ok := b.fresh.(cluster.Processes)
	if !ok {
		return nil, nil
	}
	cpu := map[string]time.Duration{}
	for name, pid := range p.ProcessIDs() {
		d, err := procCPU(pid)
		if err != nil {
			return nil, fmt.Errorf("the cluster's %s: %w", name, err)
		}
		cpu[name] = d
	}
	return cpu, nil
}

// tracker watches the run's objects, as a reader with `kubectl get -w`
// would, and notes when each was first seen and first converged.
type tracker struct {
	mu        sync.Mutex
	seen      map[string]time.Time
	converged map[string]time.Time
	last      map[string]*unstructured.Unstructured
	changed   chan struct{}
	ignored   string // the warm-up object's name
}

// ignore leaves the object of this name, not yet created, out of every figure.
func (t *tracker) ignore(name string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.ignored = name
}

func (b *bench) track(ctx context.Context, k kind, ns string) (*tracker, error) {
	t := &tracker{seen: map[string]time.Time{}, converged: map[string]time.Time{},
		last: map[string]*unstructured.Unstructured{}, changed: make(chan struct{}, 1)}
	f := dynamicinformer.NewFilteredDynamicSharedInformerFactory(b.dyn, 0, ns, nil)
	inf := f.ForResource(k.gvr).Informer()
	observe := func(obj any) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return
		}
		now := time.Now()
		t.mu.Lock()
		if u.GetName() == t.ignored {
			t.mu.Unlock()
			return
		}
		if _, ok := t.seen[u.GetName()]; !ok {
			t.seen[u.GetName()] = now
		}
		t.last[u.GetName()] = u
		if _, ok := t.converged[u.GetName()]; !ok && k.converged(u) {
			t.converged[u.GetName()] = now
		}
		t.mu.Unlock()
		select {
		case t.changed <- struct{}{}:
		default:
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    observe,
		UpdateFunc: func(_, obj any) { observe(obj) },
	}); err != nil {
		return nil, err
	}
	f.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return nil, errors.New("the bench's own watch did not sync")
	}
	return t, nil
}

func (t *tracker) counts() (seen, converged int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.seen), len(t.converged)
}

// waitConverged waits until n objects have converged, or says which have not.
func (t *tracker) waitConverged(ctx context.Context, n int, timeout time.Duration, progress func(seen, conv int), p *process.Process) error {
	deadline := time.After(timeout)
	tick := time.NewTicker(5 * time.Second)
	defer tick.Stop()
	for {
		seen, conv := t.counts()
		if conv >= n {
			return nil
		}
		if p != nil && !p.Running() {
			return fmt.Errorf("%s exited (%v) with %d of %d converged\n%s", p.Spec.Name, p.ExitErr(), conv, n, tail(p))
		}
		select {
		case <-t.changed:
		case <-tick.C:
			progress(seen, conv)
		case <-deadline:
			return fmt.Errorf("after %s, %d of %d objects converged (%d seen); one that did not: %s", timeout, conv, n, seen, t.oneNotConverged())
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (t *tracker) oneNotConverged() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	for name, u := range t.last {
		if _, ok := t.converged[name]; !ok {
			status, _, _ := unstructured.NestedFieldNoCopy(u.Object, "status")
			return fmt.Sprintf("%s (generation %d, status %v)", name, u.GetGeneration(), status)
		}
	}
	return "(none seen)"
}

// latencies: the total time, from the first object seen to the last
// converged, and each object's own time from seen to converged.
func (t *tracker) latencies() (total time.Duration, each []time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var first, last time.Time
	for name, c := range t.converged {
		s := t.seen[name]
		each = append(each, c.Sub(s))
		if first.IsZero() || s.Before(first) {
			first = s
		}
		if c.After(last) {
			last = c
		}
	}
	slices.Sort(each)
	return last.Sub(first), each
}

// writeTimes writes each object's times, from the first object seen, in the
// order they converged: what a run's tail is made of.
func (t *tracker) writeTimes(path string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	var first time.Time
	names := make([]string, 0, len(t.converged))
	for name := range t.converged {
		names = append(names, name)
		if s := t.seen[name]; first.IsZero() || s.Before(first) {
			first = s
		}
	}
	slices.SortFunc(names, func(a, b string) int { return t.converged[a].Compare(t.converged[b]) })
	var buf strings.Builder
	buf.WriteString("name\tseen\tconverged\n")
	for _, name := range names {
		fmt.Fprintf(&buf, "%s\t%.3f\t%.3f\n", name, t.seen[name].Sub(first).Seconds(), t.converged[name].Sub(first).Seconds())
	}
	return os.WriteFile(path, []byte(buf.String()), 0o644)
}

func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted))*p+0.999999) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// stage is what a run stands on: the CRDs, a namespace of its own, and a
// counting proxy with a kubeconfig that goes through it.
type stage struct {
	b          *bench
	ns, dir    string
	proxy      *countingProxy
	kubeconfig string
}

func (b *bench) setUp(ctx context.Context, im implementation, label string) (*stage, error) {
	if err := b.clusterUp(ctx); err != nil {
		return nil, err
	}
	b.seq++
	st := &stage{b: b, ns: fmt.Sprintf("bench-%d-%s-%s", b.seq, slug(im.name), label)}
	st.dir = filepath.Join(b.work, st.ns)
	// An earlier bench left a run of the same name here: the logs, which
	// the processes append to, start empty.
	if err := os.RemoveAll(st.dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(st.dir, 0o755); err != nil {
		return nil, err
	}
	if !slices.Equal(b.freshCRDs, im.crds) {
		if err := b.kubectlApply(b.kubeconfig, im.crds...); err != nil {
			return nil, err
		}
	}
	if _, err := b.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: st.ns}}, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	var err error
	if st.proxy, err = startCountingProxy(b.cfg); err != nil {
		return st, errors.Join(err, b.cleanup(ctx, st.ns))
	}
	st.kubeconfig = filepath.Join(st.dir, "kubeconfig")
	if err := st.proxy.WriteKubeconfig(st.kubeconfig); err != nil {
		return st, errors.Join(err, st.tearDown(ctx))
	}
	return st, nil
}

func (st *stage) tearDown(ctx context.Context) error {
	if st.proxy != nil {
		st.proxy.Close()
	}
	if st.b.freshOptions != nil {
		// The whole cluster goes: much sooner than a namespace of
		// thousands of pods and events.
		return st.b.clusterDown(ctx)
	}
	return st.b.cleanup(context.WithoutCancel(ctx), st.ns)
}

// run measures one implementation on n objects at one QPS setting.
func (b *bench) run(ctx context.Context, im implementation, n int, q qpsSetting) (res result, err error) {
	res = result{Impl: im.name, Kind: im.kind.name, N: n, QPS: q}
	b.seq++
	b.logf("%s: %d %ss, QPS %s", im.name, n, im.kind.name, q)
	st, err := b.setUp(ctx, im, strconv.Itoa(n))
	if err != nil {
		return res, err
	}
	defer func() {
		if cerr := st.tearDown(ctx); cerr != nil && err == nil {
			err = cerr
		}
	}()
	ns, dir, proxy, kc := st.ns, st.dir, st.proxy, st.kubeconfig

	var backendURL string
	if im.needsBackend {
		backend, url, err := b.startBackend(dir)
		if err != nil {
			return res, err
		}
		defer func() { _ = backend.Stop() }()
		backendURL = url
	}

	if err := b.createOtherPods(ctx, ns); err != nil {
		return res, err
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	t, err := b.track(runCtx, im.kind, ns)
	if err != nil {
		return res, err
	}

	var p *process.Process
	var before map[string]int
	// What the cluster's components spend is counted over the requests'
	// span: from just before the first object to the controller gone quiet.
	clusterBefore, err := b.clusterCPU()
	if err != nil {
		return res, err
	}
	conversionsBefore, err := b.failedConversions(ctx)
	if err != nil {
		return res, err
	}
	if im.baseline {
		self, err := os.Executable()
		if err != nil {
			return res, err
		}
		args := []string{"-baseline", "-kind=" + im.kind.name, "-n=" + strconv.Itoa(n), "-workers=" + strconv.Itoa(b.workers), "-namespace=" + ns,
			"-baseline-qps=" + strconv.FormatFloat(q.QPS, 'f', -1, 64), "-baseline-burst=" + strconv.Itoa(q.Burst), "-backend-url=" + backendURL,
			"-objects-kubeconfig=" + b.kubeconfig, "-loop-writes=" + im.loopWrites}
		if p, err = process.Start(process.Spec{Name: im.name, Path: self, Args: args, Env: []string{"KUBECONFIG=" + kc}, LogFile: filepath.Join(dir, "loop.log")}); err != nil {
			return res, err
		}
		// What the loop holds before its first object; then it may go.
		if _, err := p.WaitForLog(ctx, regexp.MustCompile(regexp.QuoteMeta(baselineReady)), time.Minute); err != nil {
			_ = p.Stop()
			return res, fmt.Errorf("the plain loop did not start: %w\n%s", err, tail(p))
		}
		if res.StartRSS, err = p.PeakRSS(); err != nil {
			return res, err
		}
		if res.StartCPU, err = procCPU(p.Pid()); err != nil {
			return res, err
		}
		if err := syscall.Kill(p.Pid(), syscall.SIGUSR1); err != nil {
			return res, err
		}
		before = map[string]int{}
	} else {
		if p, err = b.startController(st, im, q, backendURL); err != nil {
			return res, err
		}
		if res.Startup, err = p.WaitForLog(ctx, im.ctrl.Started, 2*time.Minute); err != nil {
			_ = p.Stop()
			return res, fmt.Errorf("%s did not start: %w\n%s", im.name, err, tail(p))
		}
		// Start the clock on a controller that runs: one object first,
		// converged, and the controller quiet again. Its start-up is not what
		// is measured; and an object created while it starts reaches its
		// queue as part of an informer's initial list, which
		// controller-runtime's priority queue serves after every other event
		// (docs/bench.md, "What is measured, and how").
		if err := b.warmUp(ctx, t, im, ns, n, proxy, p); err != nil {
			_ = p.Stop()
			return res, err
		}
		// What the N objects cost is what the process holds and spends
		// beyond this.
		if res.StartRSS, err = p.PeakRSS(); err != nil {
			return res, err
		}
		if res.StartCPU, err = procCPU(p.Pid()); err != nil {
			return res, err
		}
		before = proxy.Snapshot()
		if clusterBefore, err = b.clusterCPU(); err != nil {
			return res, err
		}
		if conversionsBefore, err = b.failedConversions(ctx); err != nil {
			return res, err
		}
		if err := b.createAll(ctx, im.kind, ns, n); err != nil {
			return res, err
		}
	}
	defer func() { _ = p.Stop() }()
	stopAnon := process.PeakAnon(p.Pid(), 100*time.Millisecond)
	defer stopAnon()

	if err := t.waitConverged(ctx, n, b.timeout, func(seen, conv int) {
		b.logf("  %s: %d of %d converged (%d seen)", im.name, conv, n, seen)
	}, p); err != nil {
		return res, fmt.Errorf("%s: %w\n%s", im.name, err, tail(p))
	}
	res.Converge, _ = t.latencies()
	_, each := t.latencies()
	if err := t.writeTimes(filepath.Join(dir, "objects.tsv")); err != nil {
		return res, err
	}
	res.P50, res.P99 = percentile(each, 0.50), percentile(each, 0.99)
	if !im.needsBackend {
		// The times are taken: the next run's cluster can start while this
		// run counts its last requests and goes (a Network run still times
		// its deletions, below).
		b.prepareNext(ctx)
	}

	// Count what the controller still does once every object has converged
	// (the events its own writes cause): wait until it goes quiet.
	waitQuiet(proxy, p)
	res.Requests = diffCounts(proxy.Snapshot(), before)
	res.Compressed = proxy.Compressed()
	conversionsAfter, err := b.failedConversions(ctx)
	if err != nil {
		return res, err
	}
	res.FailedConversions = diffCounts(conversionsAfter, conversionsBefore)
	clusterAfter, err := b.clusterCPU()
	if err != nil {
		return res, err
	}
	if clusterAfter != nil {
		res.Cluster = map[string]time.Duration{}
		for name, d := range clusterAfter {
			res.Cluster[name] = d - clusterBefore[name]
		}
	}
	if res.PeakRSS, res.CPU, err = usage(p); err != nil {
		return res, fmt.Errorf("reading %s's usage: %w", im.name, err)
	}
	res.PeakAnon = stopAnon()

	if want := im.kind.pods * n; want > 0 {
		pods, err := b.kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "!" + otherPodLabel})
		if err != nil {
			return res, err
		}
		if !im.baseline {
			want += im.kind.pods // the warm-up object's
		}
		if len(pods.Items) != want {
			return res, fmt.Errorf("%s: %d %ss of %d pods converged, but the namespace holds %d pods, not %d", im.name, n, im.kind.name, im.kind.pods, len(pods.Items), want)
		}
	}
	if im.needsBackend {
		// Deletions must reach the backend: delete every Network and wait
		// until the backend holds none (the controller's finalizer at work;
		// the plain loop deletes them itself).
		start := time.Now()
		if err := b.deleteNetworks(ctx, ns, backendURL, im.baseline, p); err != nil {
			return res, err
		}
		res.Deleted = time.Since(start)
		b.prepareNext(ctx)
	}
	b.logf("  %s: %d converged in %s (p50 %s, p99 %s), %d requests (%d writes), peak RSS %.1f MB (anonymous %.1f MB), CPU %s",
		im.name, n, res.Converge.Round(time.Millisecond), res.P50.Round(time.Millisecond), res.P99.Round(time.Millisecond),
		res.Requests.Total(), res.Requests.Writes(), float64(res.PeakRSS)/1e6, float64(res.PeakAnon)/1e6, res.CPU)
	b.logf("    requests: %s", res.Requests)
	if len(res.Compressed) > 0 {
		// Asked for by the process (Go's HTTP client asks unless its
		// transport says not to): CPU on both sides, for each event.
		b.logf("    responses the API server compressed: %s", res.Compressed)
	}
	if len(res.FailedConversions) > 0 {
		// The watch cache of the version it could not convert to lists
		// every object from etcd again, and fails again.
		b.logf("    the API server's calls to a conversion webhook that failed: %s", res.FailedConversions)
	}
	if res.Cluster != nil {
		b.logf("    the cluster's CPU: %s", clusterCPUString(res.Cluster))
	}
	return res, nil
}

// warmUp creates one object more than the run's n, waits until the
// controller has converged it and gone quiet, and forgets it: the run's
// objects meet a controller whose informers are in sync and whose event
// handlers are registered.
func (b *bench) warmUp(ctx context.Context, t *tracker, im implementation, ns string, n int, proxy *countingProxy, p *process.Process) error {
	obj := im.kind.object(n)
	name := obj.GetName()
	t.ignore(name)
	if _, err := b.dyn.Resource(im.kind.gvr).Namespace(ns).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating the warm-up %s: %w", im.kind.name, err)
	}
	var last *unstructured.Unstructured
	if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		if !p.Running() {
			return false, fmt.Errorf("%s exited (%v) before it converged the warm-up %s %s\n%s", im.name, p.ExitErr(), im.kind.name, name, tail(p))
		}
		u, err := b.dyn.Resource(im.kind.gvr).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		last = u
		return im.kind.converged(u), nil
	}); err != nil {
		status := "never read"
		if last != nil {
			st, _, _ := unstructured.NestedFieldNoCopy(last.Object, "status")
			status = fmt.Sprint(st)
		}
		return fmt.Errorf("%s did not converge the warm-up %s %s (status %s): %w\n%s", im.name, im.kind.name, name, status, err, tail(p))
	}
	waitQuiet(proxy, p)
	return nil
}

// waitQuiet returns once the process has sent no request for 2 seconds.
func waitQuiet(proxy *countingProxy, p *process.Process) {
	last, quietSince := proxy.Snapshot(), time.Now()
	for time.Since(quietSince) < 2*time.Second && p.Running() {
		time.Sleep(250 * time.Millisecond)
		now := proxy.Snapshot()
		if diffCounts(now, last).Total() > 0 {
			last, quietSince = now, time.Now()
		}
	}
}

func slug(s string) string {
	s = strings.ToLower(s)
	var b strings.Builder
	for _, r := range s {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else if b.Len() > 0 && !strings.HasSuffix(b.String(), "-") {
			b.WriteByte('-')
		}
	}
	return strings.Trim(b.String(), "-")
}

// createAll creates the objects as fast as the API server takes them.
func (b *bench) createAll(ctx context.Context, k kind, ns string, n int) error {
	jobs := make(chan int)
	errs := make(chan error, 8)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for i := range jobs {
				if _, err := b.dyn.Resource(k.gvr).Namespace(ns).Create(ctx, k.object(i), metav1.CreateOptions{}); err != nil {
					select {
					case errs <- fmt.Errorf("creating %s %d: %w", k.name, i, err):
					default:
					}
				}
			}
		})
	}
	for i := range n {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return nil
	}
}

func (b *bench) startBackend(dir string) (*process.Process, string, error) {
	bin, err := b.build("crd-demo", "./cmd/network-backend", "network-backend")
	if err != nil {
		return nil, "", err
	}
	port, err := process.FreePort()
	if err != nil {
		return nil, "", err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	p, err := process.Start(process.Spec{Name: "network-backend", Path: bin, LogFile: filepath.Join(dir, "backend.log"),
		Args: []string{"--listen=" + addr, "--state-file=" + filepath.Join(dir, "backend.json")}})
	if err != nil {
		return nil, "", err
	}
	url := "http://" + addr
	if err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		r, err := http.Get(url + "/healthz")
		if err != nil {
			return false, nil
		}
		r.Body.Close()
		return r.StatusCode == http.StatusOK, nil
	}); err != nil {
		_ = p.Stop()
		return nil, "", fmt.Errorf("network-backend did not answer on %s: %w\n%s", url, err, tail(p))
	}
	return p, url, nil
}

// cleanup removes a run's namespace at once: its pods are force-deleted
// (kwok's fake kubelet would otherwise take its time), then the namespace.
func (b *bench) cleanup(ctx context.Context, ns string) error {
	zero := int64(0)
	_ = b.kube.CoreV1().Pods(ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{})
	for _, gvr := range []kind{customPods, podSets, networks} {
		list, err := b.dyn.Resource(gvr.gvr).Namespace(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			continue
		}
		// Whatever is left of a failed run: let it go without its controller.
		for _, u := range list.Items {
			if len(u.GetFinalizers()) > 0 {
				_, _ = b.dyn.Resource(gvr.gvr).Namespace(ns).Patch(ctx, u.GetName(), types.MergePatchType,
					[]byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
			}
		}
	}
	if err := b.kube.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := b.kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}

// otherPodLabel marks the pods createOtherPods makes.
const otherPodLabel = "bench.k8s-demo/other"

// createOtherPods creates b.otherPods pods that no controller owns, eight
// at a time, with a line of progress every 250.
func (b *bench) createOtherPods(ctx context.Context, ns string) error {
	if b.otherPods == 0 {
		return nil
	}
	b.logf("  creating %d pods of no controller in %s", b.otherPods, ns)
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
		done int
		sem  = make(chan struct{}, 8)
	)
	for i := range b.otherPods {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			pod := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("other-%d", i), Labels: map[string]string{otherPodLabel: "true"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "app", Image: "busybox:1.36", Command: []string{"sleep", "3600"},
				}}},
			}
			_, err := b.kube.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Errorf("creating pod %s: %w", pod.Name, err))
			} else if done++; done%250 == 0 {
				b.logf("  %d of %d created", done, b.otherPods)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
