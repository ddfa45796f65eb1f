package harness

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Check reports whether what a test waits for has happened, and describes
// what it saw, so that a timeout can say so. An error is kept as "seen" and
// the wait goes on: the API server may be busy, or the object not there yet.
type Check func(ctx context.Context) (done bool, seen string, err error)

// Wait polls check every interval until it reports done, and otherwise fails
// after timeout with an error that names what was awaited and what was seen
// last.
func Wait(ctx context.Context, what string, timeout, interval time.Duration, check Check) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	seen := "nothing yet (the first check had not returned)"
	for {
		done, s, err := check(ctx)
		switch {
		case err != nil && cutShort(ctx, err):
			// The check was cut short by the deadline: what it saw before
			// says more than "context deadline exceeded".
		case err != nil:
			seen = "error: " + err.Error()
		case s != "":
			seen = s
		}
		if done && err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("timed out after %s waiting for %s; last seen: %s", time.Since(start).Round(100*time.Millisecond), what, seen)
		case <-time.After(interval):
		}
	}
}

// cutShort reports whether err says that a check was stopped by the wait's
// deadline: the context's own error, or client-go's rate limiter refusing a
// request whose turn would come after the deadline, before the deadline has
// passed (golang.org/x/time/rate says so only in words).
func cutShort(ctx context.Context, err error) bool {
	return ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) ||
		strings.Contains(err.Error(), "would exceed context deadline")
}
