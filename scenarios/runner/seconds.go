package runner

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// Seconds is a time or a duration of simulated time that JSON (and YAML, through JSON)
// writes as a number of seconds, e.g. 961.100000001, rather than a Go duration string: a
// number that tools can compare and add. Go code reads it as a time.Duration.
type Seconds time.Duration

// MarshalJSON writes the number of seconds, in the shortest form that reads back exactly.
func (s Seconds) MarshalJSON() ([]byte, error) {
	return []byte(strconv.FormatFloat(time.Duration(s).Seconds(), 'f', -1, 64)), nil
}

// UnmarshalJSON reads a number of seconds.
func (s *Seconds) UnmarshalJSON(b []byte) error {
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return fmt.Errorf("a time in seconds: %w", err)
	}
	*s = Seconds(f * float64(time.Second))
	return nil
}

// Duration is s as a time.Duration.
func (s Seconds) Duration() time.Duration { return time.Duration(s) }

// String is the Go duration (16m1.100000001s).
func (s Seconds) String() string { return time.Duration(s).String() }

// MarshalJSON writes an invariant result with its At (kept as a duration string in Go
// for the callers that parse it) as a number of seconds, like every time in a report.
func (i InvariantResult) MarshalJSON() ([]byte, error) {
	type plain InvariantResult
	out := struct {
		plain
		At *Seconds `json:"at,omitempty"`
	}{plain: plain(i)}
	if i.At != "" {
		d, err := time.ParseDuration(i.At)
		if err != nil {
			return nil, fmt.Errorf("invariant %s: at %q: %w", i.Name, i.At, err)
		}
		s := Seconds(d)
		out.At = &s
	}
	return json.Marshal(out)
}
