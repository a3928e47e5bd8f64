package status_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/fleetsim/fleetsim/model/condition"
	"github.com/fleetsim/fleetsim/model/placement"
	"github.com/fleetsim/fleetsim/model/status"
)

// TestPlacement reproduces the status samples of the documentation's concept pages, how-tos and
// troubleshooting guides. Brackets name the section of the KubeFleet documentation a case comes from.
// Cluster messages use the newer, quoted Scheduled form (DC-17) and Appendix A's newer
// placement-level wording where the older samples differ.
func TestPlacement(t *testing.T) {
	const (
		snap0 = "crp-0-snapshot"
		snap1 = "crp-1-snapshot"
	)
	affinityMiss := "ClusterUnschedulable, cluster does not match with any of the required cluster affinity terms"
	notApplied := condition.False(condition.TypeApplied, condition.ReasonNotAllWorkApplied, "Work object crp-4-work is not applied")
	ownedByOthers := placement.FailedPlacement{
		ResourceIdentifier: namespace,
		Condition: condition.False(condition.TypeApplied, "ManifestsAlreadyOwnedByOthers",
			"Failed to apply manifest: failed to process the request due to a client error: resource exists and is not managed by the fleet controller and co-ownernship is disallowed"),
	}
	deployment := placement.ResourceIdentifier{Group: "apps", Version: "v1", Kind: "Deployment", Name: "my-deployment", Namespace: "test-ns"}
	notYetAvailable := placement.FailedPlacement{
		ResourceIdentifier: deployment,
		Condition:          condition.False(condition.TypeAvailable, "ManifestNotAvailableYet", "Manifest is trackable but not available yet"),
	}
	notAvailable := condition.False(condition.TypeAvailable, condition.ReasonNotAllWorkAvailable, "Work object crp1-work is not available")
	overrideFailed := condition.False(condition.TypeOverridden, "OverriddenFailed",
		`Failed to apply the override rules on the resources: add operation does not apply: doc is missing path: "/metadata/labels/new-label": missing value`)
	syncFailed := condition.False(condition.TypeWorkSynchronized, "SyncWorkFailed",
		`Failed to synchronize the work to the latest: works.placement.kubernetes-fleet.io "crp1-work" is forbidden: unable to create new content in namespace fleet-member-kind-cluster-1 because it is being terminated`)
	runStarted := condition.True(condition.TypeRolloutStarted, condition.ReasonRolloutStarted,
		"Detected the new changes on the resources and started the rollout process, resourceSnapshotIndex: 5, clusterStagedUpdateRun: example-run")
	pendingRollout := unknownCond(condition.TypeRolloutStarted, "RolloutStartedUnknown", "In the process of deciding whether to roll out the latest resources or not")
	pendingApply := unknownCond(condition.TypeApplied, "ApplyPending", "In the process of applying the resources on the member cluster")

	base := func(typ placement.PlacementType, wanted int, sched *condition.Condition, decisions ...placement.ClusterDecision) status.Input {
		return status.Input{
			Generation: 1, RolloutStrategy: placement.RollingUpdateStrategy, ApplyStrategy: placement.ClientSideApply,
			PlacementType: typ, Wanted: wanted,
			Scheduling:             status.Scheduling{Condition: sched, ObservedPlacementGeneration: 1, Decisions: decisions},
			LatestResourceSnapshot: snap0, ResourceIndex: 0,
			SelectedResources: []placement.ResourceIdentifier{namespace},
			Now:               t0,
		}
	}
	withBindings := func(in status.Input, bs ...*placement.Binding) status.Input {
		in.Bindings = bs
		return in
	}

	cases := []struct {
		name string
		doc  string
		in   status.Input
		want status.Status
	}{
		{
			name: "healthy PickN 2",
			doc:  "Resource Migration Across Clusters › ClusterResourcePlacement",
			in: withBindings(base(placement.PickN, 2, fulfilled(2), pick("aks-member-2"), pick("aks-member-1")),
				bound("crp", "aks-member-2", snap0, 1, healthy()...),
				bound("crp", "aks-member-1", snap0, 1, healthy()...)),
			want: status.Status{
				SelectedResources: []placement.ResourceIdentifier{namespace}, ObservedResourceIndex: "0",
				Conditions: timed(1, t0, cat(one(crpScheduled(fulfilled(2))), crpChainTrue(2))...),
				PlacementStatuses: []status.ClusterStatus{
					entry("aks-member-1", healthy()...),
					entry("aks-member-2", healthy()...),
				},
			},
		},
		{
			name: "scores from the binding's cluster decision",
			doc:  "ClusterResourcePlacement › Sample output; Staged Update › Stages and clusters status (DC-17)",
			in: withBindings(base(placement.PickN, 1, fulfilled(1), pick("member1")),
				with(bound("crp", "member1", snap0, 1, healthy()...), func(b *placement.Binding) {
					b.ClusterDecision.ClusterScore = &placement.ClusterScore{AffinityScore: 20, TopologySpreadScore: -1}
				})),
			want: status.Status{
				SelectedResources: []placement.ResourceIdentifier{namespace}, ObservedResourceIndex: "0",
				Conditions: timed(1, t0, cat(one(crpScheduled(fulfilled(1))), crpChainTrue(1))...),
				PlacementStatuses: []status.ClusterStatus{{
					ClusterName: "member1",
					Conditions: timed(1, t0, cat(one(condition.True(condition.TypeScheduled, "Scheduled",
						`Successfully scheduled resources for placement in "member1" (affinity score: 20, topology spread score: -1): picked by scheduling policy`)),
						healthy())...),
				}},
			},
		},
		{
			name: "TSG-SCHED-PICKN-SHORT: Scheduled False does not gate, the unfilled slot is explained",
			doc:  "CRP Schedule Failure TSG",
			in: withBindings(base(placement.PickN, 2, unfulfilled(), pick("kind-cluster-1"), reject("kind-cluster-2", affinityMiss)),
				bound("crp-2", "kind-cluster-1", snap0, 1, healthy()...)),
			want: status.Status{
				SelectedResources: []placement.ResourceIdentifier{namespace}, ObservedResourceIndex: "0",
				Conditions: timed(1, t0, cat(one(crpScheduled(unfulfilled())), crpChainTrue(1))...),
				PlacementStatuses: []status.ClusterStatus{
					entry("kind-cluster-1", healthy()...),
					unfilledEntry("kind-cluster-2", affinityMiss),
				},
			},
		},
		{
			name: "unfilled slots: as many as missing, at most one per unselected decision, in decision order",
			doc:  "SCHED-DECISIONS-STATUS",
			in: withBindings(base(placement.PickN, 3, unfulfilled(), pick("c"), reject("e", "cluster does not score high enough"),
				reject("a", affinityMiss), reject("b", affinityMiss)),
				bound("crp", "c", snap0, 1, healthy()...)),
			want: status.Status{
				SelectedResources: []placement.ResourceIdentifier{namespace}, ObservedResourceIndex: "0",
				Conditions: timed(1, t0, cat(one(crpScheduled(unfulfilled())), crpChainTrue(1))...),
				PlacementStatuses: []status.ClusterStatus{
					entry("c", healthy()...),
					unfilledEntry("e", "cluster does not score high enough"),
					unfilledEntry("a", affinityMiss),
				},
			},
		},
		{
			name: "PickFixed naming a missing cluster",
			doc:  "CRP Schedule Failure TSG › Instances where this condition may arise, CRP-POL-PICKFIXED",
			in: withBindings(base(placement.PickFixed, 2, unfulfilled(), pick("kind-cluster-1"), reject("kind-cluster-9", "specified cluster is not found")),
				bound("crp", "kind-cluster-1", snap0, 1, healthy()...)),
			want: status.Status{
				SelectedResources: []placement.ResourceIdentifier{namespace}, ObservedResourceIndex: "0",
				Conditions: timed(1, t0, cat(one(crpScheduled(unfulfilled())), crpChainTrue(1))...),
				PlacementStatuses: []status.ClusterStatus{
					entry("kind-cluster-1", healthy()...),
					unfilledEntry("kind-cluster-9", "specified cluster is not found"),
				},
			},
		},
		{
			name: "ROLL-STUCK-STRICT: bindings held on the old snapshot, later conditions omitted",
			doc:  "CRP Rollout Failure TSG",
			in: func() status.Input {
				in := withBindings(base(placement.PickN, 3, unfulfilled(), pick("kind-cluster-2"), pick("kind-cluster-1")),
					bound("crp-3", "kind-cluster-1", snap0, 2, blockedOnBinding, noOverride, synced, applied, available),
					bound("crp-3", "kind-cluster-2", snap0, 2, blockedOnBinding, noOverride, synced, applied, available))
				in.LatestResourceSnapshot, in.ResourceIndex = snap1, 1
				return in
			}(),
			want: status.Status{
				SelectedResources: []placement.ResourceIdentifier{namespace}, ObservedResourceIndex: "1",
				Conditions: timed(1, t0, crpScheduled(unfulfilled()),
					condition.False(status.TypePlacementRolloutStarted, "RolloutNotStartedYet", "The rollout is being blocked by the rollout strategy in 2 cluster(s)")),
				PlacementStatuses: []status.ClusterStatus{
					entry("kind-cluster-1", condition.False(condition.TypeRolloutStarted, "RolloutNotStartedYet", "The rollout is being blocked by the rollout strategy")),
					entry("kind-cluster-2", condition.False(condition.TypeRolloutStarted, "RolloutNotStartedYet", "The rollout is being blocked by the rollout strategy")),
				},
			},
		},
		{
			name: "RollingUpdate: a binding not yet moved to the latest snapshot is pending, not started",
			doc:  "STATUS-CRP-ORDER",
			in: func() status.Input {
				in := withBindings(base(placement.PickN, 2, fulfilled(2), pick("a"), pick("b")),
					bound("crp", "a", snap1, 2, healthy()...),
					bound("crp", "b", snap0, 1, healthy()...))
				in.LatestResourceSnapshot, in.ResourceIndex = snap1, 1
				return in
			}(),
			want: status.Status{
				SelectedResources: []placement.ResourceIdentifier{namespace}, ObservedResourceIndex: "1",
				Conditions: timed(1, t0, crpScheduled(fulfilled(2)),
					unknownCond(status.TypePlacementRolloutStarted, "RolloutStartedUnknown", "There are still 1 cluster(s) in the process of deciding whether to roll out the latest resources or not")),
				PlacementStatuses: []status.ClusterStatus{entry("a", healthy()...), entry("b", pendingRollout)},
			},
		},
		{
			name: "TSG-OVERRIDE-BADPATH: Overridden False, later conditions omitted",
			doc:  "CRP Override Failure TSG",
			in: withBindings(base(placement.PickN, 1, fulfilled(1), pick("kind-cluster-1")),
				with(bound("crp", "kind-cluster-1", snap0, 1, started, overrideFailed), func(b *placement.Binding) {
					b.ClusterResourceOverrideSnapshots = []string{"cro-1-0"}
				})),
			want: status.Status{
				SelectedResources: []placement.ResourceIdentifier{namespace}, ObservedResourceIndex: "0",
				Conditions: timed(1, t0, crpScheduled(fulfilled(1)), crpChainTrue(1)[0],
					condition.False(status.TypePlacementOverridden, "OverriddenFailed", "Failed to override resources in 1 cluster(s)")),
				PlacementStatuses: []status.ClusterStatus{
					func() status.ClusterStatus {
						e := entry("kind-cluster-1", started, overrideFailed)
						e.ApplicableClusterResourceOverrides = []string{"cro-1-0"}
						return e
					}(),
				},
			},
		},
		{
			name: "overrides: OverriddenSucceeded once any cluster has one",
			doc:  "Resource Migration With Overrides › Results, OVR-STATUS",
			in: withBindings(base(placement.PickN, 2, fulfilled(2), pick("aks-member-5"), pick("aks-member-1")),
				with(bound("crp", "aks-member-5", snap0, 1, started, overridden, synced, applied, available), func(b *placement.Binding) {
					b.ResourceOverrideSnapshots = []placement.NamespacedName{{Namespace: "test-app", Name: "ro-1-0"}}
				}),
				bound("crp", "aks-member-1", snap0, 1, healthy()...)),
			want: status.Status{
				SelectedResources: []placement.ResourceIdentifier{namespace}, ObservedResourceIndex: "0",
				Conditions: timed(1, t0, crpScheduled(fulfilled(2)), crpChainTrue(2)[0],
					crpTrue(status.TypePlacementOverridden, "OverriddenSucceeded", "The selected resources are successfully overridden in 2 cluster(s)"),
					crpChainTrue(2)[2], crpChainTrue(2)[3], crpChainTrue(2)[4]),
				PlacementStatuses: []status.ClusterStatus{
					entry("aks-member-1", healthy()...),
					func() status.ClusterStatus {
						e := entry("aks-member-5", started, overridden, synced, applied, available)
						e.ApplicableResourceOverrides = []placement.NamespacedName{{Namespace: "test-app", Name: "ro-1-0"}}
						return e
					}(),
				},
			},
		},
		{
			name: "TSG-WORKSYNC-TERMINATING-NS: WorkSynchronized False",
			doc:  "CRP Work-Synchronization Failure TSG",
			in: withBindings(base(placement.PickN, 1, fulfilled(1), pick("kind-cluster-1")),
				bound("crp1", "kind-cluster-1", snap0, 1, started, noOverride, syncFailed)),
			want: status.Status{
				SelectedResources: []placement.ResourceIdentifier{namespace}, ObservedResourceIndex: "0",
				Conditions: timed(1, t0, crpScheduled(fulfilled(1)), crpChainTrue(1)[0], crpChainTrue(1)[1],
					condition.False(status.TypePlacementWorkSynchronized, "WorkNotSynchronizedYet", "There are 1 cluster(s) which have not finished creating or updating work(s) yet")),
				PlacementStatuses: []status.ClusterStatus{entry("kind-cluster-1", started, noOverride, syncFailed)},
			},
		},
		{
			name: "TSG-APPLY-PREEXISTING: Applied False with failedPlacements, Available omitted",
			doc:  "CRP Work-Application Failure TSG",
			in: withBindings(base(placement.PickFixed, 2, fulfilled(2), pick("kind-cluster-2"), pick("kind-cluster-1")),
				bound("crp-4", "kind-cluster-2", snap0, 1, started, noOverride, synced, applied, notTrackable("crp-4-work")),
				with(bound("crp-4", "kind-cluster-1", snap0, 1, started, noOverride, synced, notApplied,
					unknownCond(condition.TypeAvailable, "WorkAppliedFailed", "")), func(b *placement.Binding) {
					b.FailedPlacements = []placement.FailedPlacement{ownedByOthers}
				})),
			want: status.Status{
				SelectedResources: []placement.ResourceIdentifier{namespace}, ObservedResourceIndex: "0",
				Conditions: timed(1, t0, crpScheduled(fulfilled(2)), crpChainTrue(2)[0], crpChainTrue(2)[1], crpChainTrue(2)[2],
					condition.False(status.TypePlacementApplied, "ApplyFailed", "Failed to apply resources to 1 cluster(s), please check the `failedPlacements` status")),
				PlacementStatuses: []status.ClusterStatus{
					func() status.ClusterStatus {
						e := entry("kind-cluster-1", started, noOverride, synced, notApplied)
						e.FailedPlacements = []placement.FailedPlacement{ownedByOthers}
						return e
					}(),
					entry("kind-cluster-2", started, noOverride, synced, applied, notTrackable("crp-4-work")),
				},
			},
		},
		{
			name: "TSG-AVAIL-BADIMAGE: Available False with failedPlacements",
			doc:  "CRP Availability Failure TSG",
			in: withBindings(base(placement.PickN, 1, fulfilled(1), pick("kind-cluster-1")),
				with(bound("crp1", "kind-cluster-1", snap0, 1, started, noOverride, synced, applied, notAvailable), func(b *placement.Binding) {
					b.FailedPlacements = []placement.FailedPlacement{notYetAvailable}
				})),
			want: status.Status{
				SelectedResources: []placement.ResourceIdentifier{namespace}, ObservedResourceIndex: "0",
				Conditions: timed(1, t0, cat(one(crpScheduled(fulfilled(1))), crpChainTrue(1)[:4],
					one(condition.False(status.TypePlacementAvailable, "ResourceNotAvailableYet", "The selected resources in 1 cluster(s) are still not available yet")))...),
				PlacementStatuses: []status.ClusterStatus{
					func() status.ClusterStatus {
						e := entry("kind-cluster-1", started, noOverride, synced, applied, notAvailable)
						e.FailedPlacements = []placement.FailedPlacement{notYetAvailable}
						return e
					}(),
				},
			},
		},
		{
			name: "WorkNotTrackable counts as available (concept sample, PickAll 3)",
			doc:  "ClusterResourcePlacement › Placement status",
			in: withBindings(base(placement.PickAll, -1, fulfilled(3), pick("kind-cluster-1"), pick("kind-cluster-2"), pick("kind-cluster-3")),
				bound("crp-1", "kind-cluster-1", snap0, 1, started, noOverride, synced, applied, notTrackable("crp-1-work")),
				bound("crp-1", "kind-cluster-2", snap0, 1, started, noOverride, synced, applied, notTrackable("crp-1-work")),
				bound("crp-1", "kind-cluster-3", snap0, 1, healthy()...)),
			want: status.Status{
				SelectedResources: []placement.ResourceIdentifier{namespace}, ObservedResourceIndex: "0",
				Conditions: timed(1, t0, cat(one(crpScheduled(fulfilled(3))), crpChainTrue(3))...),
				PlacementStatuses: []status.ClusterStatus{
					entry("kind-cluster-1", started, noOverride, synced, applied, notTrackable("crp-1-work")),
					entry("kind-cluster-2", started, noOverride, synced, applied, notTrackable("crp-1-work")),
					entry("kind-cluster-3", healthy()...),
				},
			},
		},
		{
			name: "STAGED-CRP-EXTERNAL: waiting for a staged update run",
			doc:  "ClusterStagedUpdateRun TSG › CRP status without Staged Update Run (current release's reason and messages)",
			in: func() status.Input {
				in := withBindings(base(placement.PickAll, -1, fulfilled(2), pick("member1"), pick("member2")),
					scheduledOnly("example-placement", "member1"), scheduledOnly("example-placement", "member2"))
				in.RolloutStrategy = placement.ExternalStrategy
				return in
			}(),
			want: status.Status{
				SelectedResources: []placement.ResourceIdentifier{},
				Conditions: timed(1, t0, crpScheduled(fulfilled(2)),
					unknownCond(status.TypePlacementRolloutStarted, "RolloutControlledByExternalController", "Rollout is controlled by an external controller and no resource snapshot name is observed across clusters, probably rollout has not started yet")),
				PlacementStatuses: []status.ClusterStatus{entry("member1", externalPending), entry("member2", externalPending)},
			},
		},
		{
			name: "External: one cluster updated by the run, the other still on an older index",
			doc:  "Staged Update › Stages and clusters status (current release: each cluster shows its own index)",
			in: func() status.Input {
				in := withBindings(base(placement.PickAll, -1, fulfilled(2), pick("member1"), pick("member2")),
					bound("example-placement", "member1", "example-placement-5-snapshot", 3, runStarted, noOverride, synced, applied, available),
					bound("example-placement", "member2", "example-placement-4-snapshot", 2, runStarted, noOverride, synced, applied, available))
				in.RolloutStrategy = placement.ExternalStrategy
				in.LatestResourceSnapshot, in.ResourceIndex = "example-placement-5-snapshot", 5
				in.ResourceSnapshots = refs("example-placement", 4, 5)
				return in
			}(),
			want: status.Status{
				SelectedResources: []placement.ResourceIdentifier{},
				Conditions: timed(1, t0, crpScheduled(fulfilled(2)),
					unknownCond(status.TypePlacementRolloutStarted, "RolloutControlledByExternalController", "Rollout is controlled by an external controller and different resource snapshot versions are observed across clusters")),
				PlacementStatuses: []status.ClusterStatus{
					entry("member1", runStarted, noOverride, synced, applied, available),
					entry("member2", runStarted, noOverride, synced, applied, available),
				},
			},
		},
		{
			name: "External: every cluster on one older index reports that index and its resources",
			doc:  "STAGED-CRP-EXTERNAL (current release)",
			in: func() status.Input {
				in := withBindings(base(placement.PickAll, -1, fulfilled(2), pick("member1"), pick("member2")),
					bound("example-placement", "member1", "example-placement-4-snapshot", 3, runStarted, noOverride, synced, applied, available),
					bound("example-placement", "member2", "example-placement-4-snapshot", 2, runStarted, noOverride, synced, applied, available))
				in.RolloutStrategy = placement.ExternalStrategy
				in.LatestResourceSnapshot, in.ResourceIndex = "example-placement-5-snapshot", 5
				in.ResourceSnapshots = refs("example-placement", 4, 5)
				return in
			}(),
			want: status.Status{
				SelectedResources: []placement.ResourceIdentifier{indexed(4)}, ObservedResourceIndex: "4",
				Conditions: timed(1, t0, append([]condition.Condition{crpScheduled(fulfilled(2))},
					condition.True(status.TypePlacementRolloutStarted, "RolloutStarted", "All 2 cluster(s) start rolling out the latest resource"),
					condition.True(status.TypePlacementOverridden, "NoOverrideSpecified", "No override rules are configured for the selected resources"),
					condition.True(status.TypePlacementWorkSynchronized, "WorkSynchronized", "Works(s) are succcesfully created or updated in 2 target cluster(s)' namespaces"),
					condition.True(status.TypePlacementApplied, "ApplySucceeded", "The selected resources are successfully applied to 2 cluster(s)"),
					condition.True(status.TypePlacementAvailable, "ResourceAvailable", "The selected resources in 2 cluster(s) are available now"))...),
				PlacementStatuses: []status.ClusterStatus{
					entry("member1", runStarted, noOverride, synced, applied, available),
					entry("member2", runStarted, noOverride, synced, applied, available),
				},
			},
		},
		{
			name: "External: one index everywhere, but a cluster has not started it",
			doc:  "STAGED-CRP-EXTERNAL (current release)",
			in: func() status.Input {
				stale := bound("example-placement", "member2", "example-placement-5-snapshot", 2)
				in := withBindings(base(placement.PickAll, -1, fulfilled(2), pick("member1"), pick("member2")),
					bound("example-placement", "member1", "example-placement-5-snapshot", 3, runStarted, noOverride, synced, applied, available), stale)
				in.RolloutStrategy = placement.ExternalStrategy
				in.LatestResourceSnapshot, in.ResourceIndex = "example-placement-5-snapshot", 5
				in.ResourceSnapshots = refs("example-placement", 5)
				return in
			}(),
			want: status.Status{
				SelectedResources: []placement.ResourceIdentifier{namespace}, ObservedResourceIndex: "5",
				Conditions: timed(1, t0, crpScheduled(fulfilled(2)),
					unknownCond(status.TypePlacementRolloutStarted, "RolloutControlledByExternalController", "Rollout is controlled by an external controller and cluster member2 is in RolloutStarted Unknown state")),
				PlacementStatuses: []status.ClusterStatus{
					entry("member1", runStarted, noOverride, synced, applied, available),
					entry("member2", externalPending),
				},
			},
		},
		{
			name: "ReportDiff: DiffReported replaces Applied and Available",
			doc:  "Using the ReportDiff Apply Mode › How the ReportDiff mode can help; CRP Diff Reporting Failure TSG",
			in: func() status.Input {
				in := withBindings(base(placement.PickAll, -1, fulfilled(2), pick("member-1"), pick("member-2")),
					// Applied and Available left over from an earlier apply type are not read.
					bound("work-3", "member-1", snap0, 1, started, noOverride, synced, diffDone, applied, available),
					bound("work-3", "member-2", snap0, 1, started, noOverride, synced, diffDone))
				in.ApplyStrategy = placement.ReportDiff
				return in
			}(),
			want: status.Status{
				SelectedResources: []placement.ResourceIdentifier{namespace}, ObservedResourceIndex: "0",
				Conditions: timed(1, t0, cat(one(crpScheduled(fulfilled(2))), crpChainTrue(2)[:3],
					one(crpTrue(status.TypePlacementDiffReported, "DiffReportingCompleted", "Diff reporting in 2 cluster(s) has been completed")))...),
				PlacementStatuses: []status.ClusterStatus{
					entry("member-1", started, noOverride, synced, diffDone),
					entry("member-2", started, noOverride, synced, diffDone),
				},
			},
		},
		{
			name: "TSG-DIFF-FAIL: DiffReported False",
			doc:  "CRP Diff Reporting Failure TSG",
			in: func() status.Input {
				failed := condition.False(condition.TypeDiffReported, "NotAllWorkHaveDiffReported", "Work object work-3-work has not reported diff yet")
				in := withBindings(base(placement.PickAll, -1, fulfilled(2), pick("member-1"), pick("member-2")),
					bound("work-3", "member-1", snap0, 1, started, noOverride, synced, diffDone),
					bound("work-3", "member-2", snap0, 1, started, noOverride, synced, failed))
				in.ApplyStrategy = placement.ReportDiff
				return in
			}(),
			want: status.Status{
				SelectedResources: []placement.ResourceIdentifier{namespace}, ObservedResourceIndex: "0",
				Conditions: timed(1, t0, cat(one(crpScheduled(fulfilled(2))), crpChainTrue(2)[:3],
					one(condition.False(status.TypePlacementDiffReported, "DiffReportingIncompleteOrFailed", "Diff reporting in 1 clusters is still in progress or has failed")))...),
				PlacementStatuses: []status.ClusterStatus{
					entry("member-1", started, noOverride, synced, diffDone),
					entry("member-2", started, noOverride, synced,
						condition.False(condition.TypeDiffReported, "NotAllWorkHaveDiffReported", "Work object work-3-work has not reported diff yet")),
				},
			},
		},
		{
			name: "a condition written for an older binding generation is Unknown",
			doc:  "STATUS-CRP-ORDER, Appendix A",
			in: withBindings(base(placement.PickN, 1, fulfilled(1), pick("member-1")),
				with(bound("crp", "member-1", snap0, 2, started, noOverride, synced), func(b *placement.Binding) {
					// The member agent has not reported on generation 2 yet.
					b.Conditions = append(b.Conditions,
						condition.Timed{Condition: applied, ObservedGeneration: 1, LastTransitionTime: t0},
						condition.Timed{Condition: available, ObservedGeneration: 1, LastTransitionTime: t0})
				})),
			want: status.Status{
				SelectedResources: []placement.ResourceIdentifier{namespace}, ObservedResourceIndex: "0",
				Conditions: timed(1, t0, cat(one(crpScheduled(fulfilled(1))), crpChainTrue(1)[:3],
					one(unknownCond(status.TypePlacementApplied, "ApplyPending", "There are still 1 cluster(s) in the process of applying the resources on the member cluster")))...),
				PlacementStatuses: []status.ClusterStatus{entry("member-1", started, noOverride, synced, pendingApply)},
			},
		},
		{
			name: "False outweighs Unknown at the placement level",
			doc:  "STATUS-CRP-REASONS",
			in: withBindings(base(placement.PickN, 3, fulfilled(3), pick("a"), pick("b"), pick("c")),
				bound("crp", "a", snap0, 1, started, noOverride, synced),
				bound("crp", "b", snap0, 1, started, noOverride, synced, notApplied),
				bound("crp", "c", snap0, 1, healthy()...)),
			want: status.Status{
				SelectedResources: []placement.ResourceIdentifier{namespace}, ObservedResourceIndex: "0",
				Conditions: timed(1, t0, cat(one(crpScheduled(fulfilled(3))), crpChainTrue(3)[:3],
					one(condition.False(status.TypePlacementApplied, "ApplyFailed", "Failed to apply resources to 1 cluster(s), please check the `failedPlacements` status")))...),
				PlacementStatuses: []status.ClusterStatus{
					entry("a", started, noOverride, synced, pendingApply),
					entry("b", started, noOverride, synced, notApplied),
					entry("c", healthy()...),
				},
			},
		},
		{
			name: "picked clusters without a live binding yet",
			doc:  "SCHED-BIND",
			in: withBindings(base(placement.PickN, 3, fulfilled(3), pick("a"), pick("b"), pick("c")),
				bound("crp", "a", snap0, 1, healthy()...),
				with(bound("crp", "b", snap0, 1, healthy()...), func(b *placement.Binding) { b.Deleting = true }),
				with(bound("crp", "c", snap0, 1, healthy()...), func(b *placement.Binding) { b.State = placement.Unscheduled })),
			want: status.Status{
				SelectedResources: []placement.ResourceIdentifier{namespace}, ObservedResourceIndex: "0",
				Conditions: timed(1, t0, crpScheduled(fulfilled(3)),
					unknownCond(status.TypePlacementRolloutStarted, "RolloutStartedUnknown", "There are still 2 cluster(s) in the process of deciding whether to roll out the latest resources or not")),
				PlacementStatuses: []status.ClusterStatus{entry("a", healthy()...), entry("b", pendingRollout), entry("c", pendingRollout)},
			},
		},
		{
			name: "TSG-SCHED-PICKALL / TAINT-1: no cluster selected, only Scheduled is reported",
			doc:  "Using Taints and Tolerations › Example MemberCluster with taint; CRP Schedule Failure TSG › Instances where this condition may arise",
			in: base(placement.PickAll, -1, func() *condition.Condition {
				c := condition.True(condition.TypeScheduled, condition.ReasonSchedulingPolicyFulfilled, condition.MessageFulfilled)
				return &c
			}(), reject("kind-cluster-1", "ClusterUnschedulable, cluster has untolerated taint {test-key test-value NoSchedule}")),
			want: status.Status{
				SelectedResources: []placement.ResourceIdentifier{namespace}, ObservedResourceIndex: "0",
				Conditions: timed(1, t0, condition.True(status.TypePlacementScheduled, condition.ReasonSchedulingPolicyFulfilled, condition.MessageFulfilled)),
			},
		},
		{
			name: "EVICT-1: PickN 1 after its only placement was evicted",
			doc:  "Evicting Resources and Setting up Disruption Budgets",
			in: func() status.Input {
				in := base(placement.PickN, 1, unfulfilled(), reject("kind-cluster-1", "ClusterUnschedulable, cluster has untolerated taint {test-key test-value NoSchedule}"))
				in.Generation, in.Scheduling.ObservedPlacementGeneration = 2, 2
				return in
			}(),
			want: status.Status{
				SelectedResources: []placement.ResourceIdentifier{namespace}, ObservedResourceIndex: "0",
				Conditions: timed(2, t0, crpScheduled(unfulfilled())),
				PlacementStatuses: []status.ClusterStatus{{Conditions: timed(2, t0, condition.False(condition.TypeScheduled, "ScheduleFailed",
					"kind-cluster-1 is not selected: ClusterUnschedulable, cluster has untolerated taint {test-key test-value NoSchedule}"))}},
			},
		},
		{
			name: "scheduling not done yet",
			doc:  "STATUS-SNAPSHOT-SCHEDULED",
			in: withBindings(base(placement.PickN, 1, nil, pick("a")),
				bound("crp", "a", snap0, 1, healthy()...)),
			want: status.Status{
				SelectedResources: []placement.ResourceIdentifier{namespace}, ObservedResourceIndex: "0",
				Conditions: timed(1, t0, unknownCond(status.TypePlacementScheduled, "SchedulePending", "Scheduling has not completed")),
			},
		},
		{
			name: "scheduling decided for an older placement generation (numberOfClusters changed)",
			doc:  "CRP-POL-SCALE",
			in: func() status.Input {
				in := withBindings(base(placement.PickN, 2, fulfilled(1), pick("a")), bound("crp", "a", snap0, 1, healthy()...))
				in.Generation = 2
				in.ResourceIndex = -1
				in.SelectedResources = nil
				return in
			}(),
			want: status.Status{
				Conditions: timed(2, t0, unknownCond(status.TypePlacementScheduled, "SchedulePending", "Scheduling has not completed")),
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := status.Placement(tc.in)
			// Per-cluster observedResourceIndex has its own test (TestObservedResourceIndex).
			if diff := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(status.ClusterStatus{}, "ObservedResourceIndex")); diff != "" {
				t.Errorf("Placement(%s) = %+v, want %+v\ndiff (-want +got) [%s]:\n%s", tc.name, got, tc.want, tc.doc, diff)
			}
			// The result never depends on the order of the bindings or decisions given.
			rev := tc.in
			rev.Bindings = slices.Clone(tc.in.Bindings)
			slices.Reverse(rev.Bindings)
			if got2 := status.Placement(rev); !cmp.Equal(got, got2) {
				t.Errorf("Placement(%s) with bindings reversed = %+v, want %+v", tc.name, got2, got)
			}
		})
	}
}

// TestTransitionTimes: a condition whose status does not change keeps its
// lastTransitionTime; one that changes, or reappears after being gated away, takes Now.
func TestTransitionTimes(t *testing.T) {
	in := status.Input{
		Generation: 1, PlacementType: placement.PickN, Wanted: 3,
		Scheduling: status.Scheduling{Condition: unfulfilled(), ObservedPlacementGeneration: 1,
			Decisions: []placement.ClusterDecision{pick("a"), pick("b"), reject("z", "cluster does not score high enough")}},
		Bindings:               []*placement.Binding{bound("crp", "a", "s0", 1, healthy()...), bound("crp", "b", "s0", 1, healthy()...)},
		LatestResourceSnapshot: "s0",
		Now:                    t0,
	}
	first := status.Placement(in)

	// Nothing changed but the time and the generation: every time is kept.
	again := in
	again.Previous, again.Now = first, t1
	again.Generation, again.Scheduling.ObservedPlacementGeneration = 2, 2
	got := status.Placement(again)
	want := restamp(first, 2)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Placement(unchanged) = %+v, want %+v\ndiff (-want +got):\n%s", got, want, diff)
	}

	// b's workload becomes unavailable: b's Available and the placement's Available move.
	changed := again
	changed.Previous = got
	changed.Bindings = []*placement.Binding{
		bound("crp", "a", "s0", 1, healthy()...),
		bound("crp", "b", "s0", 1, started, noOverride, synced, applied,
			condition.False(condition.TypeAvailable, condition.ReasonNotAllWorkAvailable, "Work object crp-work is not available")),
	}
	got2 := status.Placement(changed)
	availCRP, _ := condition.Find(got2.Conditions, status.TypePlacementAvailable)
	rolloutCRP, _ := condition.Find(got2.Conditions, status.TypePlacementRolloutStarted)
	availB, _ := condition.Find(got2.PlacementStatuses[1].Conditions, condition.TypeAvailable)
	availA, _ := condition.Find(got2.PlacementStatuses[0].Conditions, condition.TypeAvailable)
	unfilled := got2.PlacementStatuses[2].Conditions[0]
	if availCRP.LastTransitionTime != t1 || availB.LastTransitionTime != t1 {
		t.Errorf("Placement(b unavailable): Available moved at %v (placement) and %v (b), want %v", availCRP.LastTransitionTime, availB.LastTransitionTime, t1)
	}
	if rolloutCRP.LastTransitionTime != t0 || availA.LastTransitionTime != t0 || unfilled.LastTransitionTime != t0 {
		t.Errorf("Placement(b unavailable): unchanged conditions moved: %v, %v, %v, want %v", rolloutCRP.LastTransitionTime, availA.LastTransitionTime, unfilled.LastTransitionTime, t0)
	}

	// b's apply fails (Available gated away), then recovers: Available reappears at Now.
	t2, t3 := t1.Add(time.Minute), t1.Add(2*time.Minute)
	failing := changed
	failing.Previous, failing.Now = got2, t2
	failing.Bindings = []*placement.Binding{
		bound("crp", "a", "s0", 1, healthy()...),
		bound("crp", "b", "s0", 1, started, noOverride, synced, condition.False(condition.TypeApplied, condition.ReasonNotAllWorkApplied, "Work object crp-work is not applied")),
	}
	got3 := status.Placement(failing)
	if _, ok := condition.Find(got3.Conditions, status.TypePlacementAvailable); ok {
		t.Errorf("Placement(b failing) kept Available after Applied False: %+v", got3.Conditions)
	}
	recovered := failing
	recovered.Previous, recovered.Now = got3, t3
	recovered.Bindings = in.Bindings
	got4 := status.Placement(recovered)
	if c, _ := condition.Find(got4.Conditions, status.TypePlacementAvailable); c.LastTransitionTime != t3 {
		t.Errorf("Placement(b recovered): Available at %v, want %v", c.LastTransitionTime, t3)
	}
	if c, _ := condition.Find(got4.Conditions, status.TypePlacementScheduled); c.LastTransitionTime != t0 {
		t.Errorf("Placement(b recovered): Scheduled at %v, want %v", c.LastTransitionTime, t0)
	}
}

// restamp returns s with every condition naming generation gen.
func restamp(s status.Status, gen int64) status.Status {
	fix := func(cs []condition.Timed) []condition.Timed {
		out := slices.Clone(cs)
		for i := range out {
			out[i].ObservedGeneration = gen
		}
		return out
	}
	out := s
	out.Conditions = fix(s.Conditions)
	out.PlacementStatuses = slices.Clone(s.PlacementStatuses)
	for i := range out.PlacementStatuses {
		out.PlacementStatuses[i].Conditions = fix(s.PlacementStatuses[i].Conditions)
	}
	return out
}

func TestFailedPlacementsCapped(t *testing.T) {
	b := bound("crp", "a", "s0", 1, started, noOverride, synced, condition.False(condition.TypeApplied, condition.ReasonNotAllWorkApplied, "Work object crp-work is not applied"))
	for i := range 150 {
		b.FailedPlacements = append(b.FailedPlacements, placement.FailedPlacement{
			ResourceIdentifier: placement.ResourceIdentifier{Version: "v1", Kind: "ConfigMap", Namespace: "ns", Name: fmt.Sprintf("cm-%03d", i)},
			Condition:          condition.False(condition.TypeApplied, "AppliedManifestFailedReason", "boom"),
		})
	}
	in := status.Input{
		Generation: 1, PlacementType: placement.PickN, Wanted: 1,
		Scheduling: status.Scheduling{Condition: fulfilled(1), ObservedPlacementGeneration: 1, Decisions: []placement.ClusterDecision{pick("a")}},
		Bindings:   []*placement.Binding{b}, LatestResourceSnapshot: "s0", Now: t0,
	}
	got := status.Placement(in).PlacementStatuses[0].FailedPlacements
	if len(got) != placement.MaxFailedPlacements || got[99].Name != "cm-099" {
		t.Errorf("Placement(150 failed manifests) reported %d failedPlacements, want the first %d", len(got), placement.MaxFailedPlacements)
	}
	if len(b.FailedPlacements) != 150 {
		t.Errorf("Placement modified its input binding")
	}
}

func TestKubectlColumns(t *testing.T) {
	healthyStatus := status.Status{Conditions: timed(3, t0, cat(one(crpScheduled(fulfilled(2))), crpChainTrue(2))...)}
	cases := []struct {
		name string
		s    status.Status
		gen  int64
		want [4]string
	}{
		{name: "healthy", s: healthyStatus, gen: 3, want: [4]string{"True", "3", "True", "3"}},
		{name: "after evicting the only placement [Evicting Resources and Setting up Disruption Budgets]", s: status.Status{Conditions: timed(2, t0, crpScheduled(fulfilled(1)))}, gen: 2,
			want: [4]string{"True", "2", "", ""}},
		{name: "availability failure", s: status.Status{Conditions: timed(1, t0, cat(one(crpScheduled(fulfilled(1))), crpChainTrue(1)[:4],
			one(condition.False(status.TypePlacementAvailable, "ResourceNotAvailableYet", "The selected resources in 1 cluster(s) are still not available yet")))...)}, gen: 1,
			want: [4]string{"True", "1", "False", "1"}},
		{name: "external waiting", s: status.Status{Conditions: timed(1, t0, crpScheduled(fulfilled(2)),
			unknownCond(status.TypePlacementRolloutStarted, "RolloutStartedUnknown", "…"))}, gen: 1, want: [4]string{"True", "1", "", ""}},
		{name: "stale status shows its own generations", s: healthyStatus, gen: 4, want: [4]string{"True", "3", "True", "3"}},
		{name: "no status yet", gen: 1},
	}
	for _, tc := range cases {
		var got [4]string
		got[0], got[1], got[2], got[3] = status.KubectlColumns(tc.s, tc.gen)
		if got != tc.want {
			t.Errorf("KubectlColumns(%s) = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestConditionTypes(t *testing.T) {
	cases := []struct {
		apply placement.ApplyType
		want  []string
	}{
		{"", []string{"RolloutStarted", "Overridden", "WorkSynchronized", "Applied", "Available"}},
		{placement.ClientSideApply, []string{"RolloutStarted", "Overridden", "WorkSynchronized", "Applied", "Available"}},
		{placement.ServerSideApply, []string{"RolloutStarted", "Overridden", "WorkSynchronized", "Applied", "Available"}},
		{placement.ReportDiff, []string{"RolloutStarted", "Overridden", "WorkSynchronized", "DiffReported"}},
	}
	for _, tc := range cases {
		if diff := cmp.Diff(tc.want, status.ConditionTypes(tc.apply)); diff != "" {
			t.Errorf("ConditionTypes(%q) (-want +got):\n%s", tc.apply, diff)
		}
	}
	for _, typ := range []string{"Scheduled", "RolloutStarted", "Overridden", "WorkSynchronized", "Applied", "Available", "DiffReported"} {
		if got := status.PlacementConditionType(typ); got != "ClusterResourcePlacement"+typ {
			t.Errorf("PlacementConditionType(%q) = %q", typ, got)
		}
	}
	if status.PlacementConditionType(condition.TypeAvailable) != status.TypePlacementAvailable {
		t.Errorf("TypePlacementAvailable = %q", status.TypePlacementAvailable)
	}
}

// TestDriftsAndDiffsReported: a cluster's drifted and diffed placements are listed once its
// agent reported on the latest resources, whatever the verdict (Always with FullComparison
// keeps Applied True; ReportDiff has no Applied at all), and not for a cluster still on older
// resources (APPLY-WHENTOAPPLY, APPLY-REPORTDIFF).
func TestDriftsAndDiffsReported(t *testing.T) {
	cm := placement.ResourceIdentifier{Version: "v1", Kind: "ConfigMap", Namespace: "app", Name: "cm"}
	drifted := []placement.DriftedPlacement{{ResourceIdentifier: cm, ObservationTime: t1, FirstDriftedObservedTime: t0,
		TargetClusterObservedGeneration: 2, ObservedDrifts: []placement.PatchDetail{{Path: "/data/extra", ValueInMember: "x"}}}}
	gen := int64(2)
	diffed := []placement.DiffedPlacement{{ResourceIdentifier: cm, ObservationTime: t1, FirstDiffedObservedTime: t0,
		TargetClusterObservedGeneration: &gen, ObservedDiffs: []placement.PatchDetail{{Path: "/data/k", ValueInHub: "a", ValueInMember: "b"}}}}
	cases := []struct {
		name        string
		apply       placement.ApplyType
		b           *placement.Binding
		wantDrifted []placement.DriftedPlacement
		wantDiffed  []placement.DiffedPlacement
	}{
		{"drift with every condition True", "", with(bound("crp", "a", "s0", 1, healthy()...), func(b *placement.Binding) { b.DriftedPlacements = drifted }), drifted, nil},
		{"diff under ReportDiff", placement.ReportDiff, with(bound("crp", "a", "s0", 1, started, noOverride, synced, diffDone), func(b *placement.Binding) { b.DiffedPlacements = diffed }), nil, diffed},
		{"not for a cluster on older resources", "", with(bound("crp", "a", "s-old", 1, healthy()...), func(b *placement.Binding) { b.DriftedPlacements = drifted }), nil, nil},
	}
	for _, tc := range cases {
		in := status.Input{
			Generation: 1, PlacementType: placement.PickN, Wanted: 1, ApplyStrategy: tc.apply,
			Scheduling: status.Scheduling{Condition: fulfilled(1), ObservedPlacementGeneration: 1, Decisions: []placement.ClusterDecision{pick("a")}},
			Bindings:   []*placement.Binding{tc.b}, LatestResourceSnapshot: "s0", Now: t1,
		}
		got := status.Placement(in).PlacementStatuses[0]
		if diff := cmp.Diff(tc.wantDrifted, got.DriftedPlacements); diff != "" {
			t.Errorf("%s: drifted placements (-want +got):\n%s", tc.name, diff)
		}
		if diff := cmp.Diff(tc.wantDiffed, got.DiffedPlacements); diff != "" {
			t.Errorf("%s: diffed placements (-want +got):\n%s", tc.name, diff)
		}
	}
}
