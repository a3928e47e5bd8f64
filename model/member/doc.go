// Package member owns the hub's view of a fleet member: a Kubernetes cluster or a systemd
// machine, with its labels, taints, properties, resource usage, join state and the health
// inputs its agent reports (agent presence, join, last heartbeat, health condition).
//
// It also owns the one rule that turns those inputs into scheduling eligibility, so the
// simulator, the production hub and the scheduler agree on when a member is "lost".
// Everything here is pure: time is always passed in, never read.
package member
