package process

import (
	"os"
	"runtime"
	"testing"
	"time"
)

// TestPeakAnon: 64 MiB written by this process show in its peak anonymous
// memory, which stays within its peak RSS.
func TestPeakAnon(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	stop := PeakAnon(os.Getpid(), 5*time.Millisecond)
	buf := make([]byte, 64<<20)
	for i := 0; i < len(buf); i += 4096 {
		buf[i] = 1
	}
	time.Sleep(50 * time.Millisecond)
	peak := stop()
	runtime.KeepAlive(buf)
	if peak < 64<<20 {
		t.Errorf("peak anonymous memory %d bytes, want at least the 64 MiB written", peak)
	}
	hwm, err := PeakRSS(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if peak > hwm {
		t.Errorf("peak anonymous memory %d bytes over the peak RSS %d", peak, hwm)
	}
	if again := stop(); again != peak {
		t.Errorf("a second stop() = %d, want %d", again, peak)
	}
}
