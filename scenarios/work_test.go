package scenarios

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// million is ten groups of 100,000 members: a valid scenario.
func million(duration string) string {
	var b strings.Builder
	b.WriteString("name: million\nduration: " + duration + "\nmembers:\n")
	for g := range 10 {
		fmt.Fprintf(&b, "  - name: g%d-{1..100000}\n", g)
	}
	return b.String()
}

// TestWorkLimits: validation estimates the work a scenario asks for and refuses what
// exceeds the limits, naming the field and the estimate; options raise the limits.
func TestWorkLimits(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		opts      Options
		line      int
		field     string
		reason    string // "" when valid
	}{
		{name: "a million members", src: million("10m")},
		{name: "more members than the limit", src: "name: t\nduration: 10m\nmembers:\n  - name: a{1..6}\n  - name: b{1..6}\n", opts: Options{Limits: Limits{MaxMembers: 10}},
			line: 5, field: "members[1]", reason: "too many members: 12 so far; the limit is 10 (raise it with --max-members)"},
		{name: "a huge duration", src: "name: t\nduration: 2562047h\nmembers:\n  - name: m1\n", line: 2, field: "duration",
			reason: "the run would process about 153,722,825 events (153,722,820 heartbeats of 1 members over duration 2562047h0m0s); the limit is 100,000,000"},
		{name: "100,000 members beating every second for a day", src: "name: t\nduration: 24h\nmembers:\n  - name: m{1..100000}\n    heartbeatPeriod: 1s\n", line: 2, field: "duration",
			reason: "8,640,000,000 heartbeats of 100,000 members"},
		{name: "a failure every second", src: "name: t\nduration: 240h\nmembers:\n  - name: m{1..1000}\nfaults:\n  meanTimeBetweenFailures: 1s\n  meanDuration: 1ns\n", line: 5, field: "faults",
			reason: "asks for about 324,000,000 random failures (1,000 members, each failing every 1s + 1s on average until 180h0m0s); the limit is 1,000,000 (raise it with --max-expected-faults"},
		{name: "failures dominate the events", src: "name: t\nduration: 240h\nmembers:\n  - name: m{1..1000}\nfaults:\n  meanTimeBetweenFailures: 1s\n  meanDuration: 1ns\n",
			opts: Options{Limits: Limits{MaxFaults: 1e12}}, line: 5, field: "faults", reason: "324,000,000 random failures of 1,000 members"},
		{name: "the limit raised", src: "name: t\nduration: 2562047h\nmembers:\n  - name: m1\n", opts: Options{Limits: Limits{MaxEvents: 2e8}}},
		{name: "until lengthens the run", src: "name: t\nduration: 1h\nmembers:\n  - name: m{1..1000}\n", opts: Options{Until: 2000 * time.Hour}, line: 2, field: "duration",
			reason: "over --until 2000h0m0s"},
		{name: "members from manifests count", src: "name: t\nduration: 30000h\ntimeline:\n  - at: 0s\n    apply: |\n      apiVersion: cluster.kubernetes-fleet.io/v1beta1\n      kind: MemberCluster\n      metadata: {name: a}\n      spec: {heartbeatPeriodSeconds: 1}\n",
			line: 2, field: "duration", reason: "108,000,000 heartbeats of 1 members"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := ParseWith("t.yaml", []byte(tc.src), tc.opts)
			if tc.reason == "" {
				if err != nil {
					t.Fatalf("ParseWith = %v, want a valid scenario", err)
				}
				return
			}
			var perr *Error
			if !errors.As(err, &perr) {
				t.Fatalf("ParseWith = %+v, %v; want an *Error", s != nil, err)
			}
			if perr.Line != tc.line || perr.Field != tc.field || !strings.Contains(perr.Reason, tc.reason) {
				t.Errorf("ParseWith = %v\nwant line %d, field %q, reason containing %q", err, tc.line, tc.field, tc.reason)
			}
		})
	}
}

func TestEstimate(t *testing.T) {
	s, err := Parse("t.yaml", []byte(million("1h")))
	if err != nil {
		t.Fatal(err)
	}
	w := s.Estimate(0)
	if w.Members != 1_000_000 || w.Heartbeats != 60_000_000 || w.Faults != 0 || w.Events != 65_000_000 {
		t.Errorf("Estimate = %+v, want 1e6 members, 6e7 heartbeats, 6.5e7 events", w)
	}
}
