package main

import (
	"maps"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestPagesAreWhatTheDataGive: a run keeps its figures as data, the pages
// are written from them, and -check (make verify) fails when a figure in a
// generated section was written by hand, or the data changed under it.
func TestPagesAreWhatTheDataGive(t *testing.T) {
	r := report{Env: "commit abc1234: a test", Main: qpsSetting{100, 200}, Workers: 2, Repeat: 3, Took: time.Minute, Results: []summary{
		{Impl: "client-go", Kind: "CustomPod", StaleCache: podNames, N: 10, Runs: 3, Converge: 1160 * time.Millisecond, Min: 1100 * time.Millisecond, Max: 1420 * time.Millisecond,
			Requests: 60, PeakRSS: 40 * mib, PeakAnon: 10 * mib, ObjectCPU: 50 * time.Millisecond, Startup: 150 * time.Millisecond},
		{Impl: "kubebuilder", Kind: "CustomPod", StaleCache: podNames, N: 10, Runs: 3, Converge: 1000 * time.Millisecond, Min: 1000 * time.Millisecond, Max: 1100 * time.Millisecond,
			Requests: 60, PeakRSS: 50 * mib, PeakAnon: 20 * mib, ObjectCPU: 100 * time.Millisecond, Startup: 300 * time.Millisecond},
		{Impl: "plain loop", Kind: "CustomPod", Baseline: true, N: 10, Runs: 3, Converge: 1010 * time.Millisecond, Min: time.Second, Max: 1200 * time.Millisecond, Requests: 60},
	}}
	dir := t.TempDir()
	md, cmp := dir+"/bench.md", dir+"/comparison.md"
	begin, end := markers(mainSection)
	sb, se := markers(summarySection)
	if err := os.WriteFile(md, []byte("# Bench\n\n"+begin+"\n"+end+"\n\nprose\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cmp, []byte("# Compared\n\n"+sb+"\n"+se+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeData(dataPath(md), r); err != nil {
		t.Fatal(err)
	}
	back, err := readData(dataPath(md))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, r) {
		t.Fatalf("the data read back differ:\n got %+v\nwant %+v", back, r)
	}
	if err := writePages(back, md, mainSection, []string{cmp}, ""); err != nil {
		t.Fatal(err)
	}
	if err := checkPages(back.regions(md, mainSection, []string{cmp})); err != nil {
		t.Fatalf("the pages just written: %v", err)
	}
	page, _ := os.ReadFile(md)
	if !strings.Contains(string(page), "| client-go | pod names | 10 | 1.16 s | 1.10–1.42 s | 1.15× | 5.00 ms | 40.0 MiB |") {
		t.Errorf("client-go's row should show its spread, its time over the plain loop's (1.16/1.01), its CPU per object and its peak:\n%s", page)
	}
	summary, _ := os.ReadFile(cmp)
	for _, want := range []string{
		"| peak RSS | 40.0 MiB | 50.0 MiB | 0.0 MiB |",
		"client-go's controller against kubebuilder's manager: 116% of its time to converge, 50% of its CPU per object, 80% of its peak RSS (50% of its anonymous memory), 50% of its start-up.",
	} {
		if !strings.Contains(string(summary), want) {
			t.Errorf("comparison's summary lacks %q:\n%s", want, summary)
		}
	}

	// The Chinese page's summary is the same figures, in Chinese.
	zh := back.comparisonSummary(true)
	for _, want := range []string{
		"| 内存峰值（RSS） | 40.0 MiB | 50.0 MiB | 0.0 MiB |",
		"| | client-go | kubebuilder | 普通循环 |",
		"client-go 的控制器与 kubebuilder 的管理器相比：收敛用时是后者的 116%，每个对象的 CPU 时间是 50%，内存峰值是 80%（匿名内存是 50%），启动时间是 50%。",
	} {
		if !strings.Contains(zh, want) {
			t.Errorf("the Chinese summary lacks %q:\n%s", want, zh)
		}
	}
	if g := back.regions("x.md", mainSection, []string{"docs/zh/comparison.md"}); g[1].want != zh {
		t.Error("the region of docs/zh/comparison.md should be the Chinese summary")
	}

	// A figure written by hand into comparison's summary.
	if err := os.WriteFile(cmp, []byte(strings.Replace(string(summary), "40.0 MiB", "36.0 MiB", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	err = checkPages(back.regions(md, mainSection, []string{cmp}))
	if err == nil || !strings.Contains(err.Error(), "written by hand") {
		t.Errorf("a hand-written figure in comparison's summary: got %v, want the check to fail", err)
	}
	// The data changed under the pages.
	_ = os.WriteFile(cmp, summary, 0o644)
	changed := back
	changed.Results = slices.Clone(back.Results)
	changed.Results[1].PeakRSS = 60 * mib
	if err := checkPages(changed.regions(md, mainSection, []string{cmp})); err == nil {
		t.Error("with the data changed under them, the pages should fail the check")
	}
}

// TestSummarizeTakesMedians: three runs of a row give its median figures,
// the spread of its times, and the requests of its median run.
func TestSummarizeTakesMedians(t *testing.T) {
	q := qpsSetting{100, 200}
	runs := []result{
		{Impl: "kubebuilder", Kind: "CustomPod", N: 1000, QPS: q, Converge: 120 * time.Second, PeakRSS: 90e6, PeakAnon: 40e6, Requests: requestCounts{"create pods": 3000, "list pods": 2000},
			Cluster: map[string]time.Duration{"kube-apiserver": 50 * time.Second, "etcd": 20 * time.Second}},
		{Impl: "plain loop", Kind: "CustomPod", N: 1000, QPS: q, Converge: 100 * time.Second, Requests: requestCounts{"create pods": 3000}},
		{Impl: "kubebuilder", Kind: "CustomPod", N: 1000, QPS: q, Converge: 100 * time.Second, PeakRSS: 80e6, PeakAnon: 30e6, Requests: requestCounts{"create pods": 3000, "list pods": 1500},
			Cluster: map[string]time.Duration{"kube-apiserver": 40 * time.Second, "etcd": 10 * time.Second}},
		{Impl: "kubebuilder", Kind: "CustomPod", N: 1000, QPS: q, Converge: 200 * time.Second, PeakRSS: 100e6, PeakAnon: 50e6, Requests: requestCounts{"create pods": 3000, "list pods": 1000},
			Cluster: map[string]time.Duration{"kube-apiserver": 90 * time.Second, "etcd": 30 * time.Second}},
	}
	got := summarize(runs, implementations)
	if len(got) != 2 || got[0].Impl != "kubebuilder" || got[1].Impl != "plain loop" {
		t.Fatalf("summaries %+v: want kubebuilder's, then the plain loop's", got)
	}
	kb := got[0]
	if kb.Runs != 3 || kb.Converge != 120*time.Second || kb.Min != 100*time.Second || kb.Max != 200*time.Second {
		t.Errorf("kubebuilder: %d runs, median %s, spread %s–%s; want 3, 2m0s, 1m40s–3m20s", kb.Runs, kb.Converge, kb.Min, kb.Max)
	}
	if kb.Requests != 4500 || kb.PeakRSS != 90e6 || kb.StaleCache != podNames {
		t.Errorf("kubebuilder: %d requests, %d bytes, stale cache %q; want 4500, 90e6, %q", kb.Requests, kb.PeakRSS, kb.StaleCache, podNames)
	}
	if kb.PeakAnon != 40e6 {
		t.Errorf("kubebuilder: peak anonymous memory %d bytes, want the median, 40e6", kb.PeakAnon)
	}
	if kb.Breakdown["list pods"] != 2000 {
		t.Errorf("the breakdown should be the median run's (2000 lists), got %v", kb.Breakdown)
	}
	if kb.ClusterCPU != 70*time.Second || kb.Cluster["etcd"] != 20*time.Second {
		t.Errorf("kubebuilder's cluster CPU: median %s, etcd %s in the median run; want 1m10s and 20s", kb.ClusterCPU, kb.Cluster["etcd"])
	}
	if got := clusterCPUString(kb.Cluster); got != "kube-apiserver 50.0 s, etcd 20.0 s" {
		t.Errorf("clusterCPUString: %q, want the busiest first", got)
	}
	if f := ratio(kb, got); f != 1.2 {
		t.Errorf("kubebuilder over the plain loop: %v, want 1.2", f)
	}
}

// TestGrowthTable: with more than one N, the report has the growth table
// (RSS per object is what the objects added to the high-water mark, over N)
// and the chart its memory row; with one N, neither.
func TestGrowthTable(t *testing.T) {
	// peak and start in MiB; cpu is what the N objects cost, start-up apart.
	row := func(impl string, n int, peak, start uint64, cpu time.Duration) summary {
		return summary{Impl: impl, Kind: "CustomPod", N: n, Runs: 3, Converge: time.Duration(n) * 30 * time.Millisecond,
			Min: time.Second, Max: 2 * time.Second, Requests: 65 * n / 10, PeakRSS: peak * mib, StartRSS: start * mib, CPU: cpu + time.Second, ObjectCPU: cpu}
	}
	r := report{Env: "a test", Main: qpsSetting{100, 200}, Workers: 2, Repeat: 3, Took: time.Minute, Results: []summary{
		row("kubebuilder", 100, 60, 52, 600*time.Millisecond),
		row("kubebuilder", 1000, 87, 52, 5*time.Second),
		row("plain loop", 100, 40, 39, 200*time.Millisecond),
		row("plain loop", 1000, 44, 39, 2*time.Second),
	}}
	md := r.markdown()
	for _, want := range []string{
		"| kubebuilder | 100 | 3.00 s | 6.5 | 60.0 MiB | 81.9 KiB | 6.00 ms |",
		"| kubebuilder | 1000 | 30.0 s | 6.5 | 87.0 MiB | 35.8 KiB | 5.00 ms |",
		"| plain loop | 1000 | 30.0 s | 6.5 | 44.0 MiB | 5.1 KiB | 2.00 ms |",
		"| kubebuilder | — | 1000 | 30.0 s | 1.00–2.00 s | 1.00× | 5.00 ms | 87.0 MiB |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the growth table lacks %q:\n%s", want, md)
		}
	}
	one := r
	one.Results = r.Results[1:2]
	if strings.Contains(one.markdown(), "How each grows with N") {
		t.Error("one N should give no growth table")
	}
	dir := t.TempDir()
	for name, rep := range map[string]report{"curve.png": r, "one.png": one} {
		if err := rep.chart(dir + "/" + name); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	curve, _ := os.Stat(dir + "/curve.png")
	single, _ := os.Stat(dir + "/one.png")
	if curve == nil || single == nil || curve.Size() <= single.Size() {
		t.Errorf("the curve's chart (two rows of plots) should be larger than one N's: %v, %v", curve, single)
	}
}

// TestConversionFailures reads the API server's failed calls to conversion
// webhooks, by CRD, out of its metrics (Prometheus' text format, as the API
// server prints it).
func TestConversionFailures(t *testing.T) {
	metrics := `# HELP apiserver_crd_conversion_webhook_duration_seconds [ALPHA] CRD webhook conversion duration in seconds
# TYPE apiserver_crd_conversion_webhook_duration_seconds histogram
apiserver_crd_conversion_webhook_duration_seconds_bucket{crd_name="custompods.zhhnzw.mock.com",from_version="v2",succeeded="false",to_version="v1",le="0.005"} 7000
apiserver_crd_conversion_webhook_duration_seconds_bucket{crd_name="custompods.zhhnzw.mock.com",from_version="v2",succeeded="false",to_version="v1",le="+Inf"} 7653
apiserver_crd_conversion_webhook_duration_seconds_sum{crd_name="custompods.zhhnzw.mock.com",from_version="v2",succeeded="false",to_version="v1"} 12.5
apiserver_crd_conversion_webhook_duration_seconds_count{crd_name="custompods.zhhnzw.mock.com",from_version="v2",succeeded="false",to_version="v1"} 7653
apiserver_crd_conversion_webhook_duration_seconds_bucket{crd_name="custompods.zhhnzw.mock.com",from_version="v1",succeeded="false",to_version="v2",le="+Inf"} 2
apiserver_crd_conversion_webhook_duration_seconds_sum{crd_name="custompods.zhhnzw.mock.com",from_version="v1",succeeded="false",to_version="v2"} 0.1
apiserver_crd_conversion_webhook_duration_seconds_count{crd_name="custompods.zhhnzw.mock.com",from_version="v1",succeeded="false",to_version="v2"} 2
apiserver_crd_conversion_webhook_duration_seconds_bucket{crd_name="custompods.zhhnzw.mock.com",from_version="v1",succeeded="true",to_version="v2",le="+Inf"} 12
apiserver_crd_conversion_webhook_duration_seconds_sum{crd_name="custompods.zhhnzw.mock.com",from_version="v1",succeeded="true",to_version="v2"} 0.2
apiserver_crd_conversion_webhook_duration_seconds_count{crd_name="custompods.zhhnzw.mock.com",from_version="v1",succeeded="true",to_version="v2"} 12
apiserver_crd_conversion_webhook_duration_seconds_bucket{crd_name="networks.samplecrd.k8s.io",from_version="v2",succeeded="false",to_version="v1",le="+Inf"} 0
apiserver_crd_conversion_webhook_duration_seconds_sum{crd_name="networks.samplecrd.k8s.io",from_version="v2",succeeded="false",to_version="v1"} 0
apiserver_crd_conversion_webhook_duration_seconds_count{crd_name="networks.samplecrd.k8s.io",from_version="v2",succeeded="false",to_version="v1"} 0
# HELP apiserver_request_total [STABLE] Counter of apiserver requests broken out for each verb.
# TYPE apiserver_request_total counter
apiserver_request_total{code="200",resource="custompods",verb="LIST"} 3
`
	got, err := conversionFailures(strings.NewReader(metrics))
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]int{"custompods.zhhnzw.mock.com": 7655}; !maps.Equal(got, want) {
		t.Errorf("conversionFailures = %v, want %v", got, want)
	}
	if _, err := conversionFailures(strings.NewReader("apiserver_request_total{code=\"200\" 3\n")); err == nil {
		t.Error("conversionFailures read metrics it cannot parse without an error")
	}
}

// TestLoopEventIsNamedAsARecorderNamesIt: the plain loop's event is the one
// a controller records once it has made a CustomPod's pods, named as
// client-go's recorders name an event: the object's name, a dot, and the
// time in nanoseconds, in hexadecimal.
func TestLoopEventIsNamedAsARecorderNamesIt(t *testing.T) {
	cp := customPods.object(7)
	cp.SetNamespace("ns")
	cp.SetUID("uid-7")
	before := time.Now()
	ev := eventFor(cp, []any{"cp-00007-0", "cp-00007-1", "cp-00007-2"})
	name, hex, ok := strings.Cut(ev.Name, ".")
	nanos, err := strconv.ParseInt(hex, 16, 64)
	if !ok || name != "cp-00007" || err != nil || nanos < before.UnixNano() || nanos > time.Now().UnixNano() {
		t.Errorf("event name %q: want cp-00007.<the time in hexadecimal nanoseconds>", ev.Name)
	}
	if ev.Reason != "SuccessfulCreate" || ev.Note != "Created 3 pods: cp-00007-0, cp-00007-1, cp-00007-2" ||
		ev.Regarding.Kind != "CustomPod" || ev.Regarding.UID != "uid-7" || ev.Namespace != "ns" {
		t.Errorf("event %+v: want SuccessfulCreate, \"Created 3 pods: …\", regarding CustomPod cp-00007 (uid-7) in ns", ev)
	}
}
