package member

import (
	"fmt"
	"time"
)

// EligibilityConfig holds the two windows of the eligibility rule (MC-HEARTBEAT-HEALTH).
type EligibilityConfig struct {
	// HeartbeatTimeout: a member whose last heartbeat is older than this is disconnected.
	HeartbeatTimeout time.Duration
	// UnhealthyTolerance: a member unhealthy for longer than this is ineligible; shorter
	// spells of unhealthiness are tolerated.
	UnhealthyTolerance time.Duration
}

// DefaultEligibility is upstream's: five minutes for both windows.
var DefaultEligibility = EligibilityConfig{HeartbeatTimeout: 5 * time.Minute, UnhealthyTolerance: 5 * time.Minute}

// IneligibleCode says which eligibility check failed. The zero value means eligible.
type IneligibleCode uint8

const (
	Eligible IneligibleCode = iota
	Left
	AgentNotOnline
	NoRecentHeartbeat
	AgentNotJoined
	HealthUnknown
	UnhealthyTooLong
)

// Eligibility is the outcome of the eligibility check, kept as data so that deciding over
// thousands of members formats no strings; String renders the user-facing reason.
type Eligibility struct {
	Code IneligibleCode
	// Since is how long ago the heartbeat was received or the health condition last changed,
	// for the codes that report it.
	Since time.Duration
}

// OK reports whether the member may receive new placements.
func (e Eligibility) OK() bool { return e.Code == Eligible }

func (e Eligibility) String() string {
	const disconnected = "cluster is not connected to the fleet: "
	switch e.Code {
	case Eligible:
		return "cluster is eligible"
	case Left:
		return "cluster has left the fleet"
	case AgentNotOnline:
		return disconnected + "member agent not online yet"
	case NoRecentHeartbeat:
		return fmt.Sprintf(disconnected+"no recent heartbeat signals (last received %.2f minutes ago)", e.Since.Minutes())
	case AgentNotJoined:
		return disconnected + "member agent not joined yet"
	case HealthUnknown:
		return disconnected + "health condition not available"
	case UnhealthyTooLong:
		return fmt.Sprintf(disconnected+"unhealthy for a prolonged period of time (last transitioned %.2f minutes ago)", e.Since.Minutes())
	}
	return fmt.Sprintf("unknown eligibility code %d", e.Code)
}

// CheckEligibility applies the checks in upstream's order; the first failure wins.
func (m *Member) CheckEligibility(now time.Time, cfg EligibilityConfig) Eligibility {
	switch {
	case m.Leaving:
		return Eligibility{Code: Left}
	case !m.Agent.Present:
		return Eligibility{Code: AgentNotOnline}
	}
	if since := now.Sub(m.Agent.LastHeartbeat); since > cfg.HeartbeatTimeout {
		return Eligibility{Code: NoRecentHeartbeat, Since: since}
	}
	switch {
	case !m.Agent.Joined:
		return Eligibility{Code: AgentNotJoined}
	case !m.Agent.HealthKnown:
		return Eligibility{Code: HealthUnknown}
	}
	if !m.Agent.Healthy {
		if since := now.Sub(m.Agent.HealthTransition); since > cfg.UnhealthyTolerance {
			return Eligibility{Code: UnhealthyTooLong, Since: since}
		}
	}
	return Eligibility{}
}

// EligibilityChecker is CheckEligibility at one time, for checking many members: the
// windows' cut-off times are computed once, so a check compares times instead of
// subtracting them. Check(m) equals m.CheckEligibility(now, cfg) for every member:
// now.Sub(t) > window exactly when t is before now.Add(-window), since Sub is exact
// within ±292 years and saturates beyond, on the same side.
type EligibilityChecker struct {
	now                         time.Time
	staleBefore, unhealthySince time.Time
}

// NewEligibilityChecker prepares checks at now with cfg's windows.
func NewEligibilityChecker(now time.Time, cfg EligibilityConfig) EligibilityChecker {
	return EligibilityChecker{now: now, staleBefore: now.Add(-cfg.HeartbeatTimeout), unhealthySince: now.Add(-cfg.UnhealthyTolerance)}
}

// Check is m.CheckEligibility at the checker's time and windows.
func (c *EligibilityChecker) Check(m *Member) Eligibility { return c.CheckStatus(m.Leaving, &m.Agent) }

// CheckStatus is Check of a member with the given Leaving and agent status: what a reader
// that keeps copies of members' status checks.
func (c *EligibilityChecker) CheckStatus(leaving bool, a *AgentStatus) Eligibility {
	switch {
	case leaving:
		return Eligibility{Code: Left}
	case !a.Present:
		return Eligibility{Code: AgentNotOnline}
	}
	if a.LastHeartbeat.Before(c.staleBefore) {
		return Eligibility{Code: NoRecentHeartbeat, Since: c.now.Sub(a.LastHeartbeat)}
	}
	switch {
	case !a.Joined:
		return Eligibility{Code: AgentNotJoined}
	case !a.HealthKnown:
		return Eligibility{Code: HealthUnknown}
	}
	if !a.Healthy && a.HealthTransition.Before(c.unhealthySince) {
		return Eligibility{Code: UnhealthyTooLong, Since: c.now.Sub(a.HealthTransition)}
	}
	return Eligibility{}
}
