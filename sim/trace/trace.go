package trace

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
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
	h := foldTime(r.hash, at)
	h = foldString(h, kind)
	h = foldString(h, subject)
	h = foldString(h, detail)
	r.hash = h
	r.events++
	if r.w != nil && r.err == nil {
		// t is seconds since the start, as a number (the hash folds the nanoseconds, so
		// the JSON form of a time never changes a trace hash).
		line := struct {
			T       json.Number `json:"t"`
			Kind    string      `json:"kind"`
			Subject string      `json:"subject,omitempty"`
			Detail  string      `json:"detail,omitempty"`
		}{json.Number(strconv.FormatFloat(at.Seconds(), 'f', -1, 64)), kind, subject, detail}
		b, err := json.Marshal(line)
		if err == nil {
			b = append(b, '\n')
			_, err = r.w.Write(b)
		}
		r.err = err
	}
}

// Kind is an event kind prepared for folding in one step, for the kinds the simulator
// records millions of times (a heartbeat). RecordKind(at, k, ...) folds exactly what
// Record(at, k.Name(), ...) folds.
//
// Why one step is exact: an FNV-1a step h' = (h ^ b) * p changes h only in its low byte
// before the multiply, so h' = h*p + ((l^b) - l)*p with l = h & 0xff, and the low byte of
// h' is ((l^b)*p) & 0xff, which depends on l alone. Folding a fixed string is therefore
// h*p^n plus a term that depends only on the low byte of h: 256 precomputed values.
type Kind struct {
	name string
	mul  uint64      // p^n, n the bytes folded (the name and the separator)
	add  [256]uint64 // per low byte of h on entry
}

// NewKind prepares kind for RecordKind.
func NewKind(kind string) *Kind {
	k := &Kind{name: kind, mul: 1}
	for range len(kind) + 1 {
		k.mul *= prime64
	}
	for l := range k.add {
		// Fold from h = l: then h*p^n is l*p^n, and the rest is the term.
		k.add[l] = foldString(uint64(l), kind) - uint64(l)*k.mul
	}
	return k
}

// Name is the kind's name.
func (k *Kind) Name() string { return k.name }

func (k *Kind) fold(h uint64) uint64 { return h*k.mul + k.add[h&0xff] }

// RecordKind is Record with a prepared kind.
func (r *Recorder) RecordKind(at time.Duration, k *Kind, subject, detail string) {
	if r.w != nil {
		r.Record(at, k.name, subject, detail)
		return
	}
	h := foldTime(r.hash, at)
	h = k.fold(h)
	h = foldString(h, subject)
	h = foldString(h, detail)
	r.hash = h
	r.events++
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

// foldTime folds the 8 bytes of at, low byte first, into the FNV-1a hash h.
func foldTime(h uint64, at time.Duration) uint64 {
	v := uint64(at)
	for i := 0; i < 8; i++ {
		h ^= v & 0xff
		h *= prime64
		v >>= 8
	}
	return h
}
