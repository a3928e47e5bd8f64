package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fleetsim/fleetsim/prod/snapshot"
	"github.com/fleetsim/fleetsim/scenarios/whatif"
)

// verifyFlags are whatif's --verify: apply the change to a hub and compare.
type verifyFlags struct {
	kubeconfig string
	timeout    time.Duration
	poll       time.Duration
}

func (v *verifyFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&v.kubeconfig, "verify", "", "KUBECONFIG of a hub (a staging hub: this WRITES the change to it) to apply the change to and compare with the prediction")
	cmd.Flags().DurationVar(&v.timeout, "verify-timeout", 10*time.Minute, "with --verify: how long to wait for the hub to reach the predicted state")
	cmd.Flags().DurationVar(&v.poll, "verify-poll", 2*time.Second, "with --verify: how often to read the hub")
}

// verifyResult is what --verify found.
type verifyResult struct {
	Hub string `json:"hub"`
	// Agree: the hub reached the predicted bindings and manifests within the timeout.
	Agree bool `json:"agree"`
	// Stale lists where the hub before the change differed from the snapshot's prediction
	// of "now" (the snapshot is out of date, or not reproduced).
	Stale []string `json:"stale,omitempty"`
	// Differences are where the hub's outcome differs from the prediction (at the timeout).
	Differences []string `json:"differences,omitempty"`
	// Took is how long the hub took to reach the prediction (wall clock); Predicted the
	// longest predicted time to Available of an affected placement.
	Took      string `json:"took,omitempty"`
	Predicted string `json:"predicted"`
}

func (v *verifyFlags) run(ctx context.Context, _ []*whatif.Change, res *whatif.Result, stderr io.Writer) (*verifyResult, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := snapshot.CheckApplicable(res.Steps); err != nil {
		return nil, err
	}
	c, err := hubClient(v.kubeconfig)
	if err != nil {
		return nil, err
	}
	out := &verifyResult{Hub: v.kubeconfig, Predicted: predictedTime(res.Report)}
	before, err := snapshot.ReadState(ctx, c, time.Now())
	if err != nil {
		return nil, err
	}
	out.Stale = whatif.Compare(res.Before, before)
	fmt.Fprintf(stderr, "fleetsim: --verify: applying %d step(s) to %s\n", len(res.Steps), v.kubeconfig)
	start := time.Now()
	if err := snapshot.Apply(ctx, c, res.Steps); err != nil {
		return nil, err
	}
	deadline := start.Add(v.timeout)
	for {
		now := time.Now()
		after, err := snapshot.ReadState(ctx, c, now)
		if err != nil {
			return nil, err
		}
		out.Differences = whatif.Compare(res.After, after)
		if len(out.Differences) == 0 && allAvailable(after) {
			out.Agree, out.Took = true, now.Sub(start).Round(100*time.Millisecond).String()
			return out, nil
		}
		if now.After(deadline) {
			// Agreeing bindings and manifests agree, even when some cluster never became
			// available (its workload, not the prediction, is at fault): Took stays empty.
			out.Agree = len(out.Differences) == 0
			return out, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(v.poll):
		}
	}
}

func allAvailable(st whatif.State) bool {
	for _, p := range st.Placements {
		for _, c := range p.Clusters {
			if !c.Available {
				return false
			}
		}
	}
	return true
}

func predictedTime(r *whatif.Report) string {
	var longest time.Duration
	for _, p := range r.Placements {
		d, err := time.ParseDuration(p.Timeline.ToAvailable)
		if err != nil {
			return p.Timeline.ToAvailable
		}
		longest = max(longest, d)
	}
	return longest.String()
}

func (r *verifyResult) writeText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "\nVerified on %s:\n", r.Hub)
	for _, s := range r.Stale {
		fmt.Fprintf(&b, "  stale snapshot: %s\n", s)
	}
	switch {
	case r.Agree && r.Took != "":
		fmt.Fprintf(&b, "  the hub reached the predicted bindings and manifests, all available, in %s (predicted %s)\n", r.Took, r.Predicted)
	case r.Agree:
		fmt.Fprintf(&b, "  the hub holds the predicted bindings and manifests, but not every cluster became available in time (predicted %s)\n", r.Predicted)
	default:
		b.WriteString("  the hub's outcome differs from the prediction:\n")
		for _, d := range r.Differences {
			fmt.Fprintf(&b, "    %s\n", strings.ReplaceAll(d, "\n", "\n    "))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
