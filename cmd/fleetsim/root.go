package main

import (
	"fmt"
	"io"
	"runtime/debug"

	"github.com/spf13/cobra"
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
	root.AddCommand(newRunCommand(stdout, stderr), newValidateCommand(stdout, stderr), newBenchCommand(stdout), newVersionCommand(stdout))
	return root
}

func newVersionCommand(stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version of fleetsim",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintln(stdout, versionString())
			return nil
		},
	}
}

func versionString() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "fleetsim (unknown version)"
	}
	v := "fleetsim " + info.Main.Version
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			v += " revision " + s.Value
		case "vcs.modified":
			if s.Value == "true" {
				v += " (modified)"
			}
		}
	}
	return v + " " + info.GoVersion
}
