package docs

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// CharsPerMinute is the reading rate the Chinese workshop's minutes assume:
// a careful reading of technical Chinese. A Han character counts as one; so
// does a Latin word or an identifier (`Reconcile`, `kubectl`), read at about
// the pace of a character or two.
const CharsPerMinute = 250

// zhAgendaRe is the Chinese workshop's agenda heading.
var zhAgendaRe = regexp.MustCompile(`^## 日程（(\d+) 小时）$`)

// latinRe is a run of Latin letters, digits and the marks of an identifier.
var latinRe = regexp.MustCompile("[A-Za-z0-9][A-Za-z0-9_./:-]*")

// chineseUnits counts what a Chinese reader reads in lines: Han characters,
// and Latin words, each one unit. Comments are left out, as countWords
// leaves them out.
func chineseUnits(lines []string) int {
	n := 0
	for _, l := range lines {
		if _, ok := Comment(strings.TrimSpace(l)); ok {
			continue
		}
		l = strings.TrimLeft(l, "#")
		for _, r := range l {
			if unicode.Is(unicode.Han, r) {
				n++
			}
		}
		n += len(latinRe.FindAllString(l, -1))
	}
	return n
}

// SectionChineseUnits is SectionWords for a Chinese page: the reading units
// of the section whose anchor is given, its subsections included.
func SectionChineseUnits(d *Doc, anchor string) (int, error) {
	lines := d.prose()
	for i, l := range lines {
		m := headingRe.FindStringSubmatch(l)
		if m == nil || Slug(m[2]) != anchor {
			continue
		}
		return chineseUnits(lines[i:sectionEnd(d, i)]), nil
	}
	return 0, fmt.Errorf("no heading with the anchor #%s", anchor)
}

// CheckWorkshopZh holds the Chinese workshop's agenda to its own page: its
// slots follow one another to the hours it promises, and each presented
// slot has at least twice the reading time, at CharsPerMinute, of the
// Chinese sections it links. (The exercises' minutes come from what the
// reader runner typed, the same in both languages: CheckWorkshop.)
func CheckWorkshopZh(root string) ([]string, error) {
	rel := "docs/zh/workshop.md"
	d, err := ReadDoc(filepath.Join(root, rel))
	if err != nil {
		return nil, err
	}
	var problems []string
	bad := func(line int, format string, args ...any) {
		problems = append(problems, fmt.Sprintf("%s:%d: %s", rel, line, fmt.Sprintf(format, args...)))
	}
	hours, head := 0, -1
	for i, l := range d.Lines {
		if m := zhAgendaRe.FindStringSubmatch(l); m != nil {
			hours, _ = strconv.Atoi(m[1])
			head = i
			break
		}
	}
	if head < 0 {
		return []string{rel + ": no \"## 日程（N 小时）\" heading"}, nil
	}
	links := d.Links()
	at, rows := 0, 0
	docsOf := map[string]*Doc{}
	for i := head + 1; i < len(d.Lines) && !strings.HasPrefix(d.Lines[i], "#"); i++ {
		l := d.Lines[i]
		if !strings.HasPrefix(l, "| ") || strings.HasPrefix(l, "| 开始") {
			continue
		}
		cells := strings.Split(strings.Trim(strings.TrimSpace(l), "|"), "|")
		if len(cells) < 4 {
			bad(i+1, "a row of %d cells; want 开始, 分钟, 环节, 讲解内容, 检查点", len(cells))
			continue
		}
		m := clockRe.FindStringSubmatch(strings.TrimSpace(cells[0]))
		minutes, err := strconv.Atoi(strings.TrimSpace(cells[1]))
		if m == nil || err != nil {
			bad(i+1, "start %q and minutes %q: want H:MM and a number", cells[0], cells[1])
			continue
		}
		rows++
		h, _ := strconv.Atoi(m[1])
		mm, _ := strconv.Atoi(m[2])
		if start := h*60 + mm; start != at {
			bad(i+1, "%q starts at %d:%02d; the slots before it end at %d:%02d", strings.TrimSpace(cells[2]), h, mm, at/60, at%60)
		}
		at = h*60 + mm + minutes
		units := 0
		for _, k := range links {
			if k.Line != i+1 {
				continue
			}
			cm := chapterLink.FindStringSubmatch(k.Dest)
			if cm == nil || cm[2] == "" {
				continue
			}
			cd, ok := docsOf[cm[1]]
			if !ok {
				if cd, err = ReadDoc(filepath.Join(root, "docs", "zh", cm[1]+".md")); err != nil {
					return nil, err
				}
				docsOf[cm[1]] = cd
			}
			n, err := SectionChineseUnits(cd, cm[2])
			if err != nil {
				bad(i+1, "%s: %v", k.Dest, err)
				continue
			}
			units += n
		}
		if units == 0 {
			continue
		}
		reading := (units + CharsPerMinute - 1) / CharsPerMinute
		if minutes < presentFactor*reading {
			bad(i+1, "%q has %d minutes for Chinese sections of %d characters (%d minutes' reading at %d a minute): it needs at least %d",
				strings.TrimSpace(cells[2]), minutes, units, reading, CharsPerMinute, presentFactor*reading)
		}
	}
	if rows == 0 {
		bad(head+1, "the agenda has no rows")
	} else if at != hours*60 {
		bad(head+1, "the agenda ends at %d:%02d, not at the %d hours it promises", at/60, at%60, hours)
	}
	return problems, nil
}
