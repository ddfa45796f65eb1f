package docs

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestArticlesSummaryCountsItsRows keeps the summary table at the top of
// docs/articles.md (and its Chinese twin) equal to the step rows below it:
// the review of 2026-11-26 found the summary saying 101 reproduced where the
// rows said 97.
func TestArticlesSummaryCountsItsRows(t *testing.T) {
	for _, c := range []struct {
		page                          string
		reproduced, changed, notRepro string
	}{
		{"docs/articles.md", "reproduced", "changed", "not reproduced"},
		{"docs/zh/articles.md", "已重现", "有改动", "未重现"},
	} {
		// go test runs in doctools/docs: the repository is two levels up.
		text, err := os.ReadFile(filepath.Join("..", "..", c.page))
		if err != nil {
			t.Fatal(err)
		}
		summary, rows, err := articleCounts(string(text), c.reproduced, c.changed, c.notRepro)
		if err != nil {
			t.Errorf("%s: %v", c.page, err)
			continue
		}
		if len(summary) == 0 {
			t.Errorf("%s: no summary rows found (| [000](#...) | steps | ... |)", c.page)
		}
		for article, want := range rows {
			if got := summary[article]; got != want {
				t.Errorf("%s: the summary says article %s has %v (steps, reproduced, changed, not reproduced); its rows have %v", c.page, article, got, want)
			}
		}
		var all [4]int
		for _, n := range rows {
			for i := range all {
				all[i] += n[i]
			}
		}
		if got := summary["all"]; got != all {
			t.Errorf("%s: the summary's total says %v; the rows add up to %v", c.page, got, all)
		}
	}
}

var (
	summaryRowRe = regexp.MustCompile(`^\| (?:\[(\d{3})\]\([^)]*\)|(all|合计)) \| (\d+) \| (\d+) \| (\d+) \| (\d+) \|$`)
	stepRowRe    = regexp.MustCompile(`^\| (\d{3})-\d\d \|`)
)

// articleCounts reads the summary table (article -> steps, reproduced,
// changed, not reproduced; "all" for the total) and counts the step rows by
// the status in their last cell.
func articleCounts(text, reproduced, changed, notRepro string) (summary, rows map[string][4]int, err error) {
	summary, rows = map[string][4]int{}, map[string][4]int{}
	for i, line := range strings.Split(text, "\n") {
		if m := summaryRowRe.FindStringSubmatch(line); m != nil {
			key := m[1]
			if key == "" {
				key = "all"
			}
			var n [4]int
			for j := range n {
				if _, err := fmt.Sscan(m[3+j], &n[j]); err != nil {
					return nil, nil, fmt.Errorf("line %d, %s: %q is not a number: %v", i+1, key, m[3+j], err)
				}
			}
			summary[key] = n
			continue
		}
		m := stepRowRe.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		status := strings.TrimSpace(cells[len(cells)-1])
		n := rows[m[1]]
		n[0]++
		switch {
		case strings.HasPrefix(status, notRepro):
			n[3]++
		case strings.HasPrefix(status, reproduced):
			n[1]++
		case strings.HasPrefix(status, changed):
			n[2]++
		default:
			return nil, nil, fmt.Errorf("line %d: status %q is none of %q, %q, %q", i+1, status, reproduced, changed, notRepro)
		}
		rows[m[1]] = n
	}
	return summary, rows, nil
}
