package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/fleetsim/fleetsim/scenarios"
)

func newValidateCommand(stdout, stderr io.Writer) *cobra.Command {
	var lf limitFlags
	cmd := &cobra.Command{
		Use:   "validate FILE...",
		Short: "Check scenario files without running them",
		Long: `validate parses and checks each scenario file and reports the first problem in each, naming
the file, line and field. Exit code 0 when all are valid, 2 otherwise. It refuses everything
run would refuse before running, including scenarios that ask for more work than the limits
(--max-members, --max-events, --max-faults; see scenarios/README.md).`,
		Example: `  fleetsim validate scenarios/quickstart.yaml
  fleetsim validate scenarios/*.yaml`,
		Args:              cobra.MinimumNArgs(1),
		ValidArgsFunction: completeScenarioFiles,
		RunE: func(cmd *cobra.Command, args []string) error {
			stdout := &errWriter{w: stdout}
			bad := 0
			for _, path := range args {
				sc, err := scenarios.LoadWith(path, scenarios.Options{Limits: lf.limits()})
				if err != nil {
					fmt.Fprintln(stderr, err)
					bad++
					continue
				}
				fmt.Fprintf(stdout, "%s: ok (%s: %d member group(s), %d step(s), %d expectation(s))\n", path, sc.Name, len(sc.Members), len(sc.Timeline), len(sc.Expect))
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
	cmd.Flags().Float64Var(&l.faults, "max-faults", d.MaxFaults, "refuse scenarios whose faults are expected to draw more random failures")
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
