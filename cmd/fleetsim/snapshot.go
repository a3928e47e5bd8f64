package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetsim/fleetsim/apis"
	"github.com/fleetsim/fleetsim/prod/snapshot"
)

func newSnapshotCommand(stdout, stderr io.Writer) *cobra.Command {
	var kubeconfig, out, name string
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "snapshot --kubeconfig FILE [-o fleet.yaml]",
		Short: "Capture a live hub as a scenario that starts in its state",
		Long: `snapshot reads a hub (this project's fleet hub or KubeFleet's, through the same CRDs) with list
calls only, writes nothing to it, and writes a scenario that starts in the state it found:
members with their labels, taints, properties and resources; machines and units; the
resources each placement's latest resource snapshot holds; overrides, disruption budgets,
staged update strategies, placements, staged runs and pending evictions; and each
placement's bindings as they are (initial.bindings), so the simulator keeps them instead of
scheduling from scratch. What it cannot capture is printed on stderr and written as a
comment at the top of the file.

The scenario runs with fleetsim run (its expectations check the captured clusters) and is
the starting point of fleetsim whatif.

Exit codes:
  0  the scenario was written
  2  the hub could not be read, or the file not written`,
		Example: `  # Capture the hub of the current kubeconfig context
  fleetsim snapshot --kubeconfig ~/.kube/config -o fleet.yaml

  # Check the simulator reproduces it, then preview a change
  fleetsim run fleet.yaml
  fleetsim whatif fleet.yaml --change new-placement.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			bad := func(err error) error { return &exitError{code: exitInvalid, err: err} }
			c, err := hubClient(kubeconfig)
			if err != nil {
				return bad(err)
			}
			ctx, cancel := context.WithTimeout(cmdContext(cmd), timeout)
			defer cancel()
			s, err := snapshot.Take(ctx, c, name)
			if err != nil {
				return bad(fmt.Errorf("reading the hub: %w", err))
			}
			w := stdout
			if out != "" && out != "-" {
				if err := os.WriteFile(out, s.Scenario, 0o644); err != nil {
					return bad(err)
				}
			} else if _, err := w.Write(s.Scenario); err != nil {
				return bad(fmt.Errorf("writing the scenario: %w", err))
			}
			var counts []string
			for _, k := range sortedStrings(s.Captured) {
				counts = append(counts, fmt.Sprintf("%d %s", s.Captured[k], k))
			}
			fmt.Fprintf(stderr, "captured: %s\n", strings.Join(counts, ", "))
			for _, m := range s.Missed {
				fmt.Fprintf(stderr, "not captured: %s\n", m)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&kubeconfig, "kubeconfig", "", "the hub's kubeconfig (default: $KUBECONFIG or ~/.kube/config)")
	cmd.Flags().StringVarP(&out, "output", "o", "", "write the scenario to this file (default: standard output)")
	cmd.Flags().StringVar(&name, "name", "snapshot", "the scenario's name")
	cmd.Flags().DurationVar(&timeout, "timeout", time.Minute, "give up reading the hub after this long")
	return cmd
}

// hubClient is a client of the hub a kubeconfig names, knowing every API type the hub
// serves.
func hubClient(kubeconfig string) (client.Client, error) {
	cfg, err := restConfig(kubeconfig)
	if err != nil {
		return nil, err
	}
	scheme := runtime.NewScheme()
	if err := apis.AddToScheme(scheme); err != nil {
		return nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("a client of the hub: %w", err)
	}
	return c, nil
}

func restConfig(kubeconfig string) (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if kubeconfig != "" {
		if _, err := os.Stat(kubeconfig); err != nil {
			return nil, fmt.Errorf("--kubeconfig: %w", err)
		}
		rules.ExplicitPath = kubeconfig
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	if cfg == nil {
		return nil, errors.New("kubeconfig: no cluster")
	}
	return cfg, nil
}

func cmdContext(cmd *cobra.Command) context.Context {
	if ctx := cmd.Context(); ctx != nil {
		return ctx
	}
	return context.Background()
}

func sortedStrings[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
