package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// progress draws a bar on stderr for runs longer than a second, and only on a terminal, so
// piped and CI output stays clean. Wall-clock time is read here, in the CLI, never in the
// simulator.
type progress struct {
	w       io.Writer
	name    string
	enabled bool
	start   time.Time
	last    time.Time
	drawn   bool
}

func newProgress(w io.Writer, name string) *progress {
	p := &progress{w: w, name: name, start: time.Now()}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.enabled = true
		}
	}
	return p
}

func (p *progress) update(done, total time.Duration) {
	if !p.enabled {
		return
	}
	now := time.Now()
	if now.Sub(p.start) < time.Second || now.Sub(p.last) < 100*time.Millisecond {
		return
	}
	p.last = now
	const width = 30
	frac := float64(done) / float64(total)
	n := int(frac * width)
	fmt.Fprintf(p.w, "\r%s [%s%s] %3.0f%% %s/%s", p.name, strings.Repeat("=", n), strings.Repeat(" ", width-n), frac*100, done.Round(time.Second), total)
	p.drawn = true
}

func (p *progress) done() {
	if p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

// count draws "name done/total runs" (total 0: unknown), on a terminal only.
func (p *progress) count(done, total int) {
	if !p.enabled {
		return
	}
	now := time.Now()
	if now.Sub(p.start) < time.Second || now.Sub(p.last) < 100*time.Millisecond {
		return
	}
	p.last = now
	if total > 0 {
		fmt.Fprintf(p.w, "\r%s %d/%d runs", p.name, done, total)
	} else {
		fmt.Fprintf(p.w, "\r%s %d runs", p.name, done)
	}
	p.drawn = true
}
