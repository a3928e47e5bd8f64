// Package override owns KubeFleet's override APIs and every decision about them: the
// ClusterResourceOverride and ResourceOverride kinds (field for field as
// placement.kubernetes-fleet.io/v1beta1, so manifests decode unchanged; the documentation shows
// them under v1alpha1, which has the same fields and is accepted too), their validation as the
// API server and webhook enforce it (per override, and fleet-wide limits and exclusivity),
// their immutable snapshots (ClusterResourceOverrideSnapshot, ResourceOverrideSnapshot), which
// override snapshots apply to a cluster, applying them to one manifest for one cluster, and the
// Overridden conditions (per cluster and placement-level) that report the outcome.
//
// The decision rules (spec sections OVR-*, SNAP-OVERRIDE, OVR-STATUS):
//
//   - A ClusterResourceOverride selects cluster-scoped resources by group, version, kind and
//     name; selecting a Namespace selects every resource in it. A ResourceOverride selects
//     resources in its own namespace.
//   - ClusterResourceOverride rules apply first, then ResourceOverride rules, so the
//     ResourceOverride wins on a field both touch. Rules apply in order, the patches of a rule
//     one after another (RFC 6902, github.com/evanphx/json-patch/v5).
//   - A rule applies to a cluster when its cluster selector matches the cluster's labels: a nil
//     selector matches no cluster, a selector with no terms matches every cluster; terms are
//     ORed and only their labelSelector counts.
//   - A matching Delete rule means the resource is not placed on that cluster.
//   - ${MEMBER-CLUSTER-NAME} and ${MEMBER-CLUSTER-LABEL-KEY-<key>} in patch values are replaced
//     by the cluster's name and label value.
//
// Everything is pure: no I/O, no clock, and results never depend on the order in which
// overrides are given (they are applied in snapshot-name order). Apply never modifies the
// manifest it is given.
package override
