package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/fleetsim/fleetsim/scenarios"
)

// validation is one file's verdict in validate -o json|yaml.
type validation struct {
	File         string `json:"file"`
	Valid        bool   `json:"valid"`
	Scenario     string `json:"scenario,omitempty"`
	MemberGroups int    `json:"memberGroups,omitempty"`
	Steps        int    `json:"steps,omitempty"`
	Expectations int    `json:"expectations,omitempty"`
	Error        string `json:"error,omitempty"`
	Line         int    `json:"line,omitempty"`
	Field        string `json:"field,omitempty"`
	Reason       string `json:"reason,omitempty"`
}

func newValidateCommand(stdout, stderr io.Writer) *cobra.Command {
	var lf limitFlags
	var output string
	cmd := &cobra.Command{
		Use:   "validate FILE...",
		Short: "Check scenario files without running them",
		Long: `validate parses and checks each scenario file and reports the first problem in each, naming
the file, line and field. Exit code 0 when all are valid, 2 otherwise. It refuses everything
run would refuse before running, including scenarios that ask for more work than the limits
(--max-members, --max-events, --max-expected-faults; see scenarios/README.md).`,
		Example: `  fleetsim validate scenarios/quickstart.yaml
  fleetsim validate scenarios/*.yaml

  # Machine-readable verdicts: a list with file, line, field and reason of each problem
  fleetsim validate scenarios/*.yaml -o json`,
		Args:              cobra.MinimumNArgs(1),
		ValidArgsFunction: completeScenarioFiles,
		RunE: func(cmd *cobra.Command, args []string) error {
			warnLimits(cmd, stderr)
			switch output {
			case "text", "json", "yaml":
			default:
				return &exitError{code: exitInvalid, err: fmt.Errorf("--output %q is not one of text, json, yaml", output)}
			}
			stdout := &errWriter{w: stdout}
			bad := 0
			results := []validation{}
			for _, path := range args {
				v := validation{File: path, Valid: true}
				sc, err := scenarios.LoadWith(path, scenarios.Options{Limits: lf.limits()})
				if err != nil {
					bad++
					v.Valid, v.Error = false, err.Error()
					var perr *scenarios.Error
					if errors.As(err, &perr) {
						v.Line, v.Field, v.Reason = perr.Line, perr.Field, perr.Reason
					}
					if output == "text" {
						fmt.Fprintln(stderr, err)
					}
				} else {
					v.Scenario, v.MemberGroups, v.Steps, v.Expectations = sc.Name, len(sc.Members), len(sc.Timeline), len(sc.Expect)
					if output == "text" {
						fmt.Fprintf(stdout, "%s: ok (%s: %d member group(s), %d step(s), %d expectation(s))\n", path, sc.Name, len(sc.Members), len(sc.Timeline), len(sc.Expect))
					}
				}
				results = append(results, v)
			}
			if err := writeStructured(stdout, output, results); err != nil {
				return err
			}
			if err := stdout.check(); err != nil {
				return err
			}
			if bad > 0 {
				return &exitError{code: exitInvalid, err: errors.New(plural(bad, "invalid scenario file"))}
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text, json or yaml (a list, one entry per file)")
	lf.register(cmd)
	return cmd
}

// limitFlags raise the limits on the work a scenario may ask for (scenarios.Limits).
type limitFlags struct {
	members int
	events  float64
	faults  float64
}

func (l *limitFlags) register(cmd *cobra.Command) {
	d := scenarios.DefaultLimits
	cmd.Flags().IntVar(&l.members, "max-members", d.MaxMembers, "refuse scenarios that define more members")
	cmd.Flags().Float64Var(&l.events, "max-events", d.MaxEvents, "refuse scenarios estimated to process more events (heartbeats, joins, failures); 1e8 is about a minute")
	cmd.Flags().Float64Var(&l.faults, "max-expected-faults", d.MaxFaults, "refuse scenarios whose faults: section is expected to draw more random failures (a limit; fuzz --max-faults is a count of injected faults)")
	// --max-faults was this limit's name; fuzz's --max-faults is a count. Kept, hidden, so
	// that scripts still run.
	cmd.Flags().Float64Var(&l.faults, "max-faults", d.MaxFaults, "deprecated: use --max-expected-faults")
	_ = cmd.Flags().MarkHidden("max-faults")
}

// warnLimits says on stderr that --max-faults is deprecated, when it was used.
func warnLimits(cmd *cobra.Command, stderr io.Writer) {
	if cmd.Flags().Changed("max-faults") {
		fmt.Fprintln(stderr, "fleetsim: --max-faults is deprecated for run and validate: use --max-expected-faults")
	}
}

func (l *limitFlags) limits() scenarios.Limits {
	return scenarios.Limits{MaxMembers: l.members, MaxEvents: l.events, MaxFaults: l.faults}
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func completeScenarioFiles(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return []string{"yaml", "yml"}, cobra.ShellCompDirectiveFilterFileExt
}
