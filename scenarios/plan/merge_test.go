package plan

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetsim/fleetsim/scenarios"
	"github.com/fleetsim/fleetsim/scenarios/input"
)

// mergePlan has 3 points × 2 repetitions = 6 runs of a one-minute scenario.
const mergePlan = `name: merge
seed: 7
repetitions: 2
sweep:
  members: [1, 2, 3]
small:
  sweep: {members: [1]}
scenario: |
  name: s
  duration: 1m
  members:
    - name: m-{1..{{.members}}}
`

// copyResults deep-copies results through their JSON, as a shard file carries them.
func copyResults(t *testing.T, r *Results) *Results {
	t.Helper()
	var b bytes.Buffer
	if err := r.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var out Results
	if err := json.Unmarshal(b.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	return &out
}

// TestMergeRefuses: merge refuses a shard of another plan, seed or size, a shard that
// does not exist, a shard or run given twice, a run naming a point, shard or seed it does
// not have, a shard missing runs or edited, and a set missing shards, naming the file and
// the field; it dropped runs of points that do not exist and pooled a repeated run.
func TestMergeRefuses(t *testing.T) {
	pl, err := Parse("merge.yaml", []byte(mergePlan))
	if err != nil {
		t.Fatal(err)
	}
	var shards [3]*Results
	for i := range shards {
		if shards[i], err = pl.Execute(Options{Shard: i, Shards: 3}); err != nil {
			t.Fatal(err)
		}
	}
	whole, err := pl.Execute(Options{})
	if err != nil {
		t.Fatal(err)
	}
	other, err := pl.Execute(Options{Shard: 0, Shards: 2})
	if err != nil {
		t.Fatal(err)
	}
	// set returns the three shards as files a.json, b.json, c.json, after edit changes copies.
	set := func(edit func(s []*Results) []*Results) []Shard {
		s := []*Results{copyResults(t, shards[0]), copyResults(t, shards[1]), copyResults(t, shards[2])}
		if edit != nil {
			s = edit(s)
		}
		var out []Shard
		for i, r := range s {
			out = append(out, Shard{Path: string(rune('a'+i)) + ".json", Results: r})
		}
		return out
	}
	m, err := Merge(pl, set(nil))
	if err != nil {
		t.Fatal(err)
	}
	if m.Digest != whole.Digest || len(m.Results) != 6 {
		t.Errorf("merged: digest %x, %d runs; unsharded %x, 6", m.Digest, len(m.Results), whole.Digest)
	}
	for _, tc := range []struct {
		name string
		edit func(s []*Results) []*Results
		want scenarios.Error // Reason: a substring
	}{
		{"another plan", func(s []*Results) []*Results { s[1].Plan = "other"; return s },
			scenarios.Error{Path: "b.json", Field: "plan", Reason: `the results of plan "other", not of merge.yaml's "merge"`}},
		{"another seed", func(s []*Results) []*Results { s[2].Seed = 8; return s },
			scenarios.Error{Path: "c.json", Field: "seed", Reason: "run with seed 8; merge.yaml has seed 7"}},
		{"another size", func(s []*Results) []*Results { s[0].Runs = 2; return s },
			scenarios.Error{Path: "a.json", Field: "runs", Reason: "a plan of 2 runs; merge.yaml has 6"}},
		{"a shard that does not exist (5 of 3)", func(s []*Results) []*Results { s[0].Shard, s[0].Shards = 5, 3; return s },
			scenarios.Error{Path: "a.json", Field: "shard", Reason: "shard 5 of 3 does not exist: the shards are 0 to 2"}},
		{"no shards", func(s []*Results) []*Results { s[0].Shards = -1; return s },
			scenarios.Error{Path: "a.json", Field: "shards", Reason: "-1 shards"}},
		{"a shard of another sharding", func(s []*Results) []*Results { return []*Results{s[0], copyResults(t, other)} },
			scenarios.Error{Path: "b.json", Field: "shards", Reason: "shard 0 of 2, but a.json is a shard of 3"}},
		{"the same shard twice", func(s []*Results) []*Results { return []*Results{s[0], s[1], copyResults(t, shards[1])} },
			scenarios.Error{Path: "c.json", Field: "shard", Reason: "shard 1 of 3 is also b.json"}},
		{"a run twice", func(s []*Results) []*Results { s[1].Results = append(s[1].Results, s[1].Results[0]); return s },
			scenarios.Error{Path: "b.json", Field: "results[2].index", Reason: "run 1 is also in b.json"}},
		{"a run of a point that does not exist", func(s []*Results) []*Results { s[0].Results[1].Point = 7; return s },
			scenarios.Error{Path: "a.json", Field: "results[1].point", Reason: "run 3 is repetition 1 of point 1, not repetition 1 of point 7"}},
		{"a run that does not exist", func(s []*Results) []*Results { s[0].Results[1].Index = 9; return s },
			scenarios.Error{Path: "a.json", Field: "results[1].index", Reason: "run 9 does not exist: the plan has runs 0 to 5"}},
		{"a run in the wrong shard", func(s []*Results) []*Results { s[0].Results[1].Index = 4; return s },
			scenarios.Error{Path: "a.json", Field: "results[1].index", Reason: "run 4 belongs to shard 1 of 3, not 0"}},
		{"a run of another seed", func(s []*Results) []*Results { s[2].Results[0].Seed++; return s },
			scenarios.Error{Path: "c.json", Field: "results[0].seed", Reason: "run 2 ran with seed"}},
		{"a shard missing a run", func(s []*Results) []*Results { s[2].Results = s[2].Results[:1]; return s },
			scenarios.Error{Path: "c.json", Field: "results", Reason: "1 runs; shard 2 of 3 has 2"}},
		{"an edited run", func(s []*Results) []*Results { s[1].Results[0].TraceHash = "0000000000000000"; return s },
			scenarios.Error{Path: "b.json", Field: "digest", Reason: "the file was changed after the shard wrote it"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Merge(pl, set(tc.edit))
			var se *scenarios.Error
			if !errors.As(err, &se) {
				t.Fatalf("Merge = %v, want a *scenarios.Error", err)
			}
			got := *se
			if !strings.Contains(got.Reason, tc.want.Reason) {
				t.Errorf("reason %q lacks %q", got.Reason, tc.want.Reason)
			}
			got.Reason = tc.want.Reason
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("refused at (-want +got):\n%s", d)
			}
		})
	}
	_, err = Merge(pl, set(func(s []*Results) []*Results { return s[1:2] }))
	if d := cmp.Diff("merge: 1 of 3 shards given; missing shard 0, 2", errString(err)); d != "" {
		t.Errorf("missing shards (-want +got):\n%s", d)
	}
	small, err := ParseWith("merge.yaml", []byte(mergePlan), ParseOptions{Small: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Merge(small, set(nil)); err == nil || !strings.Contains(err.Error(), "runs: a plan of 6 runs; merge.yaml has 2 (is it a shard of a --small run") {
		t.Errorf("shards of the full plan merged with --small: %v", err)
	}
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// TestLoadShard: a shard file is read with input.ReadFile's bound, and a file that is not a
// shard's JSON is refused with its line and field.
func TestLoadShard(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, text string
		want       scenarios.Error // Reason: a substring
	}{
		{"syntax", "{\n  \"plan\": \"p\",\n  \"shards\": 2,,\n}\n", scenarios.Error{Line: 3, Reason: "invalid character ','"}},
		{"type", "{\n  \"plan\": \"p\",\n  \"shards\": \"two\"\n}\n", scenarios.Error{Line: 3, Field: "shards", Reason: "cannot unmarshal string"}},
		{"a report", "{\"plan\": \"p\", \"points\": []}\n", scenarios.Error{Field: "shards", Reason: "not a shard's results"}},
		// The files merge is most often given by mistake are named for what they are.
		{"an HTML report", "<!DOCTYPE html>\n<html>", scenarios.Error{Line: 1, Reason: "an HTML report (it starts with <), not a shard's results: a shard is what fleetsim plan FILE --shard I/N writes"}},
		{"a Markdown report", "# Capacity plan: p\n", scenarios.Error{Line: 1, Reason: "a Markdown report, not a shard's results"}},
		{"a report's JSON", "{\"plan\": \"p\", \"points\": [], \"summary\": []}\n", scenarios.Error{Line: 1, Reason: "a plan's report (fleetsim plan -o json), not a shard's results"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, "shard.json")
			if err := os.WriteFile(p, []byte(tc.text), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := LoadShard(p)
			var se *scenarios.Error
			if !errors.As(err, &se) {
				t.Fatalf("LoadShard = %v, want a *scenarios.Error", err)
			}
			got := *se
			tc.want.Path = p
			if !strings.Contains(got.Reason, tc.want.Reason) {
				t.Errorf("reason %q lacks %q", got.Reason, tc.want.Reason)
			}
			got.Reason = tc.want.Reason
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("refused at (-want +got):\n%s", d)
			}
		})
	}
	if _, err := LoadShard("/dev/zero"); !errors.As(err, new(*input.TooLargeError)) {
		t.Errorf("LoadShard(/dev/zero) = %v, want an *input.TooLargeError", err)
	}
}
