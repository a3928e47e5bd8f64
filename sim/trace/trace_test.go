package trace

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestHashDependsOnEveryField(t *testing.T) {
	base := func() *Recorder { r := New(nil); r.Record(time.Second, "heartbeat", "m1", ""); return r }
	variants := map[string]func(*Recorder){
		"time":    func(r *Recorder) { r.Record(2*time.Second, "heartbeat", "m1", "") },
		"kind":    func(r *Recorder) { r.Record(time.Second, "join", "m1", "") },
		"subject": func(r *Recorder) { r.Record(time.Second, "heartbeat", "m2", "") },
		"detail":  func(r *Recorder) { r.Record(time.Second, "heartbeat", "m1", "x") },
		"split":   func(r *Recorder) { r.Record(time.Second, "heartbeatm", "1", "") },
	}
	want := base()
	want.Record(time.Second, "heartbeat", "m1", "")
	for name, f := range variants {
		r := base()
		f(r)
		if r.Hash() == want.Hash() {
			t.Errorf("changing the %s did not change the hash %s", name, r.HashString())
		}
	}
	again := base()
	again.Record(time.Second, "heartbeat", "m1", "")
	if again.Hash() != want.Hash() {
		t.Errorf("same events gave hashes %s and %s", again.HashString(), want.HashString())
	}
}

func TestJSONL(t *testing.T) {
	var buf bytes.Buffer
	r := New(&buf)
	r.Record(90*time.Second, "member-joined", "m1", "Joined=True")
	r.Record(2*time.Minute, "heartbeat", "m1", "")
	r.Record(16*time.Minute+1100000001, "member-condition", "m1", "Healthy=Unknown")
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	// Times are seconds, as numbers, to the nanosecond.
	want := `{"t":90,"kind":"member-joined","subject":"m1","detail":"Joined=True"}
{"t":120,"kind":"heartbeat","subject":"m1"}
{"t":961.100000001,"kind":"member-condition","subject":"m1","detail":"Healthy=Unknown"}
`
	if diff := cmp.Diff(want, buf.String()); diff != "" {
		t.Errorf("JSONL (-want +got):\n%s", diff)
	}
	if r.Events() != 3 || len(r.HashString()) != 16 || strings.Trim(r.HashString(), "0123456789abcdef") != "" {
		t.Errorf("Events() = %d, HashString() = %q; want 3 and 16 hex digits", r.Events(), r.HashString())
	}
}

// TestKindFoldsAsString: a prepared kind folds exactly as its name, from any hash, and
// RecordKind hashes exactly as Record.
func TestKindFoldsAsString(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, name := range []string{"", "a", "heartbeat", "heartbeat-lost", "binding-scheduled", "\xff\x00é"} {
		k := NewKind(name)
		for range 2000 {
			h := rng.Uint64()
			if got, want := k.fold(h), foldString(h, name); got != want {
				t.Fatalf("NewKind(%q).fold(%#x) = %#x, foldString = %#x", name, h, got, want)
			}
		}
		a, b := New(nil), New(nil)
		for i := range 50 {
			at := time.Duration(rng.Int64N(1 << 50))
			subject := fmt.Sprint("member-", i)
			a.Record(at, name, subject, "")
			b.RecordKind(at, k, subject, "")
			a.Record(at, name, subject, "d")
			b.RecordKind(at, k, subject, "d")
		}
		if a.Hash() != b.Hash() || a.Events() != b.Events() {
			t.Fatalf("kind %q: RecordKind hash %#x after %d events, Record %#x after %d", name, b.Hash(), b.Events(), a.Hash(), a.Events())
		}
	}
}
