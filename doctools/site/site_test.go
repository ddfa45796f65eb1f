//go:build site

// Package site tests the tutorial as a site, in a real browser: it runs
// `make docs-serve` as a reader types it, and drives headless Chromium
// (Debian's chromium; CHROMIUM names another) over what it serves.
//
//	cd doctools && GOWORK=off go test -tags site -count=1 ./site
//
// Screenshots, and the output of make docs-serve, go to _artifacts/site/ at
// the repository root.
package site

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"example.com/k8s-demo/doctools/docs"
	"example.com/k8s-demo/e2e/cluster"
	"example.com/k8s-demo/e2e/process"
	"example.com/k8s-demo/e2e/retries"
)

// The site's two languages: where each one's pages are, and its index.
// hanRe finds a Han character: Chinese text.
var hanRe = regexp.MustCompile(`\p{Han}`)

var languages = []struct{ prefix, index string }{
	{"/", "docs/README.md"},
	{"/zh/", "docs/zh/README.md"},
}

func pagePath(prefix, name string) string {
	if name == "README" {
		return prefix
	}
	return prefix + name + "/"
}

// serve runs `make docs-serve` on a free port, as a reader would, and
// returns its base URL once it answers. Its output goes to docs-serve.log
// in shots.
func serve(t *testing.T, root, shots string) string {
	t.Helper()
	port, err := process.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	p, err := process.Start(process.Spec{Name: "make docs-serve", Path: "make", Args: []string{"docs-serve", "DOCS_ADDR=" + addr},
		Dir: root, LogFile: filepath.Join(shots, "docs-serve.log")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Stop() })
	base := "http://" + addr
	// A cold first build compiles Hugo: that takes minutes on 2 cores.
	deadline := time.Now().Add(20 * time.Minute)
	for {
		if !p.Running() {
			t.Fatalf("make docs-serve exited before serving the site: %v\n%s", p.ExitErr(), p.Tail(30))
		}
		if resp, err := http.Get(base + "/"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return base
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("make docs-serve: nothing answered on %s in 20 minutes:\n%s", base, p.Tail(30))
		}
		time.Sleep(time.Second)
	}
}

// browser is a headless Chromium that records what leaves the site and
// what the pages log as errors.
type browser struct {
	ctx  context.Context
	host string

	mu       sync.Mutex
	outside  []string // requests to anywhere but the site
	problems []string // console errors and uncaught exceptions
}

func newBrowser(t *testing.T, base string) *browser {
	t.Helper()
	exe := os.Getenv("CHROMIUM")
	if exe == "" {
		exe = "/usr/bin/chromium"
	}
	if _, err := os.Stat(exe); err != nil {
		t.Fatalf("no Chromium at %s (Debian or Ubuntu: sudo apt-get install chromium; or set CHROMIUM): %v", exe, err)
	}
	u, _ := url.Parse(base)
	// Not t.TempDir: Chromium's helper processes can still write to the
	// profile for a moment after the browser has exited, and t.TempDir's
	// removal fails the test then. This removal runs after the browser's
	// cancel (cleanups run last in, first out) and tries again.
	profile, err := os.MkdirTemp("", "site-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for try := 0; ; try++ {
			err := os.RemoveAll(profile)
			if err == nil {
				if try > 0 {
					retries.Note(t, fmt.Sprintf("removing Chromium's profile took %d tries (its helpers were still writing to it)", try+1))
				}
				return
			}
			if try == 50 {
				t.Errorf("removing Chromium's profile %s: %v", profile, err)
				return
			}
			time.Sleep(200 * time.Millisecond)
		}
	})
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		// Nothing of Chromium's own may try the network either: the
		// test counts every request that leaves the site.
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1280, 900),
	}
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	ctx, cancel2 := chromedp.NewContext(actx)
	t.Cleanup(cancel2)
	b := &browser{ctx: ctx, host: u.Host}
	chromedp.ListenTarget(ctx, func(ev any) {
		b.mu.Lock()
		defer b.mu.Unlock()
		switch e := ev.(type) {
		case *network.EventRequestWillBeSent:
			r, err := url.Parse(e.Request.URL)
			if err == nil && (r.Scheme == "data" || r.Scheme == "blob" || r.Host == b.host) {
				return
			}
			b.outside = append(b.outside, e.Request.URL)
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.APITypeError {
				var args []string
				for _, a := range e.Args {
					args = append(args, string(a.Value))
				}
				b.problems = append(b.problems, "console.error: "+strings.Join(args, " "))
			}
		case *runtime.EventExceptionThrown:
			b.problems = append(b.problems, "exception: "+e.ExceptionDetails.Text+" "+fmt.Sprint(e.ExceptionDetails.Exception.Description))
		}
	})
	if err := chromedp.Run(ctx, network.Enable(), runtime.Enable()); err != nil {
		t.Fatal(err)
	}
	return b
}

// take returns and clears what was recorded since the last call.
func (b *browser) take() (outside, problems []string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	outside, problems = b.outside, b.problems
	b.outside, b.problems = nil, nil
	return
}

func (b *browser) run(t *testing.T, what string, actions ...chromedp.Action) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, time.Minute)
	defer cancel()
	if err := chromedp.Run(ctx, actions...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// pathname is the current page's path.
func (b *browser) pathname(t *testing.T) string {
	var p string
	b.run(t, "reading location.pathname", chromedp.Evaluate(`decodeURI(location.pathname)`, &p))
	return p
}

func TestSite(t *testing.T) {
	root, err := cluster.FindRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	shots := filepath.Join(root, "_artifacts", "site")
	if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	base := serve(t, root, shots)
	b := newBrowser(t, base)

	for _, lang := range languages {
		order, err := docs.ReadingOrder(root, lang.index)
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		// chinese: the pages under /zh/ that have a Chinese version (the
		// others, such as harness.md, are shown in English there).
		chinese := map[string]bool{}
		for _, p := range order {
			want = append(want, pagePath(lang.prefix, p.Name))
			if _, err := os.Stat(filepath.Join(root, "docs", "zh", p.Name+".md")); err == nil && lang.prefix == "/zh/" {
				chinese[pagePath(lang.prefix, p.Name)] = true
			}
		}

		// Every page loads, with no console error and no request that
		// leaves the site; and "next" leads through them in reading order.
		t.Run("pages in reading order "+lang.prefix, func(t *testing.T) {
			b.take()
			b.run(t, "opening "+want[0], chromedp.Navigate(base+want[0]), chromedp.WaitReady("main#content"))
			var got []string
			for i := 0; ; i++ {
				here := b.pathname(t)
				got = append(got, here)
				outside, problems := b.take()
				for _, u := range outside {
					t.Errorf("%s requested %s, outside the site", here, u)
				}
				for _, p := range problems {
					t.Errorf("%s: %s", here, p)
				}
				if i >= len(want) {
					break
				}
				var next string
				// The pager's "next" link is the one pushed to the right.
				b.run(t, "finding the next page's link on "+here, chromedp.Evaluate(
					`(() => { const a = document.querySelector('main#content a[class*="hx:ltr:ml-auto"][title]'); return a ? a.href : ""; })()`, &next))
				if next == "" {
					break
				}
				b.run(t, "following next from "+here, chromedp.Navigate(next), chromedp.WaitReady("main#content"))
			}
			if !slices.Equal(got, want) {
				t.Errorf("following \"next\" from %s visits:\n  %s\nwant the reading order of %s:\n  %s", want[0], strings.Join(got, "\n  "), lang.index, strings.Join(want, "\n  "))
			}
		})

		// Every diagram is an SVG the browser drew, with a size.
		t.Run("diagrams "+lang.prefix, func(t *testing.T) {
			n := 0
			var zhDiagrams []struct{ page, src string }
			for _, p := range want {
				var imgs []struct {
					Src           string
					Width, Height float64
					Complete      bool
				}
				// Images load lazily: each is made eager, and waited for.
				b.run(t, "opening "+p, chromedp.Navigate(base+p), chromedp.WaitReady("main#content"),
					chromedp.Evaluate(`Promise.all([...document.querySelectorAll('main#content img')].filter(i => /\.svg$/.test(new URL(i.src).pathname)).map(i => { i.loading = 'eager'; return i.decode().catch(() => null).then(() => ({Src: i.src, Width: i.naturalWidth, Height: i.naturalHeight, Complete: i.complete})); }))`, &imgs,
						func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }))
				for _, img := range imgs {
					n++
					if !img.Complete || img.Width == 0 || img.Height == 0 {
						t.Errorf("%s: the diagram %s did not render (%vx%v)", p, img.Src, img.Width, img.Height)
						continue
					}
					resp, err := http.Get(img.Src)
					if err != nil {
						t.Error(err)
						continue
					}
					buf := make([]byte, 512)
					k, _ := resp.Body.Read(buf)
					resp.Body.Close()
					if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "image/svg+xml") || !strings.Contains(string(buf[:k]), "<svg") {
						t.Errorf("%s: %s is served as %q and starts %q; want an SVG", p, img.Src, ct, string(buf[:min(k, 60)]))
					}
					if chinese[p] {
						zhDiagrams = append(zhDiagrams, struct{ page, src string }{p, img.Src})
					}
				}
				b.take()
			}
			if n == 0 {
				t.Errorf("no diagram on any page under %s", lang.prefix)
			}
			t.Logf("%d diagrams under %s", n, lang.prefix)
			// A Chinese page shows its Chinese diagram: opened in the
			// browser, the drawing's text is Chinese.
			for _, d := range zhDiagrams {
				var text string
				b.run(t, "opening "+d.src, chromedp.Navigate(d.src),
					chromedp.Evaluate(`document.documentElement.textContent`, &text))
				if !strings.HasSuffix(d.src, ".zh.svg") || !hanRe.MatchString(text) {
					t.Errorf("%s: the diagram %s is not a Chinese one: its text in the browser starts %q", d.page, d.src, text[:min(len(text), 80)])
				}
			}
			if lang.prefix == "/zh/" && len(zhDiagrams) == 0 {
				t.Error("no Chinese diagram read on any page under /zh/")
			}
		})
	}

	// Chinese shows as Chinese: a line break inside a paragraph of the
	// source is a space in the browser, and between two Han characters it
	// is a stray space mid-sentence (the markdown stays as GitHub shows it,
	// which does the same, so the pages are not hard-wrapped and Hugo's
	// East Asian line breaks stay off). Every space between two Han
	// characters of every Chinese page's text must be in its source.
	t.Run("no stray spaces in Chinese", func(t *testing.T) {
		pages, err := filepath.Glob(filepath.Join(root, "docs", "zh", "*.md"))
		if err != nil || len(pages) == 0 {
			t.Fatalf("no docs/zh/*.md (%v)", err)
		}
		checked := 0
		for _, page := range pages {
			source, err := os.ReadFile(page)
			if err != nil {
				t.Fatal(err)
			}
			p := pagePath("/zh/", strings.TrimSuffix(filepath.Base(page), ".md"))
			var found []struct{ Pair, Context string }
			b.run(t, "reading the text of "+p, chromedp.Navigate(base+p), chromedp.WaitReady("main#content"),
				chromedp.Evaluate(`[...document.querySelectorAll('main#content p, main#content li, main#content td, main#content th')].flatMap(e => [...e.innerText.matchAll(/(\p{Script=Han}) (\p{Script=Han})/gu)].map(m => ({Pair: m[0], Context: e.innerText.slice(Math.max(0, m.index - 12), m.index + 15)})))`, &found))
			checked++
			for _, f := range found {
				if !strings.Contains(string(source), f.Pair) {
					t.Errorf("%s shows %q (in %q), which docs/zh/%s does not have: a line break inside a Chinese paragraph?", p, f.Pair, f.Context, filepath.Base(page))
				}
			}
			b.take()
		}
		t.Logf("%d Chinese pages read", checked)
	})

	// The search box finds a word in the pages that hold it, in English
	// and in Chinese (the index is the site's own, built with it).
	for _, c := range []struct{ start, query, want string }{
		{"/", "informer", "/concepts/"},
		{"/zh/", "控制器", "/zh/concepts/"},
	} {
		t.Run("search "+c.query, func(t *testing.T) {
			// The navbar's search box (the sidebar has one for small
			// screens, hidden here): typed into as a reader types.
			var found bool
			var results []string
			b.run(t, "searching "+c.query+" on "+c.start,
				chromedp.Navigate(base+c.start), chromedp.WaitReady("main#content"),
				chromedp.Evaluate(`(() => { const i = [...document.querySelectorAll('.hextra-search-wrapper input')].find(i => i.getClientRects().length > 0); if (!i) return false; i.id = 'site-test-search'; return true; })()`, &found))
			if !found {
				t.Fatalf("%s: no visible search box", c.start)
			}
			// Focusing the box loads the index; a reader who types before it
			// is loaded sees nothing and types again: wait for it instead.
			b.run(t, "searching "+c.query+" on "+c.start,
				chromedp.Click(`#site-test-search`, chromedp.ByQuery),
				chromedp.Poll(`window.pageIndex !== undefined && window.pageIndex.search('kubectl', 1).length > 0`, nil),
				chromedp.SendKeys(`#site-test-search`, c.query, chromedp.ByQuery),
				chromedp.WaitVisible(`.hextra-search-results a`, chromedp.ByQuery),
				chromedp.Evaluate(`[...document.querySelectorAll('.hextra-search-results a')].map(a => decodeURI(new URL(a.href).pathname))`, &results))
			if !slices.Contains(results, c.want) {
				t.Errorf("searching %q on %s: results %v, want %s among them", c.query, c.start, results, c.want)
			}
			outside, problems := b.take()
			if len(outside)+len(problems) > 0 {
				t.Errorf("searching %q: requests outside the site %v, errors %v", c.query, outside, problems)
			}
		})
	}

	// The language switch keeps the reader on the same page: open the
	// switcher, pick the other language.
	for _, c := range []struct{ from, to, label string }{
		{"/crd-demo/", "/zh/crd-demo/", "中文"},
		{"/zh/versions/", "/versions/", "English"},
	} {
		t.Run("language switch "+c.from, func(t *testing.T) {
			visible := `(el => el && el.getClientRects().length > 0)`
			var clicked bool
			b.run(t, "opening the language switcher on "+c.from,
				chromedp.Navigate(base+c.from), chromedp.WaitReady("main#content"),
				chromedp.Evaluate(`(() => { const v = `+visible+`; const b = [...document.querySelectorAll('button.hextra-language-switcher')].find(v); if (!b) return false; b.click(); return true; })()`, &clicked))
			if !clicked {
				t.Fatalf("%s: no visible language switcher", c.from)
			}
			b.run(t, "choosing "+c.label,
				// The click leaves the page: it runs after the answer.
				chromedp.Poll(fmt.Sprintf(`(() => { const v = `+visible+`; const a = [...document.querySelectorAll('ul.hextra-language-options a')].find(a => v(a) && a.textContent.trim() === %q); if (!a) return false; setTimeout(() => a.click(), 0); return true; })()`, c.label), nil))
			// While the page changes, the browser cannot answer: ask again.
			var got string
			for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
				ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
				err := chromedp.Run(ctx, chromedp.Evaluate(`document.readyState === 'complete' ? decodeURI(location.pathname) : ''`, &got))
				cancel()
				if err == nil && got != "" && got != c.from {
					break
				}
			}
			if got != c.to {
				t.Errorf("the language switch on %s leads to %s, want %s", c.from, got, c.to)
			}
			b.take()
		})
	}

	// Screenshots of three pages in both languages, for a person to look at.
	for _, p := range []string{"README", "concepts", "crd-demo"} {
		for _, lang := range []struct{ name, prefix string }{{"en", "/"}, {"zh", "/zh/"}} {
			path := pagePath(lang.prefix, p)
			var png []byte
			b.run(t, "screenshot of "+path, chromedp.Navigate(base+path), chromedp.WaitReady("main#content"),
				chromedp.Sleep(300*time.Millisecond), chromedp.CaptureScreenshot(&png))
			if err := os.WriteFile(filepath.Join(shots, lang.name+"-"+p+".png"), png, 0o644); err != nil {
				t.Fatal(err)
			}
			b.take()
		}
	}
	t.Logf("screenshots in %s", shots)
}
