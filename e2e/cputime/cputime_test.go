package cputime

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The test binary plays each part, chosen by this variable: "run" measures a
// "parent" that starts a "spin" and exits at once, leaving it an orphan that
// spends 0.3 s of CPU.
const mode = "CPUTIME_TEST_MODE"

func TestMain(m *testing.M) {
	switch os.Getenv(mode) {
	case "run":
		os.Setenv(mode, "parent")
		r, err := Run(os.Args[0], nil)
		if err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Stdout.WriteString(strconv.FormatFloat(r.CPU.Seconds(), 'f', 3, 64) + " " + strconv.Itoa(r.ExitCode) + "\n")
		os.Exit(0)
	case "parent":
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), mode+"=spin")
		if err := cmd.Start(); err != nil {
			os.Exit(1)
		}
		os.Exit(3)
	case "spin":
		// Spins until it has spent 0.3 s of CPU itself, however busy the
		// machine.
		for {
			var ru syscall.Rusage
			_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
			if time.Duration(ru.Utime.Nano()+ru.Stime.Nano()) >= 300*time.Millisecond {
				break
			}
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestAnOrphansCPUIsCounted(t *testing.T) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), mode+"=run")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the measuring process: %v", err)
	}
	fields := strings.Fields(string(out))
	if len(fields) != 2 {
		t.Fatalf("want \"CPU EXITCODE\", got %q", out)
	}
	cpu, _ := strconv.ParseFloat(fields[0], 64)
	if fields[1] != "3" {
		t.Errorf("exit code: want the command's, 3, got %s", fields[1])
	}
	// The spinning orphan alone spends 0.3 s; its parent, which exited at
	// once, far less.
	if cpu < 0.3 {
		t.Errorf("CPU: want at least the orphan's 0.3 s, got %.3f s", cpu)
	}
}
