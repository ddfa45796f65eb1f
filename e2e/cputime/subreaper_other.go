//go:build !linux

package cputime

// Outside Linux there is no subreaper: a process that outlives its parent is
// not counted.
func becomeSubreaper() error { return nil }
