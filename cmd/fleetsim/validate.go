package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/fleetsim/fleetsim/scenarios"
)

func newValidateCommand(stdout, stderr io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "validate FILE...",
		Short: "Check scenario files without running them",
		Long:  "validate parses and checks each scenario file and reports the first problem in each, naming the file, line and field. Exit code 0 when all are valid, 2 otherwise.",
		Example: `  fleetsim validate scenarios/quickstart.yaml
  fleetsim validate scenarios/*.yaml`,
		Args:              cobra.MinimumNArgs(1),
		ValidArgsFunction: completeScenarioFiles,
		RunE: func(cmd *cobra.Command, args []string) error {
			stdout := &errWriter{w: stdout}
			bad := 0
			for _, path := range args {
				sc, err := scenarios.Load(path)
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
