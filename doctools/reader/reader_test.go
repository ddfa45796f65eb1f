//go:build reader

package reader

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"example.com/k8s-demo/doctools/docs"
)

// TestMain runs TestReader's passes all at once where they can (OwnNetwork):
// go test runs at most -parallel tests at once, GOMAXPROCS by default, so on
// a 2-core machine the zsh pass waited for the bash pass to end. A -parallel
// given on the command line is kept.
func TestMain(m *testing.M) {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		if err := flag.Set("test.parallel", strconv.Itoa(passes)); err != nil {
			panic(err)
		}
	}
	os.Exit(m.Run())
}

// passes is how many passes TestReader runs, at once where it can.
const passes = 3

// began is when TestReader started: the log says when each part started
// and ended, from it ("at 1m02s").
var began time.Time

// at says how long after TestReader's start it is.
func at() string {
	return "at " + time.Since(began).Round(100*time.Millisecond).String()
}

// TestReader follows the tutorial as a reader types it, in real terminals
// (tmux), from a fresh clone of the repository (its uncommitted changes
// included, and bin/ linked from this one, as after `make tools`), with no
// KUBECONFIG, a PATH without the repository's bin/, and an empty HOME:
//
//	bash:     every chapter, in reading order, in one clone;
//	zsh:      each chapter on its own, in a clone of its own with no cluster
//	          up, as a reader who starts there, under macOS's shell;
//	workshop: the workshop, from its pre-work (`make demo`), under zsh.
//
// So every chapter runs under both shells, and both after the chapters
// before it and on its own.
//
// Each chapter opens new terminals at the repository root. A failure names
// the chapter, the step and the terminal, and shows the screen. Where each
// pass can have a network of its own (Linux), the passes run at once.
// `go test -tags reader ./reader -run 'TestReader/zsh/crd-demo'` runs one
// chapter alone.
func TestReader(t *testing.T) {
	for _, tool := range []string{"tmux", "bash", "zsh", "git"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the reader-mode runner needs %s (Debian: apt-get install tmux zsh; macOS: brew install tmux): %v", tool, err)
		}
	}
	root := repoRoot(t)
	began = time.Now()
	startTimings(t, root)
	network := OwnNetwork()
	if network == nil {
		t.Log("no network namespace here (Linux's unshare and ip): the passes run one after another")
	} else {
		// In a network of its own, the Go module proxy is out of reach: the
		// module cache gets here what a reader's go commands would fetch.
		downloadModules(t, root)
		scaffoldModules(t, root)
		t.Logf("%s: the module cache filled (go mod download)", at())
	}
	pass := func(name, shell string, chapters []string, alone bool) {
		t.Run(name, func(t *testing.T) {
			if network != nil {
				t.Parallel()
			}
			if alone {
				for _, ch := range chapters {
					t.Run(strings.TrimSuffix(ch, ".md"), func(t *testing.T) {
						followChapter(t, newReader(t, shell, newClone(t, root, name), network, name == "workshop"), ch)
					})
				}
				return
			}
			terms := newReader(t, shell, newClone(t, root, name), network, name == "workshop")
			for _, ch := range chapters {
				if !t.Run(strings.TrimSuffix(ch, ".md"), func(t *testing.T) { followChapter(t, terms, ch) }) {
					t.Fatalf("stopped after %s: the chapters after it start where it ends", ch)
				}
			}
		})
	}
	pass("bash", "bash", readerChapters, false)
	pass("zsh", "zsh", readerChapters, true)
	pass("workshop", "zsh", []string{"workshop.md"}, true)
}

// downloadModules fills the Go module cache with every module the
// repository's modules need, as `go mod download` does in each.
func downloadModules(t *testing.T, root string) {
	mods, err := filepath.Glob(filepath.Join(root, "*", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range mods {
		cmd := exec.Command("go", "mod", "download")
		cmd.Dir, cmd.Env = filepath.Dir(m), append(os.Environ(), "GOWORK=off")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go mod download in %s: %v\n%s", filepath.Dir(m), err, out)
		}
	}
}

// scaffoldModules fills the module cache with what chapter 3's project
// downloads (the kubebuilder CLI's init and create api, the go get that
// moves it to the repository's library versions, the controller-gen they
// install, and the kustomize its make install builds), by running those
// commands once in a scratch directory. Its make build then compiles into
// the Go build cache what the repository's modules do not use (the
// scaffold's metrics filter links k8s.io/apiserver), once, rather than in
// bash's and zsh's passes at the same time.
func scaffoldModules(t *testing.T, root string) {
	dir := t.TempDir()
	kubebuilder := filepath.Join(root, "bin", "kubebuilder")
	for _, args := range [][]string{
		{kubebuilder, "init", "--domain", "mock.com", "--repo", "example.com/k8s-demo/kubebuilder-demo"},
		{kubebuilder, "create", "api", "--group", "zhhnzw", "--version", "v1", "--kind", "CustomPod", "--resource", "--controller"},
		append([]string{"go", "get"}, repositoryPins(t, root)...),
		{"go", "mod", "tidy"},
		{"make", "kustomize"},
		{"make", "build"},
	} {
		cmd := exec.Command(args[0], args[1:]...)
		// Not the repository's make variables (make test's LOCALBIN would
		// be the scaffold's too): the scaffold's Makefile installs
		// controller-gen into its own bin/, as for a reader.
		env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
			return strings.HasPrefix(kv, "LOCALBIN=") || strings.HasPrefix(kv, "MAKEFLAGS=") || strings.HasPrefix(kv, "MAKELEVEL=")
		})
		cmd.Dir, cmd.Env = dir, append(env, "GOWORK=off")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s (to fill the module and build caches; run make tools first): %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	t.Logf("%s: the module cache holds what kubebuilder init, create api and make kustomize download; the build cache, what make build compiles", at())
}

// repositoryPins are the versions chapter 3's go get moves the project to:
// the repository's, as its `go -C "$module" list -m` reads them.
func repositoryPins(t *testing.T, root string) []string {
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Path}}@{{.Version}}",
		"k8s.io/api", "k8s.io/apiextensions-apiserver", "k8s.io/apimachinery", "k8s.io/client-go", "sigs.k8s.io/controller-runtime")
	cmd.Dir, cmd.Env = filepath.Join(root, "kubebuilder-demo"), append(os.Environ(), "GOWORK=off")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -m in kubebuilder-demo: %v", err)
	}
	return strings.Fields(string(out))
}

// copySumdb gives the reader's HOME the checksum database's state that this
// machine's go command keeps in GOPATH/pkg/sumdb (the newest signed tree it
// has seen), as a reader has who filled the module cache online. Without it,
// offline, `go get` in kubebuilder init checked a module's go.sum line from
// the cache's answers against no known tree, asked sum.golang.org for a tile
// and failed (chapter 3, on a new machine).
func copySumdb(t *testing.T, home string) {
	out, err := exec.Command("go", "env", "GOPATH").Output()
	if err != nil {
		t.Fatalf("go env GOPATH: %v", err)
	}
	src := filepath.Join(filepath.SplitList(strings.TrimSpace(string(out)))[0], "pkg", "sumdb")
	if _, err := os.Stat(src); err != nil {
		return // this machine's go has not used the checksum database
	}
	if err := os.CopyFS(filepath.Join(home, "go", "pkg", "sumdb"), os.DirFS(src)); err != nil {
		t.Fatalf("copying the checksum database's state %s into the reader's HOME: %v", src, err)
	}
}

// offlineGoproxy is GOPROXY for a reader in a network of its own: the
// module cache, which downloadModules and scaffoldModules filled with what
// the proxy would serve (checksums included), as chapter 3 tells a reader
// without a network to do.
func offlineGoproxy(t *testing.T) string {
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatalf("go env GOMODCACHE: %v", err)
	}
	return "GOPROXY=file://" + filepath.Join(strings.TrimSpace(string(out)), "cache", "download")
}

// newReader opens a reader's terminals on clone, with an empty HOME of
// their own. With mirror, the module proxy the reader is given is not in
// GOPROXY but in MIRROR, as a workshop's participant is handed one to set
// with go env -w (docs/workshop.md, before the day).
func newReader(t *testing.T, shell, clone string, network []string, mirror bool) *Terminals {
	scratch, err := os.MkdirTemp("", "reader-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(scratch) })
	home := filepath.Join(scratch, "home")
	if err := os.Mkdir(home, 0o755); err != nil {
		t.Fatal(err)
	}
	env := readerEnv(t, clone, home)
	if network != nil {
		env = append(slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "GOPROXY=") }), offlineGoproxy(t))
		copySumdb(t, home)
	}
	if mirror {
		for i, kv := range env {
			if proxy, ok := strings.CutPrefix(kv, "GOPROXY="); ok {
				env[i] = "MIRROR=" + proxy
			}
		}
	}
	terms, err := NewTerminals(shell, clone, scratch, env, network)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(terms.Close)
	return terms
}

// newClone makes a fresh clone of root: `git clone`, then root's uncommitted
// changes copied over and committed, and bin/ hard-linked (the pinned tools, as `make
// tools` leaves them). Its cluster is deleted when the test ends, then the clone.
//
// The clone is at the same path for a pass every time (cloneDir): Go's build
// cache keys a package of the repository by its directory, so a clone at a
// new path compiled and vetted each module again (go vet of operator-demo: 11 s
// of CPU in a new clone, 1 s in the same one), in every chapter and every run.
func newClone(t *testing.T, root, pass string) string {
	t.Helper()
	started := time.Now()
	clone := cloneDir(t, pass)
	git := func(args ...string) string {
		out, err := exec.Command("git", append([]string{"-C", root}, args...)...).Output()
		if err != nil {
			t.Fatalf("git %s: %v", strings.Join(args, " "), err)
		}
		return string(out)
	}
	if out, err := exec.Command("git", "clone", "--quiet", root, clone).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	changed := strings.Fields(git("diff", "--name-only", "--no-renames", "--diff-filter=d", "HEAD"))
	changed = append(changed, strings.Fields(git("ls-files", "--others", "--exclude-standard"))...)
	for _, f := range changed {
		if err := copyFile(filepath.Join(root, f), filepath.Join(clone, f)); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range strings.Fields(git("diff", "--name-only", "--no-renames", "--diff-filter=D", "HEAD")) {
		_ = os.Remove(filepath.Join(clone, f))
	}
	// Committed in the clone, so that a `git checkout -- .` in the text
	// puts back these files, not HEAD's.
	commit := exec.Command("git", "-c", "user.name=reader", "-c", "user.email=reader@example.com",
		"commit", "--quiet", "--allow-empty", "--all", "--message", "uncommitted changes")
	commit.Dir = clone
	if err := exec.Command("git", "-C", clone, "add", "--all").Run(); err != nil {
		t.Fatal(err)
	}
	if out, err := commit.CombinedOutput(); err != nil {
		t.Fatalf("git commit in the clone: %v\n%s", err, out)
	}
	if err := linkTree(filepath.Join(root, "bin"), filepath.Join(clone, "bin")); err != nil {
		t.Fatalf("linking bin/ into the clone (run make tools first): %v", err)
	}
	t.Logf("%s: a fresh clone in %s", at(), time.Since(started).Round(100*time.Millisecond))
	t.Cleanup(func() {
		started := time.Now()
		cmd := exec.Command("make", "-s", "cluster-down")
		cmd.Dir, cmd.Env = clone, readerEnv(t, clone, t.TempDir())
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("make cluster-down in the clone: %v\n%s", err, out)
		} else if !t.Failed() { // as in followChapter: the failure's entry stays the last
			t.Logf("%s: make cluster-down in the clone, in %s", at(), time.Since(started).Round(100*time.Millisecond))
		}
		if err := os.RemoveAll(clone); err != nil {
			t.Errorf("removing the clone: %v", err)
		}
	})
	return clone
}

// cloneDir is where pass clones the repository: $TMPDIR/k8s-demo-reader/<pass>/k8s-demo,
// emptied first, and held (a lock beside it) until the test ends. When
// another run holds it, a directory of the test's own.
func cloneDir(t *testing.T, pass string) string {
	t.Helper()
	dir := filepath.Join(os.TempDir(), "k8s-demo-reader", pass)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	lock, err := os.OpenFile(dir+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		lock.Close()
		t.Logf("%s is in use by another run (%v): cloning into a directory of this test's own", dir, err)
		return filepath.Join(t.TempDir(), "k8s-demo")
	}
	t.Cleanup(func() { lock.Close() }) // closing it releases the lock
	clone := filepath.Join(dir, "k8s-demo")
	if err := os.RemoveAll(clone); err != nil {
		t.Fatal(err)
	}
	return clone
}

func copyFile(from, to string) error {
	fi, err := os.Lstat(from)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		target, err := os.Readlink(from)
		if err != nil {
			return err
		}
		_ = os.Remove(to)
		return os.Symlink(target, to)
	}
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, fi.Mode().Perm())
}

// linkTree hard-links every file under from into to. The tools are only
// ever replaced (go build renames into place), never written in place.
func linkTree(from, to string) error {
	return filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		return os.Link(p, dst)
	})
}

// readerEnv is a new terminal's environment: an empty HOME, a PATH without
// the repository's (or the clone's) bin/, no KUBECONFIG. Go's own settings
// are kept, the caches named explicitly: a reader's are in their HOME. Go's
// work directories go where the test's clean-up removes them.
func readerEnv(t *testing.T, clone, home string) []string {
	var path []string
	root := repoRoot(t)
	for _, p := range filepath.SplitList(os.Getenv("PATH")) {
		if p == "" || strings.HasPrefix(p, root+string(filepath.Separator)) || strings.HasPrefix(p, clone) {
			continue
		}
		path = append(path, p)
	}
	env := []string{
		"HOME=" + home,
		"PATH=" + strings.Join(path, string(os.PathListSeparator)),
		"TERM=xterm-256color",
		"LANG=C.UTF-8",
		// A `go run` still running when its terminal is closed under it
		// leaves its work directory and binary (tens of MB) in GOTMPDIR:
		// here, a directory the test removes.
		"GOTMPDIR=" + t.TempDir(),
	}
	for _, k := range []string{"USER", "LOGNAME", "TMPDIR", "GOFLAGS", "GOTOOLCHAIN", "GOPROXY", "GOSUMDB", "GONOSUMDB", "GOPRIVATE", "GONOPROXY", "GOINSECURE", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	for _, k := range []string{"GOCACHE", "GOMODCACHE"} {
		out, err := exec.Command("go", "env", k).Output()
		if err != nil {
			t.Fatalf("go env %s: %v", k, err)
		}
		env = append(env, k+"="+strings.TrimSpace(string(out)))
	}
	return env
}

// followChapter types a chapter's steps into new terminals.
func followChapter(t *testing.T, terms *Terminals, chapter string) {
	rel := filepath.Join("docs", chapter)
	d, err := docs.ReadDoc(filepath.Join(terms.Root, rel))
	if err != nil {
		t.Fatal(err)
	}
	steps, skipped, err := ReaderSteps(d)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range skipped {
		t.Logf("%s:%d: not typed (the text says %q)", rel, s.Line, s.Reason)
	}
	if len(steps) == 0 {
		t.Fatalf("%s: no step to follow; take it out of readerChapters", rel)
	}
	started := time.Now()
	t.Logf("%s: %s starts, %d steps", at(), rel, len(steps))
	defer func() {
		if err := terms.EndChapter(); err != nil {
			t.Error(err)
		}
		if t.Failed() {
			// No line after the failure's: make test's summary shows a
			// failed test's last log entry, which must be what failed.
			return
		}
		took := time.Since(started)
		t.Logf("%s: %s ends, after %s", at(), rel, took.Round(100*time.Millisecond))
		recordTiming(t, chapter, took)
	}()
	ctx := t.Context()
	// step types, saves or interrupts as steps[i] says, and fails the test
	// if it does not go as the text says.
	step := func(i int, s Step) {
		where := s.Where(rel, i+1)
		if s.File != "" {
			// As an editor saves it: the listing's text, into the file the
			// text names, under the terminal's directory.
			dir, err := terms.Dir(s.Terminal)
			if err != nil {
				t.Fatalf("%s: %v", where, err)
			}
			path := filepath.Join(dir, s.File)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatalf("%s: %v", where, err)
			}
			if err := s.Edit.Apply(path, s.Content); err != nil {
				t.Fatalf("%s: %v", where, err)
			}
			t.Logf("%s: %d lines into %s", where, len(s.Content), path)
			return
		}
		if s.Close != nil {
			for _, n := range s.Close {
				if err := terms.CloseTerminal(n); err != nil {
					t.Fatalf("%s: %v", where, err)
				}
			}
			t.Logf("%s: closed terminals %v", where, s.Close)
			return
		}
		if s.Commands == nil {
			for _, n := range s.Interrupt {
				if err := terms.Interrupt(ctx, n); err != nil {
					t.Fatalf("%s: %v\n--- the %s terminal:\n%s", where, err, ordinals[n-1], terms.Screen(n, 30))
				}
			}
			t.Logf("%s: Ctrl-C in %v", where, s.Interrupt)
			return
		}
		timeout := s.Check.Timeout
		if timeout == 0 {
			// A block may build or generate (make build, make run, make
			// verify-codegen): beside make test's other lanes on a 2-core
			// machine, crd-demo's three binaries took over 2 minutes, and
			// its code generation over 5. The limit only catches a step
			// that never finishes.
			timeout = 10 * time.Minute
			if s.Check.Wait != nil {
				timeout = 11 * time.Minute
			}
		}
		var runs *KeepsRunning
		if s.Check.Wait != nil {
			// A server's output is checked while it runs: it is up when
			// it shows what the check waits for and what the text shows.
			runs = &KeepsRunning{
				Ready: func(out string) bool {
					return s.Check.Wait.MatchString(out) && (s.Shown == nil || s.Shown.Missing(out, s.Commands...) == "")
				},
				What: fmt.Sprintf("its output showed %q", s.Check.Wait),
			}
			if s.Shown != nil {
				runs.What += fmt.Sprintf(" and the output shown at %s:%d", rel, s.Shown.Line)
			}
		}
		started := time.Now()
		res, err := terms.Type(ctx, s.Terminal, s.Commands, runs, timeout)
		t.Logf("%s, %s:\n%s\n--- output:\n%s", where, time.Since(started).Round(100*time.Millisecond), indent(s.Commands), res.Output)
		if err != nil {
			if s.Shown != nil {
				if missing := s.Shown.Missing(res.Output, s.Commands...); missing != "" {
					err = fmt.Errorf("%w; of the output shown at %s:%d, it did not print:\n  %s", err, rel, s.Shown.Line, missing)
				}
			}
			t.Fatalf("%s: %v\n--- the %s terminal:\n%s", where, err, ordinals[s.Terminal-1], terms.Screen(s.Terminal, 40))
		}
		failed := res.Failed()
		switch {
		case s.Check.Fails && failed == nil:
			t.Fatalf("%s: a command should have failed, and none did", where)
		case !s.Check.Fails && failed != nil:
			t.Fatalf("%s: %q exited %d\n--- the %s terminal:\n%s", where, failed.Command, failed.Status, ordinals[s.Terminal-1], terms.Screen(s.Terminal, 40))
		}
		if s.Check.Expect != nil && !s.Check.Expect.MatchString(res.Output) {
			t.Fatalf("%s: the output does not show %q:\n%s", where, s.Check.Expect, res.Output)
		}
		if s.Shown != nil {
			if missing := s.Shown.Missing(res.Output, s.Commands...); missing != "" {
				t.Fatalf("%s: the text shows, at %s:%d, output the terminal did not print:\n  %s\n--- the terminal printed:\n%s", where, rel, s.Shown.Line, missing, res.Output)
			}
			if extra := s.Shown.Extra(res.Output, s.Commands...); s.Check.Complete && extra != "" {
				t.Fatalf("%s: the text shows, at %s:%d, the whole output (check complete), and leaves out a line the terminal printed:\n  %s\n--- the terminal printed:\n%s", where, rel, s.Shown.Line, extra, res.Output)
			}
		}
	}

	// The order a reader follows: every step but those that start an
	// exercise again (check reset), which are typed only after a reader
	// gave up on an exercise midway, below.
	var order, resets []int
	for i, s := range steps {
		if s.Check.Reset {
			resets = append(resets, i)
			t.Logf("%s:%d: typed after each exercise is stopped midway (check reset)", rel, s.Line)
			continue
		}
		order = append(order, i)
	}
	exercises := exerciseSections(steps, order)
	if len(resets) > 0 && len(exercises) == 0 {
		t.Fatalf("%s has a reset block (check reset) but no \"## Exercise\" section to start again", rel)
	}
	restarted := map[string]bool{}
	var exerciseBegan time.Time
	for k := 0; k < len(order); k++ {
		i := order[k]
		s := steps[i]
		ex, isExercise := exercises[s.Section]
		if isExercise && k == ex.first {
			exerciseBegan = time.Now()
		}
		step(i, s)
		if !isExercise {
			continue
		}
		if len(resets) > 0 && k == ex.midway && !restarted[s.Section] {
			// A participant gives up here: Ctrl-C in every terminal that
			// runs something, the others closed, the reset typed; then the
			// exercise again, from its first step, which must pass.
			restarted[s.Section] = true
			stopped, err := terms.InterruptAll(ctx)
			if err != nil {
				t.Fatalf("%s: stopping %q midway: %v", rel, s.Section, err)
			}
			for _, n := range terms.Open() {
				if n > 1 {
					if err := terms.CloseTerminal(n); err != nil {
						t.Fatalf("%s: %v", rel, err)
					}
				}
			}
			t.Logf("%s: %q stopped after step %d (Ctrl-C in %v, the other terminals closed); the reset, then the exercise from its start", rel, s.Section, k+1, stopped)
			for _, r := range resets {
				step(r, steps[r])
			}
			k = ex.first - 1
			continue
		}
		if k == ex.last && !t.Failed() {
			recordTiming(t, strings.TrimSuffix(chapter, ".md")+"#"+ex.slug, time.Since(exerciseBegan))
		}
	}
	if r := terms.Running(); len(r) > 0 {
		t.Fatalf("%s ends with %s still running: the text must say to stop it (Ctrl-C in ... terminal)", rel, strings.Join(r, " and "))
	}
}

func indent(lines []string) string {
	return fmt.Sprintf("  %s", strings.Join(lines, "\n  "))
}

// timings is the file the chapters' timings go into, for docs/README.md's
// table (doctools/cmd/doctimes): "# commit C", then "PASS<tab>PAGE<tab>SECONDS".
var timings struct {
	sync.Mutex
	path string
}

// startTimings starts .cache/reader-times.tsv with the commit the chapters
// are read at (marked "+changes" when the tree has uncommitted ones).
func startTimings(t *testing.T, root string) {
	out, err := exec.Command("git", "-C", root, "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		t.Fatalf("git rev-parse: %v", err)
	}
	commit := strings.TrimSpace(string(out))
	if st, _ := exec.Command("git", "-C", root, "status", "--porcelain", "--untracked-files=no").Output(); len(st) > 0 {
		commit += "+changes"
	}
	timings.path = filepath.Join(root, ".cache", "reader-times.tsv")
	if err := os.MkdirAll(filepath.Dir(timings.path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(timings.path, []byte("# commit "+commit+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// recordTiming adds a chapter's time, under its pass (the test's second
// name: bash, zsh, workshop).
func recordTiming(t *testing.T, chapter string, took time.Duration) {
	parts := strings.Split(t.Name(), "/")
	if len(parts) < 2 || timings.path == "" {
		return
	}
	timings.Lock()
	defer timings.Unlock()
	f, err := os.OpenFile(timings.path, os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Error(err)
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "%s\t%s\t%d\n", parts[1], strings.TrimSuffix(chapter, ".md"), int(took.Round(time.Second).Seconds()))
}
