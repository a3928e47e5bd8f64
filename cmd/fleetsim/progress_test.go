package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fakeClock is a wall clock the test moves.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

// TestProgressOffATerminal: off a terminal, a plain line every 5 s with the runs done,
// the time elapsed and an estimate of the time left, and a closing line; nothing for a
// command that ends within 5 s.
func TestProgressOffATerminal(t *testing.T) {
	c := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	var b bytes.Buffer
	p := newProgressWith(&b, "plan tiny", false, c.now)
	for _, step := range []struct {
		after time.Duration
		done  int
	}{{time.Second, 1}, {4 * time.Second, 10}, {time.Second, 20}, {3 * time.Second, 30}, {2 * time.Second, 40}} {
		c.t = c.t.Add(step.after)
		p.count(step.done, 100)
	}
	p.done()
	// Due at 5 s (10 runs: 45 s left at that pace), then not before 10 s: at 11 s.
	want := "plan tiny 10/100 runs (10%), 5s elapsed, about 45s left\n" +
		"plan tiny 40/100 runs (40%), 11s elapsed, about 17s left\n" +
		"plan tiny done in 11s\n"
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("progress lines (-want +got):\n%s", diff)
	}

	b.Reset()
	quick := newProgressWith(&b, "run q", false, c.now)
	c.t = c.t.Add(4 * time.Second)
	quick.update(30*time.Minute, time.Hour)
	quick.done()
	if b.Len() != 0 {
		t.Errorf("a 4 s run wrote progress off a terminal: %q", b.String())
	}

	b.Reset()
	sim := newProgressWith(&b, "run long", false, c.now)
	c.t = c.t.Add(6 * time.Second)
	sim.update(15*time.Minute, time.Hour)
	if got, want := b.String(), "run long  25% (15m0s of 1h0m0s simulated), 6s elapsed, about 18s left\n"; got != want {
		t.Errorf("simulated-time line %q, want %q", got, want)
	}
}

// TestProgressOnATerminal: a redrawn bar with the estimate, cleared at the end.
func TestProgressOnATerminal(t *testing.T) {
	c := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	var b bytes.Buffer
	p := newProgressWith(&b, "fuzz", true, c.now)
	c.t = c.t.Add(2 * time.Second)
	p.count(50, 100)
	p.done()
	out := b.String()
	for _, want := range []string{"\r\033[K[===============               ] fuzz 50/100 runs (50%), 2s elapsed, about 2s left", "\r\033[K"} {
		if !strings.Contains(out, want) {
			t.Errorf("terminal output %q lacks %q", out, want)
		}
	}
	if strings.Contains(out, "done in") {
		t.Errorf("a terminal gets no closing line: %q", out)
	}
}
