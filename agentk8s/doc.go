// Package agentk8s owns the decision core of the member agent for Kubernetes clusters that
// the simulator and the production agent share: what to do with each manifest of a Work
// given the object on the member (Decide: create, three-way merge or server-side apply,
// take over or refuse a pre-existing object, report or overwrite drifts, report diffs; every
// outcome with its reason), how the availability of each applied kind is judged (AVAIL-*),
// and how per-manifest results become the Applied, Available and DiffReported conditions and
// the failed, drifted and diffed placements that flow back to the hub.
// It performs no I/O; the production agent gathers objects from the member's API server,
// the simulator keeps them in memory.
package agentk8s
