//go:build fleetsim_mutants

// Command fuzzmutants is `make fuzz-mutants`: it runs the CI fuzz campaign (the same seed
// and run budget as `make fuzz-ci`) once per planted bug of model/mutant, writes the shrunk
// failing scenario of every kill to --out, and rewrites the mutation-score block of
// --report (between its begin and end markers). It builds only with the fleetsim_mutants
// tag, which no production build sets.
//
//	go run -tags fleetsim_mutants ./hack/fuzzmutants --runs 10000 --seed 1 scenarios/*.yaml
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/fleetsim/fleetsim/scenarios/fuzz"
	"github.com/fleetsim/fleetsim/scenarios/input"
)

const (
	beginMark = "<!-- fuzz-mutants:begin (written by make fuzz-mutants; do not edit by hand) -->"
	endMark   = "<!-- fuzz-mutants:end -->"
)

func main() {
	runs := flag.Int("runs", 10000, "runs of each mutant's campaign (make fuzz-ci's budget)")
	seed := flag.Uint64("seed", 1, "campaign seed (make fuzz-ci's)")
	parallel := flag.Int("parallel", runtime.GOMAXPROCS(0), "runs at once")
	report := flag.String("report", "", "markdown file whose mutation-score block is rewritten (none: print the block)")
	out := flag.String("out", "", "directory the shrunk scenario of each kill is written to (none: not written)")
	only := flag.String("mutants", "", "comma-separated mutants to run (default all)")
	flag.Parse()
	if err := run(flag.Args(), *runs, *seed, *parallel, *report, *out, *only); err != nil {
		fmt.Fprintln(os.Stderr, "fuzzmutants:", err)
		os.Exit(2)
	}
}

func run(paths []string, runs int, seed uint64, parallel int, report, out, only string) error {
	if len(paths) == 0 {
		return fmt.Errorf("no scenario file")
	}
	var targets []*fuzz.Target
	for _, p := range paths {
		data, err := input.ReadFile(p)
		if err != nil {
			return err
		}
		t, err := fuzz.Prepare(p, data, 0)
		if err != nil {
			return err
		}
		targets = append(targets, t)
	}
	var names []string
	if only != "" {
		names = strings.Split(only, ",")
	}
	if out != "" {
		if err := os.MkdirAll(out, 0o755); err != nil {
			return err
		}
	}
	opts := fuzz.Options{Seed: seed, Runs: runs, Parallel: parallel, Converge: true}
	rs, err := fuzz.Mutants(targets, opts, names, func(r fuzz.MutantResult) {
		verdict := "SURVIVED"
		if r.Killed {
			verdict = "killed by " + r.KilledBy()
		}
		fmt.Fprintf(os.Stderr, "%-40s %s (%d runs, %.0fs)\n", r.Mutant.Name, verdict, r.Runs, r.Seconds)
		if out != "" && r.Failure != nil {
			if err := os.WriteFile(filepath.Join(out, r.FailureFile()), []byte(r.Failure.Scenario), 0o644); err != nil {
				fmt.Fprintln(os.Stderr, "fuzzmutants:", err)
			}
		}
	})
	if err != nil {
		return err
	}
	block := render(rs, runs, seed, out)
	if report == "" {
		fmt.Print(block)
		return nil
	}
	return rewrite(report, block)
}

// render is the mutation-score block of the report.
func render(rs []fuzz.MutantResult, runs int, seed uint64, out string) string {
	var b strings.Builder
	killed := 0
	for _, r := range rs {
		if r.Killed {
			killed++
		}
	}
	fmt.Fprintf(&b, "%s\n", beginMark)
	fmt.Fprintf(&b, "Each mutant's campaign: `fleetsim fuzz scenarios/*.yaml --runs %d --seed %d` (make fuzz-ci's) with that mutant on.\n\n", runs, seed)
	fmt.Fprintf(&b, "**Mutation score: %d of %d mutants killed (%.0f %%).**\n\n", killed, len(rs), fuzz.Score(rs))
	fmt.Fprintln(&b, "| mutant | slip | verdict | killed by | first failing run | faults (shrunk from) | shrunk scenario |")
	fmt.Fprintln(&b, "|---|---|---|---|---:|---|---|")
	for _, r := range rs {
		verdict, by, run, faults, file := "**survived**", "", "", "", ""
		if r.Killed {
			verdict, by = "killed", r.KilledBy()
		}
		if f := r.Failure; f != nil {
			run = fmt.Sprintf("%d (%s)", f.Run, filepath.Base(f.Source))
			faults = fmt.Sprintf("%d (%d), end %s", f.Faults, f.OriginalFaults, f.End)
			if out != "" {
				file = fmt.Sprintf("[%s](%s)", r.FailureFile(), filepath.Join(filepath.Base(out), r.FailureFile()))
			}
		} else if r.Err != "" {
			run = strings.ReplaceAll(r.Err, "|", "\\|")
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s | %s |\n", r.Mutant.Name, r.Mutant.Slip, verdict, by, run, faults, file)
	}
	fmt.Fprintf(&b, "%s\n", endMark)
	return b.String()
}

// rewrite replaces the block between the markers of the report (appending it when the
// report has none).
func rewrite(path, block string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	i, j := bytes.Index(data, []byte(beginMark)), bytes.Index(data, []byte(endMark))
	var next []byte
	if i >= 0 && j > i {
		rest := bytes.TrimPrefix(data[j+len(endMark):], []byte("\n"))
		next = append(append(append([]byte(nil), data[:i]...), block...), rest...)
	} else {
		next = append(append(append([]byte(nil), data...), '\n'), block...)
	}
	return os.WriteFile(path, next, 0o644)
}
