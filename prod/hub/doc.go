// Package hub runs the shared hub controllers of model/hub against a real Kubernetes API
// server through controller-runtime: the same decisions the simulator takes, on objects a
// KubeFleet user applies with kubectl.
//
//   - MembershipReconciler: join, heartbeat health and leave of MemberClusters, with each
//     member's reserved namespace and RBAC from prod/memberaccess.
//   - Hub: the policy-snapshot, scheduler, rollout, work-generator, eviction and
//     staged-update controllers, plus the Work status fan-in (what member agents report in
//     Works, copied to bindings). Each decision reads its scope from the informer cache
//     (load.go, cache.go: one placement's snapshots, bindings and Works by field index;
//     members converted once per resourceVersion), runs the shared controller on them, and
//     writes back the difference with the resourceVersions read (flush.go). Decisions run
//     in parallel under the rules of consistency.go. What a decision changes fires the
//     shared trigger table (model/triggers) into the other controllers' queues; watches
//     turn what users and agents change into the same Changes.
//   - OverrideSnapshotter: snapshots of ClusterResourceOverrides and ResourceOverrides.
//   - ResourceLister: the hub objects placements may select, from informers started on
//     first selection; a change wakes only the placements that may select the object.
//
// Setup wires them all into a manager; `fleet hub` (cmd/fleet) is the command that runs it.
package hub
