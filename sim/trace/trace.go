package trace

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// FNV-1a 64-bit constants. The hash is hand-folded (not hash/fnv) so that folding an event
// costs no allocation and no interface call: the simulator folds millions of them.
const (
	offset64 = 14695981039346656037
	prime64  = 1099511628211
)

// Recorder folds events into the trace hash and, when given a writer, logs them as JSONL.
type Recorder struct {
	hash   uint64
	events uint64
	w      *bufio.Writer
	err    error
}

// New returns a Recorder; w may be nil for hash-only recording.
func New(w io.Writer) *Recorder {
	r := &Recorder{hash: offset64}
	if w != nil {
		r.w = bufio.NewWriterSize(w, 64<<10)
	}
	return r
}

// Logging reports whether events are written out, so callers can skip building details.
func (r *Recorder) Logging() bool { return r.w != nil }

// Record folds one event. detail is only hashed and logged when non-empty.
func (r *Recorder) Record(at time.Duration, kind, subject, detail string) {
	h := r.hash
	v := uint64(at)
	for i := 0; i < 8; i++ {
		h ^= v & 0xff
		h *= prime64
		v >>= 8
	}
	h = foldString(h, kind)
	h = foldString(h, subject)
	h = foldString(h, detail)
	r.hash = h
	r.events++
	if r.w != nil && r.err == nil {
		line := struct {
			T       string `json:"t"`
			Kind    string `json:"kind"`
			Subject string `json:"subject,omitempty"`
			Detail  string `json:"detail,omitempty"`
		}{at.String(), kind, subject, detail}
		b, err := json.Marshal(line)
		if err == nil {
			b = append(b, '\n')
			_, err = r.w.Write(b)
		}
		r.err = err
	}
}

func foldString(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= prime64
	}
	// A separator, so ("ab","c") and ("a","bc") differ.
	h ^= 0xff
	h *= prime64
	return h
}

// Hash returns the hash of everything recorded so far.
func (r *Recorder) Hash() uint64 { return r.hash }

// HashString is the hash as 16 hex digits, as reported in run results.
func (r *Recorder) HashString() string { return fmt.Sprintf("%016x", r.hash) }

// Events counts recorded events.
func (r *Recorder) Events() uint64 { return r.events }

// Close flushes the log and returns the first write error.
func (r *Recorder) Close() error {
	if r.w != nil && r.err == nil {
		r.err = r.w.Flush()
	}
	return r.err
}
