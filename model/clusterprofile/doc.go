// Package clusterprofile owns the hub's decision for one member's ClusterProfile (the
// SIG-Multicluster cluster inventory kind, multicluster.x-k8s.io): whether the member has
// one, and what it says. KubeFleet's hub publishes one profile per MemberCluster in the
// fleet-system namespace, owned by the cluster manager "KubeFleet", from the moment the
// MemberCluster exists until it starts leaving; its ControlPlaneHealthy condition follows
// the member agent's report and heartbeat, and status.version.kubernetes the reported
// k8s.io/k8s-version property. Pure: the simulator's store and the production hub's
// controller (prod/hub) both write what Decide returns.
package clusterprofile
