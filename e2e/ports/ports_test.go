package ports

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// withPort makes Check look at one port only: one this test holds or frees.
func withPort(t *testing.T, port int) {
	saved := Fixed
	t.Cleanup(func() { Fixed = saved })
	Fixed = []struct {
		Port int
		What string
	}{{port, "the test"}}
}

func TestCheckNamesTheProcessHoldingAPort(t *testing.T) {
	l, err := net.Listen("tcp", ":0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	withPort(t, port)

	err = Check()
	if err == nil {
		t.Fatalf("port %d is held by this test, and Check found it free", port)
	}
	want := fmt.Sprintf("port %d is in use by ", port)
	if !strings.Contains(err.Error(), want) {
		t.Errorf("Check() = %q, want it to say %q", err, want)
	}
	_, lsof := exec.LookPath("lsof")
	_, ss := exec.LookPath("ss")
	if lsof == nil || ss == nil {
		if pid := fmt.Sprintf("pid %d ", os.Getpid()); !strings.Contains(err.Error(), pid) {
			t.Errorf("Check() = %q, want it to name the holder, %q", err, pid)
		}
	}
}

func TestCheckPassesWhenThePortIsFree(t *testing.T) {
	l, err := net.Listen("tcp", ":0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	withPort(t, port)
	if err := Check(); err != nil {
		t.Errorf("port %d is free, and Check() = %v", port, err)
	}
}
