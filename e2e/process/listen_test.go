package process

import (
	"net"
	"os"
	"runtime"
	"slices"
	"testing"
)

func TestParseProcAddr(t *testing.T) {
	for in, want := range map[string]string{
		"0100007F:1F90":                         "127.0.0.1:8080",
		"00000000:0050":                         "0.0.0.0:80",
		"00000000000000000000000000000000:0CEA": "[::]:3306",
		"00000000000000000000000001000000:0016": "[::1]:22",
	} {
		got, err := parseProcAddr(in)
		if err != nil || got != want {
			t.Errorf("parseProcAddr(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := parseProcAddr("nonsense"); err == nil {
		t.Error("want an error for an address without a port")
	}
}

func TestListeningSeesThisProcessesListeners(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Listening reads /proc, which only Linux has")
	}
	loop, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer loop.Close()
	any, err := net.Listen("tcp", ":0")
	if err != nil {
		t.Fatal(err)
	}
	defer any.Close()
	got, err := Listening(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(got, loop.Addr().String()) {
		t.Errorf("want %s among this process's listeners, got %v", loop.Addr(), got)
	}
	wild := 0
	for _, a := range got {
		if Wildcard(a) {
			wild++
		}
	}
	if wild != 1 || Wildcard(loop.Addr().String()) {
		t.Errorf("want exactly the one wildcard listener (%s), got %v", any.Addr(), got)
	}
}
