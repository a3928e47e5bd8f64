package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fleetsim/fleetsim/internal/version"
)

func newRootCommand(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "fleetsim",
		Short: "Simulate a fleet of clusters and machines, deterministically",
		Long: `fleetsim runs scenario files in a discrete-event simulator of a KubeFleet hub, its member
clusters and machines: members join, heartbeat, fail and heal; placements are scheduled by the
same code the production hub runs. Each run is deterministic: the same file and seed give the
same trace hash on any machine.

Exit codes:
  0  every expectation and invariant held
  1  some expectation or invariant failed
  2  invalid input (file, line and field are named) or the run could not complete

The scenario format is documented in scenarios/README.md.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.Version = version.Get().String()
	root.SetVersionTemplate("fleetsim version {{.Version}}\n")
	root.AddCommand(newRunCommand(stdout, stderr), newFuzzCommand(stdout, stderr), newPlanCommand(stdout, stderr), newValidateCommand(stdout, stderr), newBenchCommand(stdout, stderr), newVersionCommand(stdout))
	root.AddCommand(newSnapshotCommand(stdout, stderr), newWhatifCommand(stdout, stderr))
	strictCompletion(root)
	return root
}

// strictCompletion makes `fleetsim completion SHELL` fail (exit 2) for a shell it has no
// script for; cobra's default completion command prints its help and exits 0 instead.
func strictCompletion(root *cobra.Command) {
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() != "completion" {
			continue
		}
		var shells []string
		for _, sc := range c.Commands() {
			shells = append(shells, sc.Name())
		}
		c.Args = cobra.ArbitraryArgs
		c.RunE = func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmd.Help()
			}
			return &exitError{code: exitInvalid, err: fmt.Errorf("completion: no script for shell %q; want one of %s", args[0], strings.Join(shells, ", "))}
		}
	}
}

func newVersionCommand(stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version of fleetsim",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if _, err := fmt.Fprintln(stdout, versionString()); err != nil {
				return &exitError{code: exitInvalid, err: fmt.Errorf("writing the output: %w", err)}
			}
			return nil
		},
	}
}

func versionString() string {
	return "fleetsim version " + version.Get().String()
}
