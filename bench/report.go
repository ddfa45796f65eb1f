package main

import (
	"bytes"
	"fmt"
	"image/color"
	"os"
	"slices"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

type report struct {
	Env     string
	Main    qpsSetting
	Workers int
	Repeat  int
	Results []summary
	QPS     []summary
	QPSN    int
	Scales  []scaleResult
	Omitted []omission
	Took    time.Duration
}

// omission is an implementation the default run leaves out, and why.
type omission struct{ Impl, Why string }

func seconds(d time.Duration) string {
	switch {
	case d == 0:
		return "—"
	case d < 10*time.Second:
		return fmt.Sprintf("%.2f s", d.Seconds())
	default:
		return fmt.Sprintf("%.1f s", d.Seconds())
	}
}

// spread is "min–max s", both in the unit of the larger.
func spread(lo, hi time.Duration) string {
	if hi < 10*time.Second {
		return fmt.Sprintf("%.2f–%.2f s", lo.Seconds(), hi.Seconds())
	}
	return fmt.Sprintf("%.1f–%.1f s", lo.Seconds(), hi.Seconds())
}

// mainLead starts the line above the main table.
const mainLead = "Every controller (and the plain loop) at the same client-side rate limit, QPS/burst "

var mainHeader = []string{"implementation", "stale cache", "N", "converged in", "spread", "× plain loop", "CPU per object", "peak RSS",
	"p50", "p99", "API requests", "per object", "writes", "cluster CPU"}

// mib is a mebibyte: the unit of a Deployment's memory limit (Mi).
const mib = 1 << 20

func (r report) markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Measured by `make bench` on %s; the whole run took %s.\n\n", r.Env, r.Took.Round(time.Second))
	fmt.Fprintf(&b, "%s%s, each reconciling %d objects at once (crd-demo's `--workers`, the scaffolds' `--max-concurrent-reconciles`, the plain loop's goroutines). ", mainLead, r.Main, r.Workers)
	fmt.Fprintf(&b, "Each figure is the median of %d runs, taken in turns with the other rows' runs; the spread is the fastest and the slowest run's time to converge:\n\n", r.Repeat)
	b.WriteString("| " + strings.Join(mainHeader, " | ") + " |\n")
	b.WriteString("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, x := range r.Results {
		vs := "—"
		if f := ratio(x, r.Results); f > 0 {
			vs = fmt.Sprintf("%.2f×", f)
		}
		cache := x.StaleCache
		if cache == "" {
			cache = "—"
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %s | %s | %s | %.2f ms | %.1f MiB | %s | %s | %d | %.1f | %d | %s |\n",
			x.Impl, cache, x.N, seconds(x.Converge), spread(x.Min, x.Max), vs, float64(x.cpuPerObject().Microseconds())/1e3, float64(x.PeakRSS)/mib,
			seconds(x.P50), seconds(x.P99), x.Requests, float64(x.Requests)/float64(x.N), x.Writes, seconds(x.ClusterCPU))
	}
	if len(r.Omitted) > 0 {
		b.WriteString("\nNot in this run (`-full` runs them all, `-impl` those it names):\n\n")
		for _, o := range r.Omitted {
			fmt.Fprintf(&b, "- %s: %s.\n", o.Impl, o.Why)
		}
	}
	var deletes []summary
	for _, x := range r.Results {
		if x.Deleted > 0 {
			deletes = append(deletes, x)
		}
	}
	if len(deletes) > 0 {
		b.WriteString("\nDeleting every Network, until the backend holds none of them (the finalizer's work; the plain loop's by hand):\n\n")
		b.WriteString("| implementation | N | all gone in |\n|---|--:|--:|\n")
		for _, x := range deletes {
			fmt.Fprintf(&b, "| %s | %d | %s |\n", x.Impl, x.N, seconds(x.Deleted))
		}
	}
	if len(r.QPS) > 0 {
		fmt.Fprintf(&b, "\nThe client-side rate limit's effect, N = %d: each implementation's default (client-go's 5/10, the scaffolds' flags' 20/30), the main table's, and none:\n\n", r.QPSN)
		b.WriteString("| implementation | QPS/burst | converged in | spread | p99 | API requests | cluster CPU |\n|---|--:|--:|--:|--:|--:|--:|\n")
		for _, x := range r.QPS {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %d | %s |\n", x.Impl, x.QPS, seconds(x.Converge), spread(x.Min, x.Max), seconds(x.P99), x.Requests, seconds(x.ClusterCPU))
		}
	}
	if len(r.Scales) > 0 {
		fmt.Fprintf(&b, "\nThe articles' `kubectl scale`: from the scale request to a Ready status and exactly that many live pods, median of %d rounds, QPS/burst %s:\n\n", r.Scales[0].Rounds, r.Main)
		b.WriteString("| implementation | 1 → 3 | 3 → 1 |\n|---|--:|--:|\n")
		for _, s := range r.Scales {
			fmt.Fprintf(&b, "| %s | %s | %s |\n", s.Impl, seconds(s.Up), seconds(s.Down))
		}
	}
	b.WriteString("\nAPI requests are those the controller's own client sent, counted by a proxy in front of the API server, from the first object created until the controller went quiet, watches apart; what they were, in the run of median time:\n\n")
	for _, x := range r.Results {
		if x.N == r.Results[len(r.Results)-1].N || x.N == maxN(r.Results) {
			fmt.Fprintf(&b, "- %s, N = %d: %s\n", x.Impl, x.N, x.Breakdown)
		}
	}
	b.WriteString("\nCPU per object is the process's user and system time from the first of the N objects until it went quiet, over N (start-up and the warm-up object apart); over the whole run, start-up included:\n\n")
	for _, x := range r.Results {
		if x.N == maxN(r.Results) {
			fmt.Fprintf(&b, "- %s, N = %d: %.2f s\n", x.Impl, x.N, x.CPU.Seconds())
		}
	}
	b.WriteString("\nPeak RSS is the process's high-water mark (VmHWM), in MiB (2^20 bytes, a memory limit's Mi).\n")
	b.WriteString("\nRSS also counts the pages of the program's own binary that it has read, which the kernel can drop and read again; its anonymous memory (RssAnon: heap, stacks) is the rest, sampled every 100 ms, at its highest (median):\n\n")
	for _, x := range r.Results {
		if x.N == r.Results[len(r.Results)-1].N || x.N == maxN(r.Results) {
			fmt.Fprintf(&b, "- %s, N = %d: %.1f MiB of %.1f MiB\n", x.Impl, x.N, float64(x.PeakAnon)/mib, float64(x.PeakRSS)/mib)
		}
	}
	b.WriteString("\nStart-up, from `exec` to the log line that says the controller's workers run (median; the plain loop has none):\n\n")
	for _, x := range r.Results {
		if x.Startup > 0 && (x.N == r.Results[len(r.Results)-1].N || x.N == maxN(r.Results)) {
			fmt.Fprintf(&b, "- %s, N = %d: %d ms\n", x.Impl, x.N, x.Startup.Milliseconds())
		}
	}
	if ns := sizes(r.Results); len(ns) > 1 {
		b.WriteString("\nHow each grows with N. RSS per object is what the N objects added to the process's high-water mark (its peak, less the peak it had reached before the first of them: start-up, and the warm-up object), over N; CPU per object is as in the main table:\n\n")
		b.WriteString("| implementation | N | converged in | requests per object | peak RSS | RSS per object | CPU per object |\n|---|--:|--:|--:|--:|--:|--:|\n")
		for _, x := range r.Results {
			fmt.Fprintf(&b, "| %s | %d | %s | %.1f | %.1f MiB | %.1f KiB | %.2f ms |\n", x.Impl, x.N, seconds(x.Converge),
				float64(x.Requests)/float64(x.N), float64(x.PeakRSS)/mib, x.rssPerObject()/1024, float64(x.cpuPerObject().Microseconds())/1e3)
		}
	}
	var withCluster []summary
	for _, x := range r.Results {
		if x.Cluster != nil {
			withCluster = append(withCluster, x)
		}
	}
	if len(withCluster) > 0 {
		b.WriteString("\nCluster CPU is the user and system time the cluster's own processes spent over the same span as the API requests (median); each one's, in the run of median time:\n\n")
		for _, x := range withCluster {
			fmt.Fprintf(&b, "- %s, N = %d: %s\n", x.Impl, x.N, clusterCPUString(x.Cluster))
		}
	}
	return b.String()
}

// sizes are the Ns of the results, in order.
func sizes(s []summary) []int {
	var ns []int
	for _, x := range s {
		if !slices.Contains(ns, x.N) {
			ns = append(ns, x.N)
		}
	}
	return ns
}

func maxN(s []summary) int {
	n := 0
	for _, x := range s {
		n = max(n, x.N)
	}
	return n
}

// The generated sections of docs/bench.md: the default run's, and the
// growth curve's (-curve).
const (
	mainSection  = "bench"
	curveSection = "bench-curve"
)

func markers(section string) (begin, end string) {
	return "<!-- " + section + ":begin (written by make bench; do not edit) -->", "<!-- " + section + ":end -->"
}

// replaceGenerated puts md between the section's markers in the file at
// path; with check, it only checks that it could.
func replaceGenerated(path, section, md string, check bool) error {
	old, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	beginMarker, endMarker := markers(section)
	i, j := bytes.Index(old, []byte(beginMarker)), bytes.Index(old, []byte(endMarker))
	if i < 0 || j < i {
		return fmt.Errorf("%s: want the lines %q and %q around the generated section", path, beginMarker, endMarker)
	}
	if check {
		return nil
	}
	var b bytes.Buffer
	b.Write(old[:i+len(beginMarker)])
	b.WriteString("\n")
	b.WriteString(md)
	b.Write(old[j:])
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// chart draws two panels: the time to converge and API requests per object.
// With several N, one line per implementation against N (medians); with one
// N, a bar per implementation, its whiskers the fastest and slowest run.
func (r report) chart(path string) error {
	var order []string
	byImpl := map[string][]summary{}
	ns := map[int]bool{}
	for _, x := range r.Results {
		if _, ok := byImpl[x.Impl]; !ok {
			order = append(order, x.Impl)
		}
		byImpl[x.Impl] = append(byImpl[x.Impl], x)
		ns[x.N] = true
	}
	perObject := func(x summary) float64 { return float64(x.Requests) / float64(x.N) }
	var conv, reqs *plot.Plot
	var err error
	if len(ns) == 1 {
		n := r.Results[0].N
		if conv, err = bars(fmt.Sprintf("Time to converge, N = %d (QPS/burst %s)", n, r.Main), "seconds", order, byImpl,
			func(x summary) (float64, float64, float64) {
				return x.Converge.Seconds(), x.Min.Seconds(), x.Max.Seconds()
			}); err != nil {
			return err
		}
		if reqs, err = bars(fmt.Sprintf("API requests per object, N = %d", n), "requests", order, byImpl,
			func(x summary) (float64, float64, float64) { v := perObject(x); return v, v, v }); err != nil {
			return err
		}
	} else {
		if conv, err = lines(fmt.Sprintf("Time to converge (QPS/burst %s)", r.Main), "seconds", order, byImpl,
			func(x summary) float64 { return x.Converge.Seconds() }); err != nil {
			return err
		}
		if reqs, err = lines("API requests per object", "requests", order, byImpl, perObject); err != nil {
			return err
		}
		// Requests per object on a linear axis from zero, so that 9 against 5
		// looks like 9 against 5; the lines sit high, the legend goes below them.
		reqs.Y.Scale, reqs.Y.Tick.Marker = plot.LinearScale{}, plot.DefaultTicks{}
		reqs.Y.Min = 0
		reqs.Legend.Top, reqs.Legend.Left = false, false
	}
	rows := [][]*plot.Plot{{conv, reqs}}
	if len(ns) > 1 {
		// The memory a run costs, and what each object adds to it: a
		// controller that stays linear has a flat second line.
		rss, err := lines("Peak RSS", "MiB", order, byImpl, func(x summary) float64 { return float64(x.PeakRSS) / mib })
		if err != nil {
			return err
		}
		per, err := lines("RSS per object (peak less the peak before the objects, over N)", "KiB", order, byImpl,
			func(x summary) float64 { return x.rssPerObject() / 1024 })
		if err != nil {
			return err
		}
		// Memory on linear axes from zero, as requests are: 87 against 55 MB
		// should look like it.
		for _, p := range []*plot.Plot{rss, per} {
			p.Y.Scale, p.Y.Tick.Marker = plot.LinearScale{}, plot.DefaultTicks{}
			p.Y.Min = 0
			p.Legend.Top, p.Legend.Left = false, false
		}
		rows = append(rows, []*plot.Plot{rss, per})
	}

	img := vgimg.New(13*vg.Inch, vg.Length(len(rows))*5.5*vg.Inch)
	dc := draw.New(img)
	dc.SetColor(color.White)
	dc.Fill(dc.Path())
	tiles := draw.Tiles{Rows: len(rows), Cols: 2, PadX: vg.Inch / 2, PadY: vg.Inch / 2, PadTop: vg.Inch / 8, PadBottom: vg.Inch / 8, PadLeft: vg.Inch / 8, PadRight: vg.Inch / 8}
	canvases := plot.Align(rows, tiles, dc)
	for i, row := range rows {
		for j, p := range row {
			p.Draw(canvases[i][j])
		}
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		return err
	}
	return f.Close()
}

// lines: one line per implementation, y against N, both on log scales.
func lines(title, ylabel string, order []string, byImpl map[string][]summary, y func(summary) float64) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "N (objects created at once)"
	p.Y.Label.Text = ylabel
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = plot.LogTicks{Prec: -1}, plot.LogTicks{Prec: -1}
	p.Legend.Top, p.Legend.Left = true, true
	for i, name := range order {
		var pts plotter.XYs
		for _, x := range byImpl[name] {
			if v := y(x); v > 0 {
				pts = append(pts, plotter.XY{X: float64(x.N), Y: v})
			}
		}
		line, points, err := plotter.NewLinePoints(pts)
		if err != nil {
			return nil, err
		}
		c := plotutil.Color(i)
		line.Color, points.Color = c, c
		line.Dashes = plotutil.Dashes(i)
		points.Shape = plotutil.Shape(i)
		p.Add(line, points)
		p.Legend.Add(name, line, points)
	}
	p.Add(plotter.NewGrid())
	return p, nil
}

// whiskers are error bars from each bar's low to its high value.
type whiskers struct {
	plotter.XYs
	plotter.YErrors
}

// bars: one bar per implementation, its value the median, its whiskers the
// low and high (equal to the median: none drawn).
func bars(title, ylabel string, order []string, byImpl map[string][]summary, y func(summary) (mid, lo, hi float64)) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = ylabel
	p.Y.Min = 0
	vals := make(plotter.Values, len(order))
	var w whiskers
	for i, name := range order {
		mid, lo, hi := y(byImpl[name][0])
		vals[i] = mid
		w.XYs = append(w.XYs, plotter.XY{X: float64(i), Y: mid})
		w.YErrors = append(w.YErrors, struct{ Low, High float64 }{mid - lo, hi - mid})
	}
	b, err := plotter.NewBarChart(vals, vg.Points(40))
	if err != nil {
		return nil, err
	}
	b.Color = plotutil.Color(0)
	b.LineStyle.Width = 0
	p.Add(b)
	if slices.ContainsFunc(w.YErrors, func(e struct{ Low, High float64 }) bool { return e.Low > 0 || e.High > 0 }) {
		e, err := plotter.NewYErrorBars(w)
		if err != nil {
			return nil, err
		}
		e.Width = vg.Points(1.5)
		p.Add(e)
	}
	p.NominalX(order...)
	p.Add(plotter.NewGrid())
	return p, nil
}
