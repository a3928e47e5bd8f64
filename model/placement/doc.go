// Package placement owns the placement vocabulary shared by every decision: the scheduling
// policy of a ClusterResourcePlacement (field for field as KubeFleet's
// placement.kubernetes-fleet.io/v1beta1, so manifests decode into it unchanged), policy
// snapshots, bindings with their states and cluster decisions, toleration matching, and the
// validation rules the API enforces on a policy.
package placement
