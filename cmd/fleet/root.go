package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/fleetsim/fleetsim/internal/version"
)

func newRootCommand(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "fleet",
		Short: "Run fleetsim's production hub and member agents",
		Long: `fleet runs fleetsim's production components against real servers.

Exit codes:
  0  stopped cleanly (SIGTERM or SIGINT)
  1  the manager failed while running
  2  bad flags or configuration`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(newHubCommand(stderr), newAgentCommand(stderr), newMemberCommand(stderr), newBenchCommand(stdout, stderr),
		newJoinCommand(stdout), newLocalCommand(stdout, stderr), &cobra.Command{
			Use:   "version",
			Short: "Print the version of fleet",
			Args:  cobra.NoArgs,
			Run: func(cmd *cobra.Command, _ []string) {
				fmt.Fprintln(cmd.OutOrStdout(), "fleet version", version.Get())
			},
		})
	root.Version = version.Get().String()
	root.SetVersionTemplate("fleet version {{.Version}}\n")
	return root
}
