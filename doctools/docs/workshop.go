package docs

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// The workshop's agenda is held to what was measured: docs/workshop.md's
// "## Agenda (N hours)" table must add up to its hours, have a buffer, give
// each presented slot at least twice the reading time of the sections it
// links (the time to demo and to answer), give the exercises at least three
// times what the reader runner took to type them (docs/reader-times.tsv's
// workshop#exercise-N: a pair reads, predicts and types), and present every
// chapter an exercise builds on before the exercises.
const (
	presentFactor  = 2
	exerciseFactor = 3
	minBuffer      = 15
)

var (
	agendaRe    = regexp.MustCompile(`^## Agenda \((\d+) hours\)$`)
	clockRe     = regexp.MustCompile(`^(\d+):(\d\d)$`)
	exerciseRe  = regexp.MustCompile(`^## Exercise (\d+)`)
	takeHomeRe  = regexp.MustCompile(`take-home`)
	chapterLink = regexp.MustCompile(`^([a-z-]+)\.md(?:#(.*))?$`)
)

type slot struct {
	line       int
	start, min int
	name       string
	presents   []Link
}

// CheckWorkshop reports what in the workshop's agenda does not add up.
func CheckWorkshop(root string) ([]string, error) {
	path := filepath.Join(root, "docs", "workshop.md")
	d, err := ReadDoc(path)
	if err != nil {
		return nil, err
	}
	rt, err := ReadReaderTimes(filepath.Join(root, "docs", "reader-times.tsv"))
	if err != nil {
		return nil, err
	}
	order, err := ReadingOrder(root, "docs/README.md")
	if err != nil {
		return nil, err
	}
	// The chapters: the reading order's numbered pages (the reference
	// pages are looked things up in, not built on).
	chapters := map[string]bool{}
	numbered := regexp.MustCompile(`^\d+\. `)
	for _, p := range order {
		chapters[p.Name] = numbered.MatchString(p.LinkTitle)
	}
	var problems []string
	bad := func(line int, format string, args ...any) {
		problems = append(problems, fmt.Sprintf("docs/workshop.md:%d: %s", line, fmt.Sprintf(format, args...)))
	}

	// The table.
	hours, head := 0, -1
	for i, l := range d.Lines {
		if m := agendaRe.FindStringSubmatch(l); m != nil {
			hours, _ = strconv.Atoi(m[1])
			head = i
			break
		}
	}
	if head < 0 {
		return []string{"docs/workshop.md: no \"## Agenda (N hours)\" heading"}, nil
	}
	links := d.Links()
	var slots []slot
	for i := head + 1; i < len(d.Lines) && !strings.HasPrefix(d.Lines[i], "#"); i++ {
		l := d.Lines[i]
		if !strings.HasPrefix(l, "| ") || strings.HasPrefix(l, "| start") {
			continue
		}
		cells := strings.Split(strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(l), "|"), "|"), "|")
		for j := range cells {
			cells[j] = strings.TrimSpace(cells[j])
		}
		if len(cells) < 4 {
			bad(i+1, "a row of %d cells; want start, min, slot, presents, checkpoint", len(cells))
			continue
		}
		m := clockRe.FindStringSubmatch(strings.TrimSpace(cells[0]))
		n, err := strconv.Atoi(strings.TrimSpace(cells[1]))
		if m == nil || err != nil {
			bad(i+1, "start %q and minutes %q: want H:MM and a number", cells[0], cells[1])
			continue
		}
		h, _ := strconv.Atoi(m[1])
		mm, _ := strconv.Atoi(m[2])
		s := slot{line: i + 1, start: h*60 + mm, min: n, name: strings.TrimSpace(cells[2])}
		for _, k := range links {
			if k.Line == i+1 {
				s.presents = append(s.presents, k)
			}
		}
		slots = append(slots, s)
	}
	if len(slots) == 0 {
		return []string{fmt.Sprintf("docs/workshop.md:%d: the agenda has no rows", head+1)}, nil
	}
	clock := func(m int) string { return fmt.Sprintf("%d:%02d", m/60, m%60) }
	at, buffer := 0, false
	for _, s := range slots {
		if s.start != at {
			bad(s.line, "%q starts at %s; the slots before it end at %s", s.name, clock(s.start), clock(at))
		}
		at = s.start + s.min
		buffer = buffer || strings.HasPrefix(s.name, "Buffer") && s.min >= minBuffer
	}
	if at != hours*60 {
		bad(head+1, "the agenda ends at %s, not at the %d hours it promises", clock(at), hours)
	}
	if !buffer {
		bad(head+1, "no \"Buffer\" slot of %d minutes or more", minBuffer)
	}

	// Each presented slot against its sections' reading time.
	docsOf := map[string]*Doc{}
	presented := map[string]int{} // chapter -> the first slot's index that presents it
	exercisesAt := -1
	for i, s := range slots {
		if strings.HasPrefix(s.name, "Exercises") {
			exercisesAt = i
			continue
		}
		words := 0
		for _, k := range s.presents {
			m := chapterLink.FindStringSubmatch(k.Dest)
			if m == nil || m[2] == "" {
				continue // a link to this page, or to a whole page
			}
			if _, ok := presented[m[1]]; !ok {
				presented[m[1]] = i
			}
			cd, ok := docsOf[m[1]]
			if !ok {
				if cd, err = ReadDoc(filepath.Join(root, "docs", m[1]+".md")); err != nil {
					return nil, err
				}
				docsOf[m[1]] = cd
			}
			n, err := SectionWords(cd, m[2])
			if err != nil {
				bad(s.line, "%s: %v", k.Dest, err)
				continue
			}
			words += n
		}
		if words == 0 {
			continue
		}
		reading := (words + WordsPerMinute - 1) / WordsPerMinute
		if s.min < presentFactor*reading {
			bad(s.line, "%q has %d minutes for sections of %d words (%d minutes' reading): it needs at least %d", s.name, s.min, words, reading, presentFactor*reading)
		}
	}

	// The exercises against their measured times, and what they build on.
	if exercisesAt < 0 {
		bad(head+1, "no \"Exercises\" slot")
		return problems, nil
	}
	secs := map[int]int{}
	var sections []int
	for i, l := range d.Lines {
		m := exerciseRe.FindStringSubmatch(l)
		if m == nil || takeHomeRe.MatchString(l) {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		sections = append(sections, n)
		t, ok := rt.Seconds["workshop#exercise-"+m[1]]
		if !ok {
			bad(i+1, "no time for exercise %d in docs/reader-times.tsv: run the reader's workshop pass, then doctimes -from", n)
			continue
		}
		secs[n] = t
		// What the exercise links to must have been presented.
		for _, k := range links {
			if k.Line <= i+1 || k.Line > sectionEnd(d, i) {
				continue
			}
			if cm := chapterLink.FindStringSubmatch(k.Dest); cm != nil && chapters[cm[1]] && cm[1] != "README" {
				if at, ok := presented[cm[1]]; !ok || at > exercisesAt {
					bad(k.Line, "exercise %d builds on %s, which no slot before the exercises presents", n, cm[1]+".md")
				}
			}
		}
	}
	if len(sections) > 0 && len(secs) == len(sections) {
		// Exercise 1 (the first), then the longest of the others.
		need := secs[sections[0]]
		longest := 0
		for _, n := range sections[1:] {
			longest = max(longest, secs[n])
		}
		need += longest
		floor := exerciseFactor * ((need + 59) / 60)
		if s := slots[exercisesAt]; s.min < floor {
			bad(s.line, "%q has %d minutes; exercise %d and the longest of the others took the reader runner %ds, so it needs at least %d", s.name, s.min, sections[0], need, floor)
		}
	}
	return problems, nil
}

// sectionEnd is the index of the last line of the section whose heading is
// at line index i: up to the next heading of its level or higher.
func sectionEnd(d *Doc, i int) int {
	m := headingRe.FindStringSubmatch(d.prose()[i])
	if m == nil {
		return i
	}
	lines := d.prose()
	for j := i + 1; j < len(lines); j++ {
		if n := headingRe.FindStringSubmatch(lines[j]); n != nil && len(n[1]) <= len(m[1]) {
			return j
		}
	}
	return len(lines)
}

// SectionWords counts the prose words of the section whose anchor is given,
// its subsections included.
func SectionWords(d *Doc, anchor string) (int, error) {
	lines := d.prose()
	for i, l := range lines {
		m := headingRe.FindStringSubmatch(l)
		if m == nil || Slug(m[2]) != anchor {
			continue
		}
		return countWords(lines[i:sectionEnd(d, i)]), nil
	}
	return 0, fmt.Errorf("no heading with the anchor #%s", anchor)
}
