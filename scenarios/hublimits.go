package scenarios

import "time"

// The bounds of a scenario's hub: section (and of a plan's hub model, which renders it). Each
// bounds the simulator's work or keeps the figures the hub model derives from them in range:
// the wait for tokens is at most HubMaxBurst / HubMinQPS = 10^8 s and a decision's calls take
// at most HubMaxCallsPerDecision × HubMaxDecisionTime = 1,000 minutes, so no time the hub
// model computes comes near time.Duration's 292 years.
const (
	// HubMaxWorkers: the simulator keeps a slot per worker and scans them for every
	// decision; `fleet hub` runs 8 by default.
	HubMaxWorkers = 10_000
	// HubMinQPS and HubMaxQPS: from one request every 100 s to a million a second, far
	// beyond any API server.
	HubMinQPS = 0.01
	HubMaxQPS = 1_000_000
	// HubMaxBurst: the token bucket's size; `fleet hub` allows 1,000 by default.
	HubMaxBurst = 1_000_000
	// HubMaxCallsPerDecision: API requests one decision makes (10 by default).
	HubMaxCallsPerDecision = 1_000
	// HubMaxDecisionTime: the API server's latency per request (5ms by default).
	HubMaxDecisionTime = time.Minute
)
