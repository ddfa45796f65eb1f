package reader

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// Terminals are a reader's terminals: one tmux window each, on a tmux server
// of their own, each running an interactive shell (bash or zsh) that starts
// at the repository root in a clean environment (Env). What is typed there
// is typed with tmux send-keys, as keystrokes.
//
// The shell's start-up file, outside HOME, sets only the prompt and a hook
// that runs before each prompt and appends the last command's exit status
// and text to a file per window: that is how the runner knows a command has
// finished and how it ended. After a block it types one no-op command,
// ": reader-step-N", whose record marks the block's end.
type Terminals struct {
	Shell string // "bash" or "zsh"
	Root  string // the clone the reader works in
	Env   []string
	dir   string // the runner's files: tmux socket and config, start-up files, records
	win   map[int]*terminal
	seq   int
}

type terminal struct {
	n       int
	pane    string // tmux pane id, "%3"
	records string // the file the prompt hook appends to
	running string // the block left running there, or ""
}

// Record is one command as the shell's prompt hook saw it.
type Record struct {
	Status  int
	Command string
}

const (
	prompt  = "reader$ "
	prompt2 = "reader> "
	// poll is how often the runner reads a terminal's records (a small
	// file) for the end of a block, a prompt, or a Ctrl-C's prompt.
	poll = 20 * time.Millisecond
)

// NewTerminals starts the tmux server of a reader's terminals, in the
// network network starts it in (nil: this machine's); dir is the runner's
// scratch directory, outside root. The server lives until Close; each
// chapter's terminals are windows of a session of their own (EndChapter).
func NewTerminals(shell, root, dir string, env, network []string) (*Terminals, error) {
	t := &Terminals{Shell: shell, Root: root, Env: env, dir: dir, win: map[int]*terminal{}}
	conf := "set -g history-limit 200000\nset -g remain-on-exit on\nset -g default-size 250x50\n"
	if err := os.WriteFile(filepath.Join(dir, "tmux.conf"), []byte(conf), 0o644); err != nil {
		return nil, err
	}
	rec := filepath.Join(dir, "records")
	var rc, name string
	switch shell {
	case "bash":
		// bash --rcfile reads this instead of ~/.bashrc.
		name = "bashrc"
		rc = fmt.Sprintf(`PS1=%q
PS2=%q
unset HISTFILE
PROMPT_COMMAND='__reader_status=$?; printf "%%s\t%%s\n" "$__reader_status" "$(HISTTIMEFORMAT= history 1 | sed "s/^ *[0-9]* *//")" >>"%s.$TMUX_PANE"'
`, prompt, prompt2, rec)
	case "zsh":
		// zsh reads $ZDOTDIR/.zshrc instead of ~/.zshrc; the variable is
		// unset so the commands typed do not see it.
		name = ".zshrc"
		rc = fmt.Sprintf(`PS1=%q
PS2=%q
unset ZDOTDIR
precmd() { local s=$?; print -r -- "$s	$(fc -ln -1 2>/dev/null)" >>"%s.$TMUX_PANE"; }
`, strings.ReplaceAll(prompt, "%", "%%"), prompt2, rec)
	default:
		return nil, fmt.Errorf("shell %q: bash or zsh", shell)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(rc), 0o644); err != nil {
		return nil, err
	}
	// A session nobody types in keeps the server, and so its network, up
	// between chapters.
	if _, err := t.tmuxIn(network, "new-session", "-d", "-s", "keep", "-c", root, "while :; do sleep 3600; done"); err != nil {
		return nil, err
	}
	return t, nil
}

// EndChapter closes the chapter's terminals; the next chapter opens new ones.
func (t *Terminals) EndChapter() error {
	if len(t.win) == 0 {
		return nil
	}
	t.win = map[int]*terminal{}
	_, err := t.tmux("kill-session", "-t", "reader")
	return err
}

func (t *Terminals) tmux(args ...string) (string, error) {
	return t.tmuxIn(nil, args...)
}

// tmuxIn runs tmux under a prefix command (OwnNetwork's).
func (t *Terminals) tmuxIn(prefix []string, args ...string) (string, error) {
	argv := append(append(prefix, "tmux", "-S", filepath.Join(t.dir, "tmux.sock"), "-f", filepath.Join(t.dir, "tmux.conf")), args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = t.Env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if err != nil {
		return out.String(), fmt.Errorf("tmux %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(out.String()))
	}
	return strings.TrimSpace(out.String()), nil
}

func (t *Terminals) shellCommand() string {
	if t.Shell == "bash" {
		return "bash --rcfile " + strconv.Quote(filepath.Join(t.dir, "bashrc")) + " -i"
	}
	return "env ZDOTDIR=" + strconv.Quote(t.dir) + " zsh -i"
}

// open opens terminal n at the repository root, and waits for its prompt.
func (t *Terminals) open(n int) (*terminal, error) {
	if w, ok := t.win[n]; ok {
		return w, nil
	}
	args := []string{"new-window", "-d", "-t", "reader", "-P", "-F", "#{pane_id}", "-c", t.Root, t.shellCommand()}
	if len(t.win) == 0 {
		args = []string{"new-session", "-d", "-s", "reader", "-x", "250", "-y", "50", "-P", "-F", "#{pane_id}", "-c", t.Root, t.shellCommand()}
	}
	pane, err := t.tmux(args...)
	if err != nil {
		return nil, err
	}
	w := &terminal{n: n, pane: pane, records: filepath.Join(t.dir, "records."+pane)}
	t.win[n] = w
	if err := wait.PollUntilContextTimeout(context.Background(), poll, 30*time.Second, true, func(context.Context) (bool, error) {
		return len(t.records(w)) > 0, nil
	}); err != nil {
		return nil, fmt.Errorf("the %s terminal's %s showed no prompt in 30s:\n%s", ordinals[n-1], t.Shell, t.Screen(n, 20))
	}
	return w, nil
}

// Dir is the directory terminal n's shell is in (opening it at the
// repository root if it is not open): where a reader's editor saves a file
// named by a relative path.
func (t *Terminals) Dir(n int) (string, error) {
	w, err := t.open(n)
	if err != nil {
		return "", err
	}
	return t.tmux("display-message", "-p", "-t", w.pane, "#{pane_current_path}")
}

func (t *Terminals) records(w *terminal) []Record {
	b, _ := os.ReadFile(w.records)
	var rs []Record
	for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		if line == "" {
			continue
		}
		st, cmd, _ := strings.Cut(line, "\t")
		n, _ := strconv.Atoi(st)
		rs = append(rs, Record{Status: n, Command: strings.TrimSpace(cmd)})
	}
	return rs
}

// Screen is the last lines of terminal n, as a reader sees them.
func (t *Terminals) Screen(n, lines int) string {
	w, ok := t.win[n]
	if !ok {
		return "(not open)"
	}
	out, err := t.tmux("capture-pane", "-p", "-J", "-S", "-"+strconv.Itoa(lines), "-t", w.pane)
	if err != nil {
		return err.Error()
	}
	return strings.TrimRight(out, "\n ")
}

// history is everything terminal w has shown, one string per line.
func (t *Terminals) history(w *terminal) []string {
	out, _ := t.tmux("capture-pane", "-p", "-J", "-S", "-", "-E", "-", "-t", w.pane)
	lines := strings.Split(strings.TrimRight(out, "\n "), "\n")
	return lines
}

// output is what the commands printed in lines, without the prompts and
// the commands typed after them.
func output(lines []string) string {
	var b strings.Builder
	for _, l := range lines {
		if strings.HasPrefix(l, strings.TrimSpace(prompt)) || strings.HasPrefix(l, strings.TrimSpace(prompt2)) {
			continue
		}
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}

// blockOutput is what a block printed, from its lines of history: output,
// once the end marker's echo is off the start of each line it was typed
// ahead into. Where the marker's own prompt line followed that echo on the
// same line (": reader-step-N<prompt>: reader-step-N"), it is then a prompt
// line like any other, and output leaves it out.
func blockOutput(lines []string, marker string) string {
	unmarked := make([]string, len(lines))
	for i, l := range lines {
		unmarked[i] = strings.TrimPrefix(l, marker)
	}
	return output(unmarked)
}

// Result is what a block did.
type Result struct {
	Records []Record // the block's commands, each with its exit status
	Output  string   // what they printed
}

// Failed is the first command that exited non-zero, or nil.
func (r Result) Failed() *Record {
	for i := range r.Records {
		if r.Records[i].Status != 0 {
			return &r.Records[i]
		}
	}
	return nil
}

func (t *Terminals) send(w *terminal, line string) error {
	if line != "" {
		if _, err := t.tmux("send-keys", "-t", w.pane, "-l", line); err != nil {
			return err
		}
	}
	_, err := t.tmux("send-keys", "-t", w.pane, "Enter")
	return err
}

// KeepsRunning says when a block that keeps running (a server) is up: Ready
// reports it from what the block has printed; What says it in a message.
type KeepsRunning struct {
	Ready func(output string) bool
	What  string
}

// Type types a block's lines into terminal n and waits until the shell has
// run them all, or, for a block that keeps running (runs not nil), until
// runs says it is up.
func (t *Terminals) Type(ctx context.Context, n int, lines []string, runs *KeepsRunning, timeout time.Duration) (Result, error) {
	w, err := t.open(n)
	if err != nil {
		return Result{}, err
	}
	if w.running != "" {
		return Result{}, fmt.Errorf("the %s terminal is still running %q: the text must stop it first (Ctrl-C)", ordinals[n-1], w.running)
	}
	before := len(t.records(w))
	start := len(t.history(w)) - 1
	for _, l := range lines {
		if err := t.send(w, l); err != nil {
			return Result{}, err
		}
	}
	var res Result
	// The end marker is typed while the block still runs: its echo can
	// land at the start of a line of the block's output, which it is not
	// part of.
	marker := ": reader-step-" + strconv.Itoa(t.seq+1)
	shown := func() string {
		h := t.history(w)
		return blockOutput(h[min(start, len(h)):], marker)
	}
	if runs != nil {
		var ended error
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
			res = Result{Records: t.records(w)[before:], Output: shown()}
			if runs.Ready(res.Output) {
				// It runs; the commands typed before it have ended, and
				// their records say how.
				w.running = strings.Join(lines, "; ")
				return true, nil
			}
			// The last line is what keeps running: its record means it ended.
			for _, r := range res.Records {
				if r.Command == strings.TrimSpace(lines[len(lines)-1]) || r.Status != 0 {
					ended = fmt.Errorf("it was to keep running, until %s, and %q ended first (exit %d)", runs.What, r.Command, r.Status)
					return false, ended
				}
			}
			return false, nil
		})
		switch {
		case ended != nil:
			return res, ended
		case err != nil:
			return res, fmt.Errorf("not %s in %s", runs.What, timeout)
		}
		return res, nil
	}
	t.seq++
	if err := t.send(w, marker); err != nil {
		return Result{}, err
	}
	err = wait.PollUntilContextTimeout(ctx, poll, timeout, true, func(context.Context) (bool, error) {
		rs := t.records(w)
		res = Result{Records: rs[before:]}
		for i := before; i < len(rs); i++ {
			if rs[i].Command == marker {
				res.Records = rs[before:i]
				return true, nil
			}
		}
		return false, nil
	})
	res.Output = shown()
	if err != nil {
		return res, fmt.Errorf("not done in %s", timeout)
	}
	return res, nil
}

// Interrupt presses Ctrl-C in terminal n and waits for its prompt.
func (t *Terminals) Interrupt(ctx context.Context, n int) error {
	w, ok := t.win[n]
	if !ok {
		return fmt.Errorf("the %s terminal was never opened", ordinals[n-1])
	}
	if w.running == "" {
		return fmt.Errorf("the %s terminal runs nothing to stop", ordinals[n-1])
	}
	before := len(t.records(w))
	if _, err := t.tmux("send-keys", "-t", w.pane, "C-c"); err != nil {
		return err
	}
	if err := wait.PollUntilContextTimeout(ctx, poll, 30*time.Second, true, func(context.Context) (bool, error) {
		return len(t.records(w)) > before, nil
	}); err != nil {
		return fmt.Errorf("the %s terminal showed no prompt 30s after Ctrl-C", ordinals[n-1])
	}
	w.running = ""
	return nil
}

// InterruptAll presses Ctrl-C in every terminal that runs a block, the last
// opened first, as a reader who gives up on an exercise stops everything.
func (t *Terminals) InterruptAll(ctx context.Context) ([]int, error) {
	var stopped []int
	for n := len(ordinals); n >= 1; n-- {
		if w, ok := t.win[n]; ok && w.running != "" {
			if err := t.Interrupt(ctx, n); err != nil {
				return stopped, err
			}
			stopped = append(stopped, n)
		}
	}
	return stopped, nil
}

// CloseTerminal closes terminal n (not the first): the next block the text
// sends there opens a new one, at the repository root.
func (t *Terminals) CloseTerminal(n int) error {
	w, ok := t.win[n]
	if !ok {
		return fmt.Errorf("the %s terminal is not open", ordinals[n-1])
	}
	if n == 1 {
		return fmt.Errorf("the first terminal is where the chapter runs: it cannot be closed")
	}
	if w.running != "" {
		return fmt.Errorf("the %s terminal still runs %q: the text must stop it (Ctrl-C) before closing it", ordinals[n-1], w.running)
	}
	delete(t.win, n)
	_, err := t.tmux("kill-pane", "-t", w.pane)
	return err
}

// Open lists the open terminals.
func (t *Terminals) Open() []int {
	var open []int
	for n := 1; n <= len(ordinals); n++ {
		if _, ok := t.win[n]; ok {
			open = append(open, n)
		}
	}
	return open
}

// Running names the terminals still running a block.
func (t *Terminals) Running() []string {
	var r []string
	for n := 1; n <= len(ordinals); n++ {
		if w, ok := t.win[n]; ok && w.running != "" {
			r = append(r, fmt.Sprintf("the %s terminal (%s)", ordinals[n-1], w.running))
		}
	}
	return r
}

// Close ends every terminal and the tmux server.
func (t *Terminals) Close() {
	_, _ = t.tmux("kill-server")
}

// OwnNetwork returns the command that runs a program in a network namespace
// of its own, with only a loopback interface (Linux: unshare, and ip from
// iproute2), or nil where that cannot be had. Readers' terminals that each
// have their own can run at once: the tutorial's programs listen on fixed
// ports (the network backend on 8090), and so do the e2e suites'.
func OwnNetwork() []string {
	if runtime.GOOS != "linux" {
		return nil
	}
	ip, err := exec.LookPath("ip")
	if err != nil {
		for _, p := range []string{"/usr/sbin/ip", "/sbin/ip"} {
			if _, err := os.Stat(p); err == nil {
				ip = p
			}
		}
	}
	if ip == "" {
		return nil
	}
	prefix := []string{"unshare", "--net"}
	if os.Geteuid() != 0 {
		prefix = append(prefix, "--map-root-user")
	}
	// kube-apiserver picks the address it advertises from the interface of
	// the default route, so there is one: through the loopback interface,
	// which gets an address that is not a loopback one. Every other address
	// is unreachable, as on a machine offline: through the default route
	// alone, a packet to the DNS server was dropped, not refused, and each
	// lookup waited for its timeout (kubebuilder init's go get took 60 s
	// instead of 0.2). Not as 0.0.0.0/1: kube-apiserver takes any route to
	// 0.0.0.0 for the default one, and found no interface for it.
	prefix = append(prefix, "sh", "-c",
		`"$0" link set lo up && "$0" addr add 10.200.0.1/32 dev lo && "$0" route add default dev lo && `+
			`for r in 1.0.0.0/8 2.0.0.0/7 4.0.0.0/6 8.0.0.0/5 16.0.0.0/4 32.0.0.0/3 64.0.0.0/2 128.0.0.0/1; do "$0" route add unreachable $r || exit; done && `+
			`shift && exec "$@"`, ip, "--")
	if err := exec.Command(prefix[0], append(prefix[1:], "true")...).Run(); err != nil {
		return nil
	}
	return prefix
}
