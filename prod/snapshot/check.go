package snapshot

import (
	"fmt"
	"time"

	"github.com/fleetsim/fleetsim/scenarios"
	"github.com/fleetsim/fleetsim/scenarios/runner"
	"github.com/fleetsim/fleetsim/sim"
)

// check runs the written scenario in the simulator and says what of it the simulator
// refuses (an object it cannot apply, a step that fails) or does not reproduce (a
// placement ending on other clusters than captured).
func check(name string, text []byte) []string {
	sc, err := scenarios.Parse(name+".yaml", text)
	if err != nil {
		return []string{fmt.Sprintf("the scenario does not parse: %v", err)}
	}
	var out []string
	setup := func(s *sim.Sim, _ time.Duration) {
		s.Observe(func(at time.Duration, kind, subject, detail string) {
			if kind == "apply-rejected" || kind == "step-failed" {
				out = append(out, fmt.Sprintf("the simulator refuses %s at %s: %s", subject, at, detail))
			}
		})
	}
	rep, err := runner.Run(sc, runner.Options{TolerateStepErrors: true, Setup: setup})
	if err != nil {
		return []string{fmt.Sprintf("the scenario does not run: %v", err)}
	}
	for _, e := range rep.Expectations {
		if !e.Passed {
			out = append(out, fmt.Sprintf("the simulator does not reproduce it: %s: %s", e.Description, e.Detail))
		}
	}
	return out
}
