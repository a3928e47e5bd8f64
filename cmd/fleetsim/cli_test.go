package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestOneCLI: -o everywhere with one shape, one meaning per flag name, and the refusals
// that name what is wrong.
func TestOneCLI(t *testing.T) {
	bad := write(t, "bad.yaml", "name: b\nduration: 1h\nexpect:\n  - placement: {name: ghost, clusterCount: 1}\n")
	t.Run("validate -o json: a list, with line, field and reason", func(t *testing.T) {
		code, out, _ := run(t, "validate", quickstart, bad, "-o", "json")
		if code != exitInvalid {
			t.Fatalf("exit %d, want 2", code)
		}
		var got []validation
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		want := []validation{
			{File: quickstart, Valid: true, Scenario: "quickstart", MemberGroups: 2, Steps: 5, Expectations: 7},
			{File: bad, Line: 4, Field: "expect[0].placement.name",
				Reason: `no apply step of the timeline creates ClusterResourcePlacement "ghost": the expectation would be checked against nothing`},
		}
		want[1].Error = bad + ":4: " + want[1].Field + ": " + want[1].Reason
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("validate -o json (-want +got):\n%s", diff)
		}
	})
	t.Run("run -o yaml and -o json are lists for one file too", func(t *testing.T) {
		for _, o := range []string{"json", "yaml"} {
			_, out, _ := run(t, "run", quickstart, "-o", o)
			if first := strings.TrimSpace(out)[:1]; first != "[" && first != "-" {
				t.Errorf("run -o %s starts with %q, want a list", o, first)
			}
		}
	})
	t.Run("--max-expected-faults, and --max-faults still accepted with a warning", func(t *testing.T) {
		faulty := write(t, "faulty.yaml", "name: f\nduration: 1h\nmembers:\n  - name: m{1..100}\nfaults: {meanTimeBetweenFailures: 1m, meanDuration: 1m}\n")
		for _, flag := range []string{"--max-expected-faults", "--max-faults"} {
			code, _, errOut := run(t, "validate", faulty, flag, "10")
			if code != exitInvalid || !strings.Contains(errOut, "raise it with --max-expected-faults") {
				t.Errorf("%s 10 = exit %d: %s", flag, code, errOut)
			}
			if dep := strings.Contains(errOut, "--max-faults is deprecated"); dep != (flag == "--max-faults") {
				t.Errorf("%s: deprecation warning %v", flag, dep)
			}
		}
	})
	t.Run("bench -o json", func(t *testing.T) {
		code, out, errOut := run(t, "bench", "sim", "--members", "10", "--simulated", "10m", "-o", "json")
		var got []benchResult
		if err := json.Unmarshal([]byte(out), &got); code != exitOK || err != nil || len(got) != 1 || got[0].Name != "SimHeartbeats/members=10/simulated=10m0s" || got[0].N == 0 || got[0].NsPerOp <= 0 {
			t.Errorf("bench sim -o json = exit %d, %v, %+v; stderr %s", code, err, got, errOut)
		}
	})
	t.Run("run --events refuses an unknown kind", func(t *testing.T) {
		code, _, errOut := run(t, "run", quickstart, "--events", "heartbeat")
		if code != exitInvalid || !strings.Contains(errOut, `--events: "heartbeat" is not a timeline event kind`) {
			t.Errorf("exit %d: %s", code, errOut)
		}
	})
}

// TestPlanShardAlwaysJSON: --shard 0/1 writes the shard's JSON results (not an HTML
// report), and plan merge refuses an HTML report with its own message.
func TestPlanShardAlwaysJSON(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "tiny.yaml")
	if err := os.WriteFile(file, []byte(tinyPlan), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := run(t, "plan", file, "--shard", "0/1", "--parallel", "2")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var shard struct{ Shards int }
	if err := json.Unmarshal([]byte(out), &shard); err != nil || shard.Shards != 1 {
		t.Fatalf("--shard 0/1 wrote %q... (%v), want a shard's JSON", out[:min(len(out), 40)], err)
	}
	if code, _, errOut := run(t, "plan", file, "--shard", "0/1", "-o", "html"); code != exitInvalid || !strings.Contains(errOut, "a shard writes its JSON results") {
		t.Errorf("--shard with -o html = exit %d: %s", code, errOut)
	}
	html := filepath.Join(dir, "report.html")
	if err := os.WriteFile(html, []byte("<!DOCTYPE html>\n<html></html>\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = run(t, "plan", "merge", file, html)
	if code != exitInvalid || !strings.Contains(errOut, html+":1: an HTML report (it starts with <), not a shard's results") {
		t.Errorf("merge of an HTML report = exit %d: %s", code, errOut)
	}
}
