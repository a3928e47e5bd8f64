package hub

import (
	"github.com/benbjohnson/clock"

	"github.com/fleetsim/fleetsim/model/member"
)

// orWallClock is c, or the wall clock when c is nil: the binaries leave it unset, tests
// pass a mock.
func orWallClock(c clock.Clock) clock.Clock {
	if c == nil {
		return clock.New()
	}
	return c
}

// orDefaultEligibility is e, or member.DefaultEligibility when e is unset.
func orDefaultEligibility(e member.EligibilityConfig) member.EligibilityConfig {
	if e == (member.EligibilityConfig{}) {
		return member.DefaultEligibility
	}
	return e
}
