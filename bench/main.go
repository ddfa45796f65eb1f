// Command bench is `make bench`: it measures the CustomPod controllers of the
// three approaches (crd-demo's client-go controller, kubebuilder-demo and
// operator-demo) and crd-demo's Network controller on one cluster, next to a
// plain client-go loop that makes the same writes with no controller at all.
//
// For each, and each N, it creates N objects (CustomPods of 3 replicas, or
// Networks) and measures the time to full convergence, each object's time
// from creation to converged (p50, p99), the API requests the controller
// made (counted by a proxy in front of the API server), and the controller's
// peak RSS and CPU time. Then the same at each implementation's default
// client-side rate limit and with none, and the articles' scale 1 → 3 → 1.
//
// It prints a markdown table and writes it into docs/bench.md, with a chart
// in docs/bench.png. Run it through `make bench`, which brings up the kwok
// cluster and sets KUBECONFIG.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"example.com/k8s-demo/e2e/cluster"
)

func main() {
	var (
		clusterMode = flag.String("cluster", "fresh", "fresh: a new kwok cluster for each run (CLUSTER_NODES, CLUSTER_NODE_PODS), deleted after it, so that no run inherits what another left in etcd; kubeconfig: the cluster KUBECONFIG points at, for every run, each in a namespace of its own, deleted after it.")
		full        = flag.Bool("full", false, "The full run: N = "+fullSizes+", every implementation (the Network controller too), the table of rate limits and the scale rounds. Flags given as well still apply.")
		repeat      = flag.Int("repeat", 3, "Runs of each implementation and N: the tables show the medians, and the spread of the time to converge.")
		workers     = flag.Int("workers", 2, "Objects each controller reconciles at once: crd-demo's --workers, the scaffolds' --max-concurrent-reconciles, the plain loop's goroutines.")
		sizes       = flag.String("n", "1000", "How many objects each run creates: a comma-separated list.")
		qps         = flag.Float64("qps", 100, "The client-side rate limit every controller gets for the main table (requests per second).")
		burst       = flag.Int("burst", 200, "The burst above -qps.")
		qpsN        = flag.Int("qps-n", 0, "N for the table of rate limits (each implementation's default, -qps, none). 0 skips it.")
		only        = flag.String("impl", "", "Run only these implementations (comma-separated names, as in the table). Default: the CustomPod controllers, each controller's code once, and their plain loop (the report names the rest, and why); with -full, all.")
		rounds      = flag.Int("scale-rounds", 0, "Rounds of scale 1 → 3 → 1 per CustomPod controller. 0 skips them.")
		timeout     = flag.Duration("timeout", 10*time.Minute, "How long one run may take to converge.")
		otherPods   = flag.Int("other-pods", 0, "Pods of no controller to create in each run's namespace first, as a shared cluster holds: a controller that caches every pod holds these too.")
		mdPath      = flag.String("md", "docs/bench.md", "The markdown file whose generated section gets the tables (relative to the repository root). Empty: print only.")
		pngPath     = flag.String("png", "docs/bench.png", "The chart to write (relative to the repository root). Empty: none.")
		redraw      = flag.Bool("redraw", false, "Run nothing: write -md's section, comparison's summary (-doc) and -png again from the run's data, -md's name with .json (after a change to how they are written).")
		baseline    = flag.Bool("baseline", false, "Internal: run as the plain client-go loop.")
		kindName    = flag.String("kind", "", "Internal, with -baseline: CustomPod or Network.")
		namespace   = flag.String("namespace", "", "Internal, with -baseline.")
		baseQPS     = flag.Float64("baseline-qps", 5, "Internal, with -baseline.")
		baseBurst   = flag.Int("baseline-burst", 10, "Internal, with -baseline.")
		backendURL  = flag.String("backend-url", "", "Internal, with -baseline.")
		objectsKC   = flag.String("objects-kubeconfig", "", "Internal, with -baseline: the cluster's own kubeconfig, around the counting proxy, for creating the objects.")
		loopWrites  = flag.String("loop-writes", controllerWrites, "Internal, with -baseline: "+controllerWrites+" or "+finalWrites+".")
		curve       = flag.Bool("curve", false, "The growth curve: N = "+curveSizes+" unless -n is given, into docs/bench-curve.md's "+curveSection+" section and docs/bench-curve.png unless -md or -png is given; the default run's pages are left as they are. Needs room for 3 pods a CustomPod: make bench BENCH_NODE_PODS=4000 BENCH_FLAGS=-curve.")
		countsMode  = flag.Bool("counts", false, "Run nothing: count each CustomPod implementation's lines, files, dependencies and binary, and write the table of -doc (no cluster needed).")
		check       = flag.Bool("check", false, "Run nothing, write nothing: fail when a page's generated section is not what the data of its run gives (docs/bench.md's, docs/bench-curve.md's, -doc's summary). With -counts: count again and fail when -doc's table says otherwise.")
		stdout      = flag.Bool("stdout", false, "With -counts: print the table instead of writing it.")
		doc         = flag.String("doc", "docs/comparison.md,docs/zh/comparison.md", "The comparison pages, comma-separated (relative to the repository root): the English page's and its Chinese twin's. The default run writes its summary into their "+summarySection+" section; -counts its table into their compare section. Empty: neither.")
	)
	flag.Parse()
	if *check && !*countsMode {
		var regions []pageRegion
		for _, p := range []struct{ md, section string }{{"docs/bench.md", mainSection}, {"docs/bench-curve.md", curveSection}} {
			data := inRoot(dataPath(p.md))
			if _, err := os.Stat(data); os.IsNotExist(err) && p.section == curveSection {
				// The curve was last measured before runs kept their data.
				fmt.Printf("bench: %s has no data file (%s): its section is not checked\n", p.md, dataPath(p.md))
				continue
			}
			rep, err := readData(data)
			if err != nil {
				fail(1, err)
			}
			regions = append(regions, rep.regions(p.md, p.section, strings.Split(*doc, ","))...)
		}
		if err := checkPages(regions); err != nil {
			fail(1, err)
		}
		fmt.Printf("bench: %d generated sections are what the bench's data give\n", len(regions))
		return
	}
	if *countsMode {
		if rootDir == "" {
			fail(2, fmt.Errorf("run from inside the repository (no versions.env found above the working directory)"))
		}
		var err error
		if *check {
			err = checkCounts(rootDir, strings.Split(*doc, ","))
		} else {
			err = writeCounts(rootDir, strings.Split(*doc, ","), *stdout)
		}
		if err != nil {
			fail(1, err)
		}
		return
	}
	begun := time.Now()
	section := mainSection
	if *curve {
		section = curveSection
		given := map[string]bool{}
		flag.Visit(func(f *flag.Flag) { given[f.Name] = true })
		if !given["n"] {
			_ = flag.Set("n", curveSizes)
		}
		if !given["png"] {
			_ = flag.Set("png", "docs/bench-curve.png")
		}
		if !given["md"] {
			_ = flag.Set("md", "docs/bench-curve.md")
		}
	}
	if *full {
		given := map[string]bool{}
		flag.Visit(func(f *flag.Flag) { given[f.Name] = true })
		for name, value := range map[string]string{"n": fullSizes, "qps-n": "100", "scale-rounds": "5", "impl": "all"} {
			if !given[name] {
				_ = flag.Set(name, value)
			}
		}
	}
	if *baseline {
		n, err := strconv.Atoi(*sizes)
		if err != nil {
			fail(2, fmt.Errorf("-baseline needs one -n, got %q", *sizes))
		}
		if err := runBaseline(*kindName, n, *namespace, qpsSetting{*baseQPS, *baseBurst}, *workers, *backendURL, *objectsKC, *loopWrites); err != nil {
			fmt.Fprintln(os.Stderr, "plain loop:", err)
			os.Exit(1)
		}
		return
	}
	if *redraw {
		if *mdPath == "" {
			fail(2, fmt.Errorf("-redraw needs -md: the page, beside which its run's data are kept"))
		}
		rep, err := readData(inRoot(dataPath(*mdPath)))
		if err != nil {
			fail(1, err)
		}
		if err := writePages(rep, *mdPath, section, strings.Split(*doc, ","), *pngPath); err != nil {
			fail(1, err)
		}
		return
	}
	ns, err := parseSizes(*sizes)
	if err != nil {
		fail(2, err)
	}
	if *clusterMode == "fresh" {
		if err := checkRoom(slices.Max(ns), *otherPods); err != nil {
			fail(2, err)
		}
	}
	if *burst < 1 || *qps == 0 {
		fail(2, fmt.Errorf("-qps must not be 0 and -burst must be at least 1; got %v and %d", *qps, *burst))
	}
	mainQPS := qpsSetting{*qps, *burst}
	if *repeat < 1 || *workers < 1 {
		fail(2, fmt.Errorf("-repeat and -workers must be at least 1; got %d and %d", *repeat, *workers))
	}
	impls, omitted, err := selectImpls(*only)
	if err != nil {
		fail(2, err)
	}

	// Find out now, not after the runs, if the results cannot be written.
	if *mdPath != "" {
		for _, g := range (report{}).regionsToWrite(*mdPath, section, strings.Split(*doc, ",")) {
			if err := replaceGenerated(inRoot(g.page), g.section, "", true); err != nil {
				fail(2, err)
			}
		}
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *clusterMode != "fresh" && *clusterMode != "kubeconfig" {
		fail(2, fmt.Errorf("-cluster: want fresh or kubeconfig, got %q", *clusterMode))
	}
	b, err := newBench(*timeout, *clusterMode == "fresh")
	if err != nil {
		fail(1, err)
	}
	if *otherPods < 0 {
		fail(2, fmt.Errorf("-other-pods must be 0 or more; got %d", *otherPods))
	}
	b.otherPods = *otherPods
	b.workers = *workers
	if err := b.clusterUp(ctx); err != nil {
		fail(1, err)
	}
	env := b.environment(ctx)
	b.logf("%s", env)
	if err := b.preflight(ctx, impls, ns); err != nil {
		b.shutdown(ctx)
		fail(2, err)
	}

	// Every run, in the order they run: each repeat runs every row once, so
	// that a slow spell of the machine spreads over all the rows.
	type planned struct {
		im implementation
		n  int
		q  qpsSetting
	}
	var plan []planned
	for _, im := range impls {
		for _, n := range ns {
			plan = append(plan, planned{im, n, mainQPS})
		}
	}
	if *qpsN > 0 {
		for _, im := range impls {
			for _, q := range []qpsSetting{im.defaultQPS, mainQPS, {QPS: -1, Burst: mainQPS.Burst}} {
				if !slices.ContainsFunc(plan, func(p planned) bool { return p.im.name == im.name && p.n == *qpsN && p.q == q }) {
					plan = append(plan, planned{im, *qpsN, q})
				}
			}
		}
	}
	started := time.Now()
	var runs []result
	for rep := range *repeat {
		for i, p := range plan {
			k := rep*len(plan) + i
			eta := ""
			if k > 0 {
				eta = fmt.Sprintf(", about %s left", (time.Since(started) / time.Duration(k) * time.Duration(len(plan)**repeat-k)).Round(time.Minute))
			}
			b.logf("run %d of %d%s", k+1, len(plan)**repeat, eta)
			b.nextCRDs = nil
			if k+1 < len(plan)**repeat {
				b.nextCRDs = plan[(k+1)%len(plan)].im.crds
			}
			r, err := b.run(ctx, p.im, p.n, p.q)
			if err != nil {
				b.shutdown(ctx)
				fail(1, err)
			}
			runs = append(runs, r)
		}
	}
	all := summarize(runs, implementations)
	var results, qpsResults []summary
	for _, s := range all {
		if s.QPS == mainQPS && slices.Contains(ns, s.N) {
			results = append(results, s)
		}
	}
	if *qpsN > 0 {
		for _, im := range impls {
			for _, q := range []qpsSetting{im.defaultQPS, mainQPS, {QPS: -1, Burst: mainQPS.Burst}} {
				if i := slices.IndexFunc(all, func(s summary) bool { return s.Impl == im.name && s.N == *qpsN && s.QPS == q }); i >= 0 {
					qpsResults = append(qpsResults, all[i])
				}
			}
		}
	}
	var scales []scaleResult
	if *rounds > 0 {
		for _, im := range impls {
			if im.baseline || im.kind.name != customPods.name {
				continue
			}
			s, err := b.scale(ctx, im, mainQPS, *rounds)
			if err != nil {
				b.shutdown(ctx)
				fail(1, err)
			}
			scales = append(scales, s)
		}
	}

	rep := report{Env: env, Main: mainQPS, Workers: *workers, Repeat: *repeat, Results: results, QPS: qpsResults, QPSN: *qpsN, Scales: scales, Omitted: omitted, Took: time.Since(begun)}
	fmt.Println()
	fmt.Println(rep.markdown())
	if *mdPath != "" {
		if err := writeData(inRoot(dataPath(*mdPath)), rep); err != nil {
			fail(1, err)
		}
		b.logf("wrote %s", inRoot(dataPath(*mdPath)))
	}
	if err := writePages(rep, *mdPath, section, strings.Split(*doc, ","), *pngPath); err != nil {
		fail(1, err)
	}
}

// writePages writes what rep gives into md's section (and, for the default
// run, into the summary section of each comparison page) and draws png;
// an empty md or png is none.
func writePages(rep report, md, section string, compareDocs []string, png string) error {
	if md != "" {
		for _, g := range rep.regions(md, section, compareDocs) {
			if err := replaceGenerated(inRoot(g.page), g.section, g.want, false); err != nil {
				return err
			}
			fmt.Fprintf(os.Stderr, "bench: wrote the %s section of %s\n", g.section, g.page)
		}
	}
	if png != "" {
		if err := rep.chart(inRoot(png)); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "bench: drew %s\n", png)
	}
	return nil
}

func fail(code int, err error) {
	fmt.Fprintln(os.Stderr, "bench:", err)
	os.Exit(code)
}

func parseSizes(s string) ([]int, error) {
	var ns []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("-n: want positive whole numbers separated by commas, got %q", s)
		}
		ns = append(ns, n)
	}
	return ns, nil
}

// checkRoom fails when the fresh clusters' fake nodes (CLUSTER_NODES of
// CLUSTER_NODE_PODS pods each, as make bench sets them) cannot hold the
// largest run's pods: 3 for each CustomPod and the warm-up object's, and
// the pods of others. Pods that fit nowhere stay Pending, and the run would
// time out after minutes instead of failing now.
func checkRoom(maxN, otherPods int) error {
	nodes, err1 := strconv.Atoi(os.Getenv("CLUSTER_NODES"))
	perNode, err2 := strconv.Atoi(os.Getenv("CLUSTER_NODE_PODS"))
	if err1 != nil || err2 != nil {
		return nil // the cluster's own defaults: not make bench's
	}
	if need := 3*(maxN+1) + otherPods; nodes*perNode < need {
		return fmt.Errorf("at N = %d, %d pods need room; the cluster's %d nodes hold %d each (%d): give more, make bench BENCH_NODE_PODS=%d", maxN, need, nodes, perNode, nodes*perNode, (need+nodes-1)/nodes)
	}
	return nil
}

// fullSizes are -full's N.
const fullSizes = "10,100,1000"

// curveSizes are -curve's Ns: from a small cluster's to five times the
// default run's.
const curveSizes = "100,1000,5000"

// selectImpls reads -impl: empty is the default run, the CustomPod
// controllers (each controller's code once) and their plain loop, what the
// targets are about; the rest are omitted, each with its reason.
func selectImpls(only string) ([]implementation, []omission, error) {
	switch only {
	case "all":
		return implementations, nil, nil
	case "":
		var out []implementation
		var omitted []omission
		for _, im := range implementations {
			if im.leftOut == "" {
				out = append(out, im)
			} else {
				omitted = append(omitted, omission{im.name, im.leftOut})
			}
		}
		return out, omitted, nil
	}
	var out []implementation
	for _, name := range strings.Split(only, ",") {
		i := slices.IndexFunc(implementations, func(im implementation) bool { return im.name == strings.TrimSpace(name) })
		if i < 0 {
			var names []string
			for _, im := range implementations {
				names = append(names, im.name)
			}
			return nil, nil, fmt.Errorf("-impl: no implementation %q; want some of %q", name, names)
		}
		out = append(out, implementations[i])
	}
	return out, nil, nil
}

func newBench(timeout time.Duration, fresh bool) (*bench, error) {
	root := rootDir
	if root == "" {
		return nil, fmt.Errorf("run the bench inside the repository (no versions.env found above the working directory)")
	}
	kubectl := filepath.Join(root, "bin", "kubectl")
	if _, err := os.Stat(kubectl); err != nil {
		return nil, fmt.Errorf("%s is missing: run `make tools`", kubectl)
	}
	b := &bench{root: root, kubectl: kubectl,
		work: filepath.Join(root, ".cache", "bench"), timeout: timeout, log: os.Stderr}
	if fresh {
		o, err := cluster.OptionsFromEnv(root)
		if err != nil {
			return nil, err
		}
		o.Log = b.log
		o.Name = freshClusterName
		o.KubeSchedulerConfig = filepath.Join(root, "bench", "kube-scheduler.yaml")
		b.freshOptions = &o
		p, err := cluster.New("kwok", o)
		if err != nil {
			return nil, err
		}
		return b, p.Preflight(context.Background())
	}
	if os.Getenv("KUBECONFIG") == "" {
		return nil, fmt.Errorf("-cluster=kubeconfig: KUBECONFIG is not set; point it at a cluster, or leave -cluster=fresh")
	}
	return b, b.connect(clientcmd.NewDefaultClientConfigLoadingRules().GetDefaultFilename())
}

// freshClusterName is the kwok cluster each run of -cluster=fresh gets,
// with the run's number: a cluster of the same name would have the same
// certificate files, and client-go would reuse the previous one's
// connections, which it caches by those files' names.
const freshClusterName = "k8s-demo-bench"

// connect points the bench's own clients at a cluster.
func (b *bench) connect(kubeconfig string) error {
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig}, nil).ClientConfig()
	if err != nil {
		return err
	}
	// The bench's own requests (creating objects, watching them) must not be
	// what limits a run.
	cfg.QPS, cfg.Burst = -1, 0
	// Nor load the API server more than it must: its watch asks for no gzip,
	// which Kubernetes 1.37 would spend on every event of it (How it
	// measures, in docs/bench.md).
	cfg.DisableCompression = true
	if b.dyn, err = dynamic.NewForConfig(cfg); err != nil {
		return err
	}
	if b.kube, err = kubernetes.NewForConfig(cfg); err != nil {
		return err
	}
	b.cfg, b.kubeconfig = cfg, kubeconfig
	return nil
}

// clusterUp, with -cluster=fresh, brings up the run's cluster: the one made
// while the last run finished, or a new one. It does nothing for a cluster
// that is up, or with -cluster=kubeconfig.
func (b *bench) clusterUp(ctx context.Context) error {
	if b.freshOptions == nil || b.fresh != nil {
		return nil
	}
	start := time.Now()
	if pc := b.next; pc != nil {
		b.next = nil
		<-pc.done
		b.fresh, b.freshCRDs = pc.p, pc.crds
		if pc.err != nil {
			return pc.err
		}
		b.logf("  a new kwok cluster in %s, %s of them after the last run", pc.took.Round(100*time.Millisecond), time.Since(start).Round(100*time.Millisecond))
		return b.connect(b.fresh.Kubeconfig())
	}
	b.clusters++
	p, err := b.newCluster(ctx, b.clusters, nil)
	b.fresh = p
	if err != nil {
		return err
	}
	b.logf("  a new kwok cluster in %s", time.Since(start).Round(100*time.Millisecond))
	return b.connect(b.fresh.Kubeconfig())
}

// newCluster makes the n-th kwok cluster, deleting one of that name a bench
// before left, and applies crds to it. The provider it returns, even with an
// error, is for clusterDown.
func (b *bench) newCluster(ctx context.Context, n int, crds []string) (cluster.Provider, error) {
	o := *b.freshOptions
	o.Name = fmt.Sprintf("%s-%d", b.freshOptions.Name, n)
	p, err := cluster.New("kwok", o)
	if err != nil {
		return nil, err
	}
	if ok, err := p.Exists(ctx); err != nil {
		return nil, err
	} else if ok {
		if err := p.Down(ctx); err != nil {
			return nil, err
		}
	}
	if err := p.Up(ctx); err != nil {
		return p, err
	}
	if len(crds) > 0 {
		if err := b.kubectlApply(p.Kubeconfig(), crds...); err != nil {
			return p, err
		}
	}
	return p, nil
}

// pendingCluster is a cluster being made in the background.
type pendingCluster struct {
	done chan struct{}
	p    cluster.Provider
	crds []string
	took time.Duration
	err  error
}

// prepareNext, with -cluster=fresh and a run to follow, starts making the
// next run's cluster, with its CRDs, once this run's times are taken: while
// this run counts its last requests and its cluster is deleted. Making a
// cluster takes about 7 seconds here, and a run's tail about 5: a run would
// otherwise wait for both.
func (b *bench) prepareNext(ctx context.Context) {
	if b.freshOptions == nil || b.nextCRDs == nil || b.next != nil {
		return
	}
	b.clusters++
	pc := &pendingCluster{done: make(chan struct{}), crds: b.nextCRDs}
	b.next = pc
	go func(n int) {
		defer close(pc.done)
		start := time.Now()
		pc.p, pc.err = b.newCluster(ctx, n, pc.crds)
		pc.took = time.Since(start)
	}(b.clusters)
}

// clusterDown, with -cluster=fresh, deletes the run's cluster: the next run
// starts from an empty etcd, whatever this one left.
func (b *bench) clusterDown(ctx context.Context) error {
	if b.fresh == nil {
		return nil
	}
	p := b.fresh
	b.fresh, b.freshCRDs, b.cfg, b.dyn, b.kube = nil, nil, nil, nil, nil
	return p.Down(context.WithoutCancel(ctx))
}

// shutdown deletes every cluster the bench made that is still there: the
// run's, and the next run's if it is being made.
func (b *bench) shutdown(ctx context.Context) {
	_ = b.clusterDown(ctx)
	if pc := b.next; pc != nil {
		b.next = nil
		<-pc.done
		if pc.p != nil {
			_ = pc.p.Down(context.WithoutCancel(ctx))
		}
	}
}

// environment describes where the figures come from.
func (b *bench) environment(ctx context.Context) string {
	v := "unknown"
	if sv, err := b.kube.Discovery().ServerVersion(); err == nil {
		v = sv.GitVersion
	}
	nodes := "?"
	if l, err := b.kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); err == nil {
		nodes = strconv.Itoa(len(l.Items))
	}
	commit := "an unknown commit"
	if out, err := exec.Command("git", "-C", b.root, "rev-parse", "--short", "HEAD").Output(); err == nil {
		commit = "commit " + strings.TrimSpace(string(out))
		if st, err := exec.Command("git", "-C", b.root, "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(st) > 0 {
			commit += " with uncommitted changes"
		}
	}
	where := os.Getenv("CLUSTER")
	if b.freshOptions != nil {
		where = "kwok, a new cluster for each run"
	}
	return fmt.Sprintf("%s: Kubernetes %s (%s), %s nodes; %s, %d CPUs, %s", commit, v, where, nodes, runtime.Version(), runtime.NumCPU(), time.Now().Format("2006-01-02"))
}

// preflight fails at once, not after the first runs, when the nodes cannot
// take the pods of the largest run: the pods left Pending would never be
// ready, and the run would wait until its timeout.
func (b *bench) preflight(ctx context.Context, impls []implementation, ns []int) error {
	want := 0
	for _, im := range impls {
		want = max(want, im.kind.pods*slices.Max(ns)+b.otherPods)
	}
	if want == 0 {
		return nil
	}
	l, err := b.kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	room := int64(0)
	for _, n := range l.Items {
		if p, ok := n.Status.Allocatable[corev1.ResourcePods]; ok && !n.Spec.Unschedulable {
			room += p.Value()
		}
	}
	if room < int64(want) {
		return fmt.Errorf("the cluster's %d nodes take %d pods in all, and the largest run makes %d: give the nodes more room (make bench: BENCH_NODES, BENCH_NODE_PODS; a cluster that exists keeps its nodes: delete it with `make cluster-down CLUSTER_NAME=k8s-demo-bench`)", len(l.Items), room, want)
	}
	return nil
}

// inRoot resolves p against the repository root unless it is absolute.
func inRoot(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(rootDir, p)
}
