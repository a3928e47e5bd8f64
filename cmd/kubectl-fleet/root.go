package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/fleetsim/fleetsim/apis"
	"github.com/fleetsim/fleetsim/internal/version"
	"k8s.io/apimachinery/pkg/runtime"
)

// globals are the flags every command takes.
type globals struct {
	kubeconfig string
	context    string
	output     string
}

func newRoot(stdout, stderr io.Writer) *cobra.Command {
	g := &globals{}
	root := &cobra.Command{
		Use:   "kubectl-fleet",
		Short: "Operate a fleetsim (KubeFleet-compatible) hub: approve, drain, uncordon, why",
		Long: `kubectl-fleet is a kubectl plugin: installed on $PATH, it runs as "kubectl fleet". It talks
to the hub's API server with the kubeconfig kubectl uses (--kubeconfig, $KUBECONFIG,
~/.kube/config; --context picks a context).

Exit codes: 0 done, 1 an operation failed, 2 bad usage.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(*cobra.Command, []string) error {
			switch g.output {
			case "text", "json", "yaml":
				return nil
			}
			return &usageError{fmt.Errorf("--output %q: must be text, json or yaml", g.output)}
		},
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &usageError{err} })
	pf := root.PersistentFlags()
	pf.StringVar(&g.kubeconfig, "kubeconfig", "", "the hub's kubeconfig (default: $KUBECONFIG, ~/.kube/config)")
	pf.StringVar(&g.context, "context", "", "the kubeconfig context to use")
	pf.StringVarP(&g.output, "output", "o", "text", "output format: text, json or yaml")
	root.Version = version.Get().String()
	root.SetVersionTemplate("kubectl-fleet version {{.Version}}\n")
	root.AddCommand(newApproveCommand(g, stdout), newDrainCommand(g, stdout), newUncordonCommand(g, stdout), newWhyCommand(g, stdout),
		&cobra.Command{Use: "version", Short: "Print the version of kubectl-fleet", Args: cobra.NoArgs,
			Run: func(cmd *cobra.Command, _ []string) {
				fmt.Fprintln(cmd.OutOrStdout(), "kubectl-fleet version", version.Get())
			}})
	return root
}

// hubClient is a client of the hub's API server for g's kubeconfig and context.
func (g *globals) hubClient() (client.Client, error) {
	ctrl.SetLogger(logr.Discard()) // a one-shot command reports its own errors
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = g.kubeconfig
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: g.context}).ClientConfig()
	if err != nil {
		return nil, &usageError{fmt.Errorf("kubeconfig: %w", err)}
	}
	scheme := runtime.NewScheme()
	if err := apis.AddToScheme(scheme); err != nil {
		return nil, err
	}
	return client.New(cfg, client.Options{Scheme: scheme})
}

// print writes v as JSON or YAML, or calls text for -o text.
func (g *globals) print(w io.Writer, v any, text func() error) error {
	switch g.output {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	case "yaml":
		b, err := yaml.Marshal(v)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	}
	return text()
}

// isCobraUsage tells cobra's own argument errors (counts, unknown commands) from failures.
func isCobraUsage(err error) bool {
	msg := err.Error()
	for _, s := range []string{"unknown command", "accepts ", "requires at least", "requires at most", "unknown flag", "unknown shorthand"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}
