package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
)

// waitForAPIServer asks the API server for its version until it answers, ctx ends or
// patience runs out, writing one line per failed try with the wait before the next one
// (doubling from a second up to 30 s). An operator starting the hub before its API server,
// or pointing it at the wrong address, sees what is wrong and that the hub is still trying,
// rather than pages of stack traces or a silent exit.
func waitForAPIServer(ctx context.Context, cfg *rest.Config, patience time.Duration, log io.Writer) error {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(patience)
	// apimachinery's Backoff gives the schedule (1 s doubling to 30 s); the loop stays here
	// because each try logs its error and the wait before the next one, and the patience
	// is a deadline rather than a number of steps.
	backoff := wait.Backoff{Duration: time.Second, Factor: 2, Cap: 30 * time.Second, Steps: math.MaxInt32}
	for try := 1; ; try++ {
		delay := backoff.Step()
		_, err := dc.ServerVersion()
		if err == nil {
			return nil
		}
		if time.Now().Add(delay).After(deadline) {
			return fmt.Errorf("API server %s unreachable for %s (%d tries), giving up: %w", cfg.Host, patience, try, err)
		}
		fmt.Fprintf(log, "fleet: API server %s unreachable (try %d): %v; retrying in %s\n", cfg.Host, try, err, delay)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
	}
}
