// Command fleetctl drives a fleetsim hub's units and machines through the fleet API v1, as
// CoreOS fleet's fleetctl does with its API driver.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := execute(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// execute runs fleetctl with args and returns its exit code: 0 success, 1 an operation
// failed, 2 bad usage.
func execute(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	// A unique prefix names a command ("star" is start; "st" is ambiguous), as in upstream
	// fleetctl. cobra keeps this switch in a package variable.
	cobra.EnablePrefixMatching = true
	root, g := newRoot(stdout, stderr)
	defer g.closeClients()
	root.SetArgs(args)
	started := false // set once flags and arguments are valid and a command runs
	pre := root.PersistentPreRunE
	root.PersistentPreRunE = func(cmd *cobra.Command, a []string) error {
		if err := pre(cmd, a); err != nil {
			return err
		}
		started = true
		return nil
	}
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	fmt.Fprintln(stderr, "Error:", err)
	var ue *usageError
	if errors.As(err, &ue) || !started {
		return 2 // bad flags, arguments or unknown command (cobra's own errors)
	}
	return 1
}

type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
