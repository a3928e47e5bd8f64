// Package membership owns the hub's decision for one MemberCluster: the join steps (reserved
// namespace fleet-member-<name> with its RBAC, the InternalMemberCluster), the leave steps
// (IMC to Leave, wait for the agent's acknowledgement and for the member's bindings to go,
// then delete what join created), and the ReadyToJoin, Joined and Healthy conditions derived
// from what the member agent last reported. Pure: the driver gathers the inputs, applies
// the plan and requeues after Plan.RequeueAfter.
package membership
