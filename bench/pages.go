package main

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
)

// The figures of a run are kept as data beside the page they are written
// into (docs/bench.md's in docs/bench.json): every page that shows them is
// rendered from that file, by the run and again by `-redraw`, and `-check`
// (make verify) fails when a page says anything else. A figure typed into a
// page, or a table edited under the text that cites it, is caught there.

// dataPath is the data file kept beside the page md: its name with .json.
func dataPath(md string) string {
	return strings.TrimSuffix(md, ".md") + ".json"
}

func writeData(path string, r report) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

func readData(path string) (report, error) {
	var r report
	b, err := os.ReadFile(path)
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("%s: %w", path, err)
	}
	if len(r.Results) == 0 {
		return r, fmt.Errorf("%s: no results", path)
	}
	return r, nil
}

// summarySection is the region of comparison.md (and its Chinese twin) that
// the default run writes: the figures the comparison cites.
const summarySection = "bench-summary"

// comparisonSummary is what comparison.md says about the run (in Chinese
// for its twin): a table of each implementation at the largest N, and what
// client-go's controller costs next to kubebuilder's, in proportions
// computed here, so that no sentence about time or memory is written by
// hand.
func (r report) comparisonSummary(zh bool) string {
	n := maxN(r.Results)
	var rows []summary
	for _, x := range r.Results {
		if x.N == n {
			rows = append(rows, x)
		}
	}
	var b strings.Builder
	if zh {
		fmt.Fprintf(&b, "`make bench`，N = %d：同时创建 %d 个 %s，每种实现的 QPS/burst 都是 %s，%d 个工作协程；取 %d 次运行的中位数。测量环境（bench 的原始输出）：%s。\n\n",
			n, n, rows[0].Kind, r.Main, r.Workers, r.Repeat, r.Env)
	} else {
		fmt.Fprintf(&b, "`make bench` at N = %d: %d %ss created at once, every implementation at QPS/burst %s with %d workers; medians of %d runs. %s.\n\n",
			n, n, rows[0].Kind, r.Main, r.Workers, r.Repeat, r.Env)
	}
	b.WriteString("|")
	for _, x := range rows {
		b.WriteString(" | " + implName(x.Impl, zh))
	}
	b.WriteString(" |\n|---|" + strings.Repeat("--:|", len(rows)) + "\n")
	line := func(en, zhLabel string, cell func(x summary) string) {
		b.WriteString("| " + pick(zh, en, zhLabel) + " |")
		for _, x := range rows {
			b.WriteString(" " + cell(x) + " |")
		}
		b.WriteString("\n")
	}
	line("converged in (fastest–slowest run)", "收敛用时（最快–最慢的一次）", func(x summary) string {
		return seconds(x.Converge) + " (" + spread(x.Min, x.Max) + ")"
	})
	line("× the plain loop", "× 普通循环", func(x summary) string {
		if f := ratio(x, r.Results); f > 0 {
			return fmt.Sprintf("%.2f×", f)
		}
		return "—"
	})
	line("API requests per object", "每个对象的 API 请求数", func(x summary) string { return fmt.Sprintf("%.1f", float64(x.Requests)/float64(x.N)) })
	line("CPU per object", "每个对象的 CPU 时间", func(x summary) string { return fmt.Sprintf("%.2f ms", float64(x.cpuPerObject().Microseconds())/1e3) })
	line("peak RSS", "内存峰值（RSS）", func(x summary) string { return fmt.Sprintf("%.1f MiB", float64(x.PeakRSS)/mib) })
	line("of which anonymous (heap, stacks)", "其中匿名内存（堆、栈）", func(x summary) string { return fmt.Sprintf("%.1f MiB", float64(x.PeakAnon)/mib) })
	line("start-up", "启动时间", func(x summary) string {
		if x.Startup == 0 {
			return "—"
		}
		return fmt.Sprintf("%d ms", x.Startup.Milliseconds())
	})
	i := slices.IndexFunc(rows, func(x summary) bool { return x.Impl == "client-go" })
	j := slices.IndexFunc(rows, func(x summary) bool { return x.Impl == "kubebuilder" })
	if i >= 0 && j >= 0 {
		c, k := rows[i], rows[j]
		pct := func(a, b float64) string {
			if b == 0 {
				return "—"
			}
			return fmt.Sprintf("%.0f%%", 100*a/b)
		}
		t, cpu, rss, anon, start := pct(c.Converge.Seconds(), k.Converge.Seconds()), pct(float64(c.ObjectCPU), float64(k.ObjectCPU)),
			pct(float64(c.PeakRSS), float64(k.PeakRSS)), pct(float64(c.PeakAnon), float64(k.PeakAnon)), pct(c.Startup.Seconds(), k.Startup.Seconds())
		if zh {
			fmt.Fprintf(&b, "\nclient-go 的控制器与 kubebuilder 的管理器相比：收敛用时是后者的 %s，每个对象的 CPU 时间是 %s，内存峰值是 %s（匿名内存是 %s），启动时间是 %s。\n", t, cpu, rss, anon, start)
		} else {
			fmt.Fprintf(&b, "\nclient-go's controller against kubebuilder's manager: %s of its time to converge, %s of its CPU per object, %s of its peak RSS (%s of its anonymous memory), %s of its start-up.\n", t, cpu, rss, anon, start)
		}
	}
	return b.String()
}

// implName is a row's name on a page: the plain loops' names in Chinese on
// a Chinese page; the others are the tools' own names.
func implName(name string, zh bool) string {
	if !zh {
		return name
	}
	switch name {
	case "plain loop":
		return "普通循环"
	case finalWritesLoop:
		return "只写 4 次的普通循环"
	}
	return name
}

// pageRegion is one generated region of one page, and what it should hold.
type pageRegion struct {
	page, section, want string
}

// regions are the regions a run's data gives: its section of md, and, for
// the default run, comparison's summary in each of compareDocs.
func (r report) regions(md, section string, compareDocs []string) []pageRegion {
	out := r.regionsToWrite(md, section, compareDocs)
	out[0].want = r.markdown()
	for k := 1; k < len(out); k++ {
		out[k].want = r.comparisonSummary(chinese(out[k].page))
	}
	return out
}

// regionsToWrite are the regions regions would give, without their text:
// where a run will write.
func (r report) regionsToWrite(md, section string, compareDocs []string) []pageRegion {
	out := []pageRegion{{md, section, ""}}
	if section == mainSection {
		for _, d := range compareDocs {
			if d != "" {
				out = append(out, pageRegion{d, summarySection, ""})
			}
		}
	}
	return out
}

// checkPages fails when a region of a page is not what the data gives.
func checkPages(regions []pageRegion) error {
	bad := 0
	for _, g := range regions {
		have, err := readGenerated(inRoot(g.page), g.section)
		if err != nil {
			return err
		}
		if have != g.want {
			bad++
			fmt.Fprintf(os.Stderr, "%s: its %s section is not what the bench's data gives:\n%s\n", g.page, g.section, firstDifference(have, g.want))
		}
	}
	if bad > 0 {
		return fmt.Errorf("%d generated sections differ from the bench's data: a figure in them was written by hand, or the data changed under them (cd bench && go run . -redraw writes them from the data; make bench measures again)", bad)
	}
	return nil
}

// readGenerated is what lies between the section's markers.
func readGenerated(path, section string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	begin, end := markers(section)
	s := string(b)
	i, j := strings.Index(s, begin), strings.Index(s, end)
	if i < 0 || j < i {
		return "", fmt.Errorf("%s: want the lines %q and %q around the generated section", path, begin, end)
	}
	return strings.TrimPrefix(s[i+len(begin):j], "\n"), nil
}

// firstDifference names the first line where have and want part.
func firstDifference(have, want string) string {
	h, w := strings.Split(have, "\n"), strings.Split(want, "\n")
	for k := range max(len(h), len(w)) {
		var a, b string
		if k < len(h) {
			a = h[k]
		}
		if k < len(w) {
			b = w[k]
		}
		if a != b {
			return fmt.Sprintf("  line %d of the section:\n    the page says: %q\n    the data give: %q", k+1, a, b)
		}
	}
	return ""
}
