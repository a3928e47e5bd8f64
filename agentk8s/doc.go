// Package agentk8s owns the decision core of the member agent for Kubernetes clusters that
// the simulator and the production agent share: what to do with each manifest of a Work
// given the object on the member (Decide: create, three-way merge or server-side apply,
// take over or refuse a pre-existing object, report or overwrite drifts, report diffs; every
// outcome with its reason), how the availability of each applied kind is judged (AVAIL-*),
// and how per-manifest results become the Applied, Available and DiffReported conditions and
// the failed, drifted and diffed placements that flow back to the hub. RunWork is the loop
// over one Work's manifests that ties these together, for both callers.
// It performs no I/O of its own: RunWork reads and writes through a MemberCluster the
// caller implements (the production agent over the member's API server, the simulator over
// objects it keeps in memory), and it reads no clock.
package agentk8s
