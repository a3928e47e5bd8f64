package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestPlanBoundsExit2: every bad input to fleetsim plan and plan merge ends at once with exit
// 2 and a message naming the file (and line and field where it has them), never printing a
// control byte from the input.
func TestPlanBoundsExit2(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "tiny.yaml")
	if err := os.WriteFile(file, []byte(tinyPlan), 0o644); err != nil {
		t.Fatal(err)
	}
	shard := func(spec string) string {
		code, out, errOut := run(t, "plan", file, "--shard", spec)
		if code != exitOK {
			t.Fatalf("plan --shard %s = exit %d; stderr:\n%s", spec, code, errOut)
		}
		p := filepath.Join(dir, "shard-"+strings.ReplaceAll(spec, "/", "-of-")+".json")
		if err := os.WriteFile(p, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	s0, s1 := shard("0/2"), shard("1/2")
	edited := func(name, from, old, new string) string {
		data, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(strings.Replace(string(data), old, new, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	notDir := write("report", "keep me")
	// 30,000 runs: minutes of work if --out were checked after them.
	long := write("long.yaml", strings.Replace(tinyPlan, "repetitions: 2", "repetitions: 10000", 1))
	s5 := edited("shard-5.json", s0, `"shard": 0`, `"shard": 5`)
	for _, tc := range []struct {
		name string
		args []string
		want string // the message, after "fleetsim: "
	}{
		{"plan /dev/zero", []string{"plan", "/dev/zero"}, "/dev/zero: larger than 1 MiB, the most fleetsim reads from such a file (is it the file you meant?)"},
		{"merge /dev/zero", []string{"plan", "merge", file, "/dev/zero"}, "/dev/zero: larger than 256 MiB, the most fleetsim reads from such a file (is it the file you meant?)"},
		{"scenarioFile /dev/zero", []string{"plan", write("zero.yaml", "name: z\nscenarioFile: /dev/zero\n")},
			dir + "/zero.yaml:2: scenarioFile: /dev/zero: larger than 1 MiB, the most fleetsim reads from such a file (is it the file you meant?)"},
		{"seq at the largest int", []string{"plan", write("seq.yaml", "name: s\nscenario: |\n  name: s\n  duration: 1m\n  # {{range seq -9223372036854775807 9223372036854775807}}{{end}}\n")},
			dir + "/seq.yaml:5: scenario: template (default): executing \"scenario\" at <seq -9223372036854775807 9223372036854775807>: error calling seq: seq -9223372036854775807 9223372036854775807: 1.84e+19 values, more than the 999,999 steps left of the 1,000,000 a render may take (MaxTemplateSteps)"},
		{"10^9 points", []string{"plan", write("points.yaml", "name: p\nsweep:\n"+
			"  a: [1,2,3,4,5,6,7,8,9,10]\n  b: [1,2,3,4,5,6,7,8,9,10]\n  c: [1,2,3,4,5,6,7,8,9,10]\n  d: [1,2,3,4,5,6,7,8,9,10]\n  e: [1,2,3,4,5,6,7,8,9,10]\n  f: [1,2,3,4,5,6,7,8,9,10]\n  g: [1,2,3,4,5,6,7,8,9,10]\n  h: [1,2,3,4,5,6,7,8,9,10]\n  i: [1,2,3,4,5,6,7,8,9,10]\nscenario: x\n")},
			dir + "/points.yaml:7: sweep.e: the sweep has more than 10,000 points so far (a 10 × b 10 × c 10 × d 10 × e 10); a plan may have at most 10,000 (MaxPoints)"},
		{"samples", []string{"plan", write("sample.yaml", "name: s\nsample: 1s\nscenario: |\n  name: s\n  duration: 2000000h\n")},
			dir + "/sample.yaml:2: sample: the scenario rendered for default lasts 2000000h0m0s: sampling every 1s takes 7,200,000,000 samples per run, more than 10,000 (MaxSamplesPerRun); sample less often"},
		{"burst", []string{"plan", write("burst.yaml", "name: b\nhub: {burst: 9223372036854775807}\nscenario: x\n")},
			dir + `/burst.yaml:2: hub.burst: must be an integer from 1 to 1,000,000 (MaxBurst), not "9223372036854775807"`},
		{"--out onto a file, before 30,000 runs", []string{"plan", long, "--out", notDir},
			"--out " + notDir + ": exists and is not a directory (the report is written as files in it)"},
		{"merge --out onto a file", []string{"plan", "merge", file, s0, s1, "--out", notDir},
			"--out " + notDir + ": exists and is not a directory (the report is written as files in it)"},
		{"merge shard 5 of 2", []string{"plan", "merge", file, s0, s1, s5}, s5 + ": shard: shard 5 of 2 does not exist: the shards are 0 to 1"},
		{"merge a shard twice", []string{"plan", "merge", file, s0, s1, s0}, s0 + ": shard: shard 0 of 2 is also " + s0 + ": each shard once"},
		{"merge a shard of another seed", []string{"plan", "merge", file, edited("seed-2.json", s1, `"seed": 1,`, `"seed": 2,`), s0},
			dir + "/seed-2.json: seed: run with seed 2; " + file + " has seed 1"},
		{"merge a missing shard", []string{"plan", "merge", file, s1}, "merge: 1 of 2 shards given; missing shard 0"},
		{"control bytes in a plan", []string{"plan", write("evil.yaml", "name: p\n\"\\e]0;pwned\\a\\e[2J\": 1\nscenario: x\n")},
			dir + `/evil.yaml:2: \x1b]0;pwned\a\x1b[2J: unknown field; want one of name, question, seed, repetitions, scenario, scenarioFile, parameters, sweep, hub, x, sample, small, phases`},
		{"control bytes in a shard", []string{"plan", "merge", file, edited("evil.json", s0, `"plan": "tiny"`, `"plan": "\u001b[2J\u009b\u202e"`), s1},
			dir + `/evil.json: plan: the results of plan "\x1b[2J\u009b\u202e", not of ` + file + `'s "tiny"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			code, out, errOut := run(t, tc.args...)
			// A bound against hanging or reading without end, not a performance figure: on
			// a loaded CI machine reading 256 MiB of /dev/zero alone takes several seconds.
			if d := time.Since(start); d > time.Minute {
				t.Errorf("took %s", d)
			}
			if code != exitInvalid || out != "" {
				t.Errorf("exit %d, stdout %q; want exit 2 and nothing", code, out)
			}
			if d := cmp.Diff("fleetsim: "+tc.want+"\n", errOut); d != "" {
				t.Errorf("stderr (-want +got):\n%s", d)
			}
		})
	}
	if data, err := os.ReadFile(notDir); err != nil || string(data) != "keep me" {
		t.Errorf("the file --out named: %q, %v", data, err)
	}
}

// TestPlanHelpStatesBounds: plan --help lists the bounds from the constants, and plan merge
// --help what it refuses.
func TestPlanHelpStatesBounds(t *testing.T) {
	code, out, _ := run(t, "plan", "--help")
	for _, want := range []string{"plan file, scenarioFile   at most 1 MiB", "points (sweep product)    at most 10,000",
		"rendered scenario         at most 8 MiB and 1,000,000 template steps", "samples per run           at most 10,000",
		"burst 1 to 1,000,000", "shard file (plan merge)   at most 256 MiB"} {
		if code != exitOK || !strings.Contains(out, want) {
			t.Errorf("plan --help = exit %d, lacks %q:\n%s", code, want, out)
		}
	}
	code, out, _ = run(t, "plan", "merge", "--help")
	if code != exitOK || !strings.Contains(out, "a shard\nthat does not exist (5 of 2)") {
		t.Errorf("plan merge --help = exit %d:\n%s", code, out)
	}
}
