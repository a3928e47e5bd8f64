package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// progress reports a long run's progress on stderr, with the time elapsed and an estimate
// of the time left. On a terminal it redraws one line (a bar) at most ten times a second,
// after the first second; off a terminal (CI logs, a pipe) it writes a plain line every
// logEvery, so a long plan or fuzz campaign is not silent there, and nothing for a command
// that ends sooner. Wall-clock time is read here, in the CLI, never in the simulator. Safe
// for use from several goroutines (plan and fuzz runs report in parallel).
type progress struct {
	mu       sync.Mutex
	w        io.Writer
	name     string
	terminal bool
	now      func() time.Time
	start    time.Time
	last     time.Time
	drawn    bool // a terminal line to clear
	logged   bool // a plain line was written
	// lastText is what the last line said, for the closing line off a terminal.
	lastDone, lastTotal string
}

// logEvery is how often progress writes a line off a terminal.
const logEvery = 5 * time.Second

func newProgress(w io.Writer, name string) *progress {
	terminal := false
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			terminal = true
		}
	}
	return newProgressWith(w, name, terminal, time.Now)
}

// newProgressWith is newProgress with the terminal test and the clock given (tests).
func newProgressWith(w io.Writer, name string, terminal bool, now func() time.Time) *progress {
	t := now()
	return &progress{w: w, name: name, terminal: terminal, now: now, start: t, last: t}
}

// due says whether to report now, and records it.
func (p *progress) due() (time.Time, bool) {
	now := p.now()
	if p.terminal {
		if now.Sub(p.start) < time.Second || now.Sub(p.last) < 100*time.Millisecond {
			return now, false
		}
	} else if now.Sub(p.last) < logEvery {
		return now, false
	}
	p.last = now
	return now, true
}

// eta estimates the time left from the fraction done so far; "" before anything is done.
func eta(elapsed time.Duration, frac float64) string {
	if frac <= 0 || frac > 1 {
		return ""
	}
	left := time.Duration(float64(elapsed) * (1 - frac) / frac)
	return ", about " + roundWall(left).String() + " left"
}

// roundWall rounds a wall-clock duration for people: to the second, or the tenth below ten
// seconds.
func roundWall(d time.Duration) time.Duration {
	if d < 10*time.Second {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Second)
}

func (p *progress) emit(now time.Time, bar string, frac float64, what string) {
	elapsed := now.Sub(p.start)
	text := fmt.Sprintf("%s %s, %s elapsed%s", p.name, what, roundWall(elapsed), eta(elapsed, frac))
	if p.terminal {
		fmt.Fprintf(p.w, "\r\033[K%s %s", bar, text)
		p.drawn = true
		return
	}
	fmt.Fprintln(p.w, text)
	p.logged = true
}

func bar(frac float64) string {
	const width = 30
	n := max(0, min(width, int(frac*width)))
	return "[" + strings.Repeat("=", n) + strings.Repeat(" ", width-n) + "]"
}

// update reports simulated time done of total (a scenario run).
func (p *progress) update(done, total time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now, ok := p.due()
	if !ok || total <= 0 {
		return
	}
	frac := float64(done) / float64(total)
	p.lastDone, p.lastTotal = total.String(), "simulated"
	p.emit(now, bar(frac), frac, fmt.Sprintf("%3.0f%% (%s of %s simulated)", frac*100, done.Round(time.Second), total))
}

// count reports done of total runs (total 0: unknown, and no estimate).
func (p *progress) count(done, total int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now, ok := p.due()
	if !ok {
		return
	}
	p.lastDone, p.lastTotal = fmt.Sprint(done), "runs"
	if total > 0 {
		frac := float64(done) / float64(total)
		p.emit(now, bar(frac), frac, fmt.Sprintf("%d/%d runs (%.0f%%)", done, total, frac*100))
		return
	}
	p.emit(now, "", 0, fmt.Sprintf("%d runs", done))
}

// done clears the terminal line; off a terminal, after progress lines, it says how long
// the whole took.
func (p *progress) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
	}
	if p.logged {
		fmt.Fprintf(p.w, "%s done in %s\n", p.name, roundWall(p.now().Sub(p.start)))
	}
}
