package main

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// update rewrites the golden files of long outputs: go test ./cmd/fleetsim -run Golden -update
var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./cmd/fleetsim -run %s -update writes it)", err, t.Name())
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s (-want +got; -update rewrites it after review):\n%s", path, diff)
	}
}

// TestGoldenRegionOutage: the answer to the region-outage question, as text at 120
// columns: the timeline narrowed to the partition and the eu failures, the placement with
// both snapshots, the MEMBERS summary with its group table (200 rows left out), the
// measures (rollout durations, peaks, unhealthy groups) and the verdicts.
func TestGoldenRegionOutage(t *testing.T) {
	t.Setenv("COLUMNS", "120")
	code, out, errOut := run(t, "run", "../../scenarios/region-outage.yaml", "--events", "partition-started,partition-ended,member-failed,resource-snapshot-created", "--subject", "*")
	if code != exitOK {
		t.Fatalf("exit %d: %s\n%s", code, errOut, out)
	}
	golden(t, "region-outage.txt", out)
	for _, want := range []string{"app         app-1-snapshot     10m0.1s   20m3.65s      10m3.55s", "placement app               50        200  25.0"} {
		if !strings.Contains(out, want) {
			t.Errorf("the output does not state the rollout's duration and the peak (%q)", want)
		}
	}
}

// TestGoldenMembersFlag: above 50 members the MEMBERS rows come only with --members.
func TestGoldenMembersFlag(t *testing.T) {
	t.Setenv("COLUMNS", "120")
	_, without, _ := run(t, "run", "../../scenarios/region-outage.yaml", "--events", "partition-started")
	_, with, _ := run(t, "run", "../../scenarios/region-outage.yaml", "--events", "partition-started", "--members")
	rows := func(s string) int { return strings.Count(s, " Cluster  ") }
	if rows(without) != 0 || rows(with) != 200 {
		t.Errorf("member rows: %d without --members, %d with; want 0 and 200", rows(without), rows(with))
	}
	if !strings.Contains(without, "MEMBERS  200 members, 200 joined, 200 healthy, 0 tainted, 0 failed") || !strings.Contains(without, "(200 member rows left out: --members prints them") {
		t.Errorf("no MEMBERS summary line:\n%s", without)
	}
}
