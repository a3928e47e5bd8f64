package agentk8s

import (
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fleetsim/fleetsim/model/placement"
	"github.com/fleetsim/fleetsim/model/resources"
)

// Work is one Work as the member agent runs it.
type Work struct {
	Name string
	// Manifests are the Work's manifests, overrides applied; Envelopes[i] names the
	// envelope Manifests[i] came in, or is nil (Envelopes may be nil altogether).
	Manifests []*unstructured.Unstructured
	Envelopes []*placement.NamespacedName
	// Owner is the owner reference of the Work's AppliedWork on the member.
	Owner metav1.OwnerReference
	// Strategy is the apply strategy (nil: every default); ReportBack the report-back
	// strategy (nil: Disabled).
	Strategy   *placement.ApplyStrategy
	ReportBack *placement.ReportBackStrategy
}

// MemberCluster is the member as RunWork sees it: the only way the loop reads, writes or
// learns anything. The simulator implements it over its in-memory objects and scripted
// workloads, the production agent over the member's API server.
type MemberCluster interface {
	// Admit is asked before the agent writes the object of manifest m: an error refuses
	// the write (the simulator's scripted rejection), as a real API server refuses a write
	// its admission rejects. Nothing is asked when nothing is to be written (the member
	// holds the object as the manifest says) or the manifest is only compared
	// (ReportDiff). A real API server refuses on the write itself (Write's error), so
	// production admits all.
	Admit(m *unstructured.Unstructured) error
	// Get reads the object manifest m names; nil and no error when there is none.
	Get(m *unstructured.Unstructured) (*unstructured.Unstructured, error)
	// Write performs d's write (d.Op is never OpNone) and returns the object as the member
	// holds it afterwards. An error is the API server's: a Conflict or AlreadyExists one
	// means the object changed since it was read.
	Write(d Decision) (*unstructured.Unstructured, error)
	// Backoff waits before the loop reads and decides again after the attempt-th write
	// (counting from 0) that conflicted; an error (the caller is stopping) gives up.
	Backoff(attempt int) error
	// DryRun asks the member to apply manifest m without persisting it (a server-side
	// apply dry run that takes every field): under ReportDiff with PartialComparison the
	// comparison stands on the member's acceptance of the manifest, and a refusal is a
	// failed diff report (DiffReported False), as KubeFleet's dry-run apply fails. The
	// simulator refuses what its scripted workloads refuse.
	DryRun(m *unstructured.Unstructured) error
	// Available judges an applied manifest m from live, its object on the member, given
	// how Classify says its availability is tracked: the tracking to report and whether it
	// is available. Production answers Available(live); the simulator's scripted workloads
	// stand in for the member's controllers.
	Available(m, live *unstructured.Unstructured, tracking Tracking) (Tracking, bool)
}

// WriteAttempts is how many times the loop writes one manifest that keeps conflicting
// before it reports the apply failed.
const WriteAttempts = 6

// WorkRun is what one run of a Work's loop found.
type WorkRun struct {
	work      string
	applyType placement.ApplyType
	// Results are the manifests' results, in manifest order.
	Results []ManifestResult
	// Live[i] is the object of Manifests[i] on the member after the run: nil when there is
	// none or it could not be read.
	Live []*unstructured.Unstructured
	// Settled says there is nothing to look at again before the next drift check: every
	// manifest applied (or was compared) and every trackable one is available.
	Settled bool
}

// Report is what the agent reports to the hub for the run: Applied and Available, or
// DiffReported under ReportDiff, with the failed, drifted and diffed manifests
// (SummariseStrategy).
func (r WorkRun) Report() placement.WorkReport {
	return SummariseStrategy(r.work, r.applyType, r.Results)
}

// RunWork is the member agent's loop over one Work's manifests at time now, the one both
// the simulator's member agent (sim.applyWork) and the production agent
// (agentk8s/member's syncWork) run. Namespaces and CRDs go first, so what lives in them
// applies in the same run; each manifest is decided against the object on the member
// (Decide) and written through mc, reading and deciding again when the write conflicts; a
// manifest's drifts and diffs keep the time since first seen (remembered in since, by
// Work, API group, kind, namespace and name); an applied object gets its availability and,
// under a Mirror report-back strategy, its status reported back. RunWork reads no clock
// and does no I/O but through mc.
func RunWork(w Work, mc MemberCluster, since *Sightings, now time.Time) WorkRun {
	reportDiff := w.Strategy.TypeOrDefault().ReportsOnly()
	run := WorkRun{work: w.Name, Results: make([]ManifestResult, len(w.Manifests)),
		Live: make([]*unstructured.Unstructured, len(w.Manifests)), Settled: true}
	if w.Strategy != nil {
		run.applyType = w.Strategy.Type
	}
	for _, i := range applyOrder(w.Manifests) {
		m := w.Manifests[i]
		res, live := applyManifest(w, m, mc, reportDiff)
		if i < len(w.Envelopes) {
			res.Identifier.Envelope = w.Envelopes[i]
		}
		key := sightingKey(w.Name, m)
		res.ObservedAt = now
		res.DriftSince = since.FirstSeen(key+"|drift", len(res.Drifts) > 0, now)
		res.DiffSince = since.FirstSeen(key+"|diff", len(res.Diffs) > 0, now)
		if res.ApplyError == "" && !res.ReportDiff && live != nil {
			res.BackReported = BackReport(w.ReportBack, live)
			res.Tracking, res.Available = mc.Available(m, live, res.Tracking)
			if res.Tracking == Trackable && !res.Available {
				run.Settled = false
			}
		}
		if res.ApplyError != "" || res.DiffError != "" {
			run.Settled = false
		}
		run.Results[i], run.Live[i] = res, live
	}
	return run
}

// applyManifest decides and writes one manifest, deciding again on a fresh read when the
// write conflicts. It returns the result and the object on the member afterwards (before
// the write when the write failed).
func applyManifest(w Work, m *unstructured.Unstructured, mc MemberCluster, reportDiff bool) (ManifestResult, *unstructured.Unstructured) {
	failed := func(msg string) ManifestResult {
		return ManifestResult{Identifier: resources.Identifier(m), Tracking: Classify(m), ApplyError: "Failed to apply manifest: " + msg,
			Reason: ReasonManifestApplyFailed}
	}
	for attempt := 0; ; attempt++ {
		live, err := mc.Get(m)
		if err != nil {
			res := failed(err.Error())
			if reportDiff {
				res.ReportDiff, res.ApplyError, res.Reason, res.DiffError = true, "", "", "Failed to read the object: "+err.Error()
			}
			return res, nil
		}
		if reportDiff && live != nil && partialComparison(w.Strategy) {
			// A missing object is a whole-object difference with nothing to dry-run.
			if err := mc.DryRun(m); err != nil {
				return ManifestResult{Identifier: resources.Identifier(m), Tracking: Classify(m), ReportDiff: true,
					DiffError: "Failed to dry-run apply the manifest: " + err.Error()}, live
			}
		}
		d := Decide(Input{Manifest: m, Live: live, Owner: w.Owner, Strategy: w.Strategy})
		if d.Op == OpNone {
			return d.Result, live
		}
		// A member refuses writes, not objects: an object it holds already as the manifest
		// says is not written again, so a refusal from now on does not touch it.
		if err := mc.Admit(m); err != nil {
			return failed(err.Error()), live
		}
		written, err := mc.Write(d)
		res := d.Result
		switch {
		case err == nil:
			g := written.GetGeneration()
			res.MemberGeneration = &g
			return res, written
		case apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err):
			if d.Op == OpServerSideApply {
				// Another field manager owns a field the manifest sets, and the strategy
				// does not force: reading again would change nothing.
				res.ApplyError, res.Reason = "Failed to apply manifest: "+err.Error(), ReasonConflictWithOtherApplier
				return res, live
			}
			if attempt+1 >= WriteAttempts {
				res.ApplyError, res.Reason = "Failed to apply manifest: the object kept changing: "+err.Error(), ReasonManifestApplyFailed
				return res, live
			}
			if berr := mc.Backoff(attempt); berr != nil {
				res.ApplyError, res.Reason = "Failed to apply manifest: the object kept changing: "+berr.Error(), ReasonManifestApplyFailed
				return res, live
			}
		default:
			res.ApplyError, res.Reason = "Failed to apply manifest: "+err.Error(), ReasonManifestApplyFailed
			return res, live
		}
	}
}

// applyOrder is the order the loop applies manifests in: namespaces and CRDs first (stable
// otherwise), so what lives in them can be applied in the same run.
func applyOrder(manifests []*unstructured.Unstructured) []int {
	order := make([]int, len(manifests))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(x, y int) int { return applyRank(manifests[x]) - applyRank(manifests[y]) })
	return order
}

func applyRank(m *unstructured.Unstructured) int {
	switch m.GroupVersionKind().GroupKind() {
	case schema.GroupKind{Kind: "Namespace"}, schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}:
		return 0
	}
	return 1
}

// Manages reports whether the agent manages o for the AppliedWork named by owner (o lists
// that AppliedWork among its owners), as Decide tells it.
func Manages(o *unstructured.Unstructured, owner metav1.OwnerReference) bool {
	managed, _, _ := owners(o, owner)
	return managed
}

// partialComparison reports whether a strategy compares only the fields the manifest sets
// (the default), which KubeFleet does on the result of a dry-run apply.
func partialComparison(s *placement.ApplyStrategy) bool {
	return s == nil || s.ComparisonOption == "" || s.ComparisonOption == PartialComparison
}
