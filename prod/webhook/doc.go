// Package webhook is `fleet hub`'s validating admission webhook (--enable-webhook): the
// admission rules KubeFleet enforces with webhooks, refused when an object is written rather
// than accepted and skipped later ([Frequently Asked Questions › What are fleet-owned
// resources], OVR-PRECEDENCE-AND-LIMITS, ARCH-RESERVED-NS):
//
//   - overrides: a resource selected by a second ClusterResourceOverride (or a second
//     ResourceOverride), and a 101st override of either kind (model/override.ValidateSet, the
//     rule the simulator applies to its overrides);
//   - disruption budgets: a malformed ClusterResourcePlacementDisruptionBudget
//     (model/eviction.ValidateBudget);
//   - internal objects (bindings, snapshots, Works, InternalMemberClusters): written only
//     by the hub, by a member agent in its own reserved namespace (the MemberCluster's
//     spec.identity), by the cluster's own controllers, or by an administrator
//     (system:masters).
//
// The hub keeps its own checks as a second line of defence. The server is
// controller-runtime's (certificates reloaded by its certwatcher); the
// ValidatingWebhookConfiguration is config/webhook.
package webhook
