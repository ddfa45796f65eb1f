package main

import (
	"bytes"
	"errors"
	"fmt"
	"image/color"
	"os"
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
	Results []result
	QPS     []result
	QPSN    int
	Scales  []scaleResult
	Took    time.Duration
}

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

func (r report) markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Measured by `make bench` on %s; the whole run took %s.\n\n", r.Env, r.Took.Round(time.Second))
	fmt.Fprintf(&b, "Every controller (and the plain loop) at the same client-side rate limit, QPS/burst %s:\n\n", r.Main)
	b.WriteString("| implementation | N | converged in | p50 | p99 | API requests | per object | writes | peak RSS | CPU |\n")
	b.WriteString("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, x := range r.Results {
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %d | %.1f | %d | %.1f MB | %.2f s |\n",
			x.Impl, x.N, seconds(x.Converge), seconds(x.P50), seconds(x.P99),
			x.Requests.Total(), float64(x.Requests.Total())/float64(x.N), x.Requests.Writes(),
			float64(x.PeakRSS)/1e6, x.CPU.Seconds())
	}
	var deletes []result
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
		b.WriteString("| implementation | QPS/burst | converged in | p99 | API requests |\n|---|--:|--:|--:|--:|\n")
		for _, x := range r.QPS {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %d |\n", x.Impl, x.QPS, seconds(x.Converge), seconds(x.P99), x.Requests.Total())
		}
	}
	if len(r.Scales) > 0 {
		fmt.Fprintf(&b, "\nThe articles' `kubectl scale`: from the scale request to a Ready status and exactly that many live pods, median of %d rounds, QPS/burst %s:\n\n", r.Scales[0].Rounds, r.Main)
		b.WriteString("| implementation | 1 → 3 | 3 → 1 |\n|---|--:|--:|\n")
		for _, s := range r.Scales {
			fmt.Fprintf(&b, "| %s | %s | %s |\n", s.Impl, seconds(s.Up), seconds(s.Down))
		}
	}
	b.WriteString("\nAPI requests are those the controller's own client sent, counted by a proxy in front of the API server, from the first object created until the controller went quiet, watches apart. ")
	b.WriteString("Peak RSS is the process's high-water mark (VmHWM); CPU is its user and system time over the whole run, start-up included.\n")
	return b.String()
}

const (
	beginMarker = "<!-- bench:begin (written by make bench; do not edit) -->"
	endMarker   = "<!-- bench:end -->"
)

// replaceGenerated puts md between the markers of the file at path; with
// check, it only checks that it could.
func replaceGenerated(path, md string, check bool) error {
	old, err := os.ReadFile(path)
	if err != nil {
		return err
	}
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

// mainTable reads back what markdown wrote of the main table: each row's
// implementation, N, time to converge and API requests, which are what the
// chart draws (so that the chart can be drawn again without a new run).
func mainTable(md string) (report, error) {
	var r report
	lead := "Every controller (and the plain loop) at the same client-side rate limit, QPS/burst "
	i := strings.Index(md, lead)
	if i < 0 {
		return r, fmt.Errorf("no main table: no line starting %q", lead)
	}
	lines := strings.Split(md[i:], "\n")
	if _, err := fmt.Sscanf(strings.TrimPrefix(lines[0], lead), "%g/%d:", &r.Main.QPS, &r.Main.Burst); err != nil {
		return r, fmt.Errorf("the main table's rate limit, in %q: %w", lines[0], err)
	}
	for _, l := range lines[1:] {
		cells := strings.Split(strings.Trim(l, "| "), " | ")
		if len(cells) < 6 || cells[0] == "implementation" || strings.HasPrefix(cells[0], "---") {
			if len(r.Results) > 0 {
				break
			}
			continue
		}
		var x result
		var conv float64
		var reqs int
		x.Impl = cells[0]
		_, err1 := fmt.Sscanf(cells[1], "%d", &x.N)
		_, err2 := fmt.Sscanf(cells[2], "%g s", &conv)
		_, err3 := fmt.Sscanf(cells[5], "%d", &reqs)
		if err := errors.Join(err1, err2, err3); err != nil {
			return r, fmt.Errorf("the main table's row %q: %w", l, err)
		}
		x.Converge = time.Duration(conv * float64(time.Second))
		x.Requests = requestCounts{"all": reqs}
		r.Results = append(r.Results, x)
	}
	if len(r.Results) == 0 {
		return r, fmt.Errorf("the main table has no rows")
	}
	return r, nil
}

// chart draws two panels against N: the time to converge, and API requests
// per object, one line per implementation.
func (r report) chart(path string) error {
	var order []string
	byImpl := map[string][]result{}
	for _, x := range r.Results {
		if _, ok := byImpl[x.Impl]; !ok {
			order = append(order, x.Impl)
		}
		byImpl[x.Impl] = append(byImpl[x.Impl], x)
	}
	panel := func(title, ylabel string, y func(result) float64) (*plot.Plot, error) {
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
	conv, err := panel(fmt.Sprintf("Time to converge (QPS/burst %s)", r.Main), "seconds",
		func(x result) float64 { return x.Converge.Seconds() })
	if err != nil {
		return err
	}
	reqs, err := panel("API requests per object", "requests", func(x result) float64 {
		return float64(x.Requests.Total()) / float64(x.N)
	})
	if err != nil {
		return err
	}
	// Requests per object on a linear axis from zero, so that 9 against 5
	// looks like 9 against 5; the lines sit high, the legend goes below them.
	reqs.Y.Scale, reqs.Y.Tick.Marker = plot.LinearScale{}, plot.DefaultTicks{}
	reqs.Y.Min = 0
	reqs.Legend.Top, reqs.Legend.Left = false, false

	img := vgimg.New(13*vg.Inch, 5.5*vg.Inch)
	dc := draw.New(img)
	dc.Canvas.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	tiles := draw.Tiles{Rows: 1, Cols: 2, PadX: vg.Inch / 2, PadTop: vg.Inch / 8, PadBottom: vg.Inch / 8, PadLeft: vg.Inch / 8, PadRight: vg.Inch / 8}
	canvases := plot.Align([][]*plot.Plot{{conv, reqs}}, tiles, dc)
	conv.Draw(canvases[0][0])
	reqs.Draw(canvases[0][1])
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
