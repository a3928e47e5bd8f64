package hubbench

// The measurement: the phases of a run (join, placements, steady state, restart), each
// placement's steps to Available, and the Result's figures made of them. Separate from
// the environment (environment.go) and from the sources of the figures (metrics.go,
// usage.go).

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/fleetsim/fleetsim/apis/cluster/v1beta1"
	v1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/model/placement"
	"github.com/fleetsim/fleetsim/sim/timing"
)

// quietPeriod: a restarted hub is done when it made no decision for this long.
const quietPeriod = 5 * time.Second

// The steps of a placement from creation to Available, in order, as the bench's watches
// see them: they split the time to Available, so a slow run says which step is slow.
// stepNames are the steps of a placement, as the prediction names them.
var stepNames = timing.StepNames

// milestones are one placement's steps: the objects seen at each, and when each had them
// all.
type milestones struct {
	created time.Time
	seen    [4]map[string]bool
	done    [4]time.Duration
}

// step records that object name of placement reached step i.
func (b *bench) step(placement string, i int, name string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	m := b.steps[placement]
	if m == nil || m.seen[i][name] {
		return
	}
	m.seen[i][name] = true
	if len(m.seen[i]) == b.perPlacement() {
		m.done[i] = time.Since(m.created)
	}
}

func (b *bench) run(ctx context.Context) (*Result, error) {
	res := &Result{Source: "measured", Members: b.o.Members, Placements: b.o.Placements, Pick: b.o.Pick, Concurrent: max(b.o.Concurrent, 1)}
	start := time.Now()
	if err := b.startHub(); err != nil {
		return nil, err
	}
	if err := b.until(ctx, "every member joined and healthy", b.allHealthy); err != nil {
		return nil, err
	}
	res.JoinSeconds = time.Since(start).Seconds()
	res.FirstJoinSeconds = b.firstJoin.Sub(start).Seconds()
	b.log("%d members joined and healthy after %.1fs", b.o.Members, res.JoinSeconds)

	m0, err := b.scrape()
	if err != nil {
		return nil, err
	}
	u0 := b.usage()
	t0 := time.Now()
	times, err := b.place(ctx)
	if err != nil {
		return nil, err
	}
	res.PlacementPhaseSeconds = time.Since(t0).Seconds()
	m1, err := b.scrape()
	if err != nil {
		return nil, err
	}
	u1 := b.usage()
	res.Available = percentiles(times)
	b.mu.Lock()
	for i, n := range stepNames {
		var ds []time.Duration
		for _, m := range b.steps {
			if m.done[i] > 0 {
				ds = append(ds, m.done[i])
			}
		}
		res.Steps = append(res.Steps, Step{Name: n, Seconds: percentiles(ds)})
	}
	b.mu.Unlock()
	res.Decisions = m1.decisions - m0.decisions
	res.ServedInline = m1.servedInline - m0.servedInline
	res.APICalls = m1.requests - m0.requests
	res.Retries, res.WaitSeconds = m1.retries-m0.retries, round(m1.waited-m0.waited)
	if n := m1.decideCount - m0.decideCount; n > 0 {
		res.MeanDecisionSeconds = math.Round((m1.decideSum-m0.decideSum)/n*1e4) / 1e4
	}
	for k, n := range m1.durCount {
		if d := n - m0.durCount[k]; d > 0 {
			if res.MeanDecisionSecondsByController == nil {
				res.MeanDecisionSecondsByController = map[string]float64{}
			}
			res.MeanDecisionSecondsByController[k] = math.Round((m1.durSum[k]-m0.durSum[k])/d*1e4) / 1e4
			if res.MeanWaitSecondsByController == nil {
				res.MeanWaitSecondsByController = map[string]float64{}
			}
			res.MeanWaitSecondsByController[k] = math.Round((m1.waitSum[k]-m0.waitSum[k])/d*1e4) / 1e4
		}
	}
	if res.Decisions > 0 {
		res.APICallsPerDecision = res.APICalls / res.Decisions
	}
	for k, v := range m1.byController {
		if d := v - m0.byController[k]; d > 0 {
			if res.DecisionsByController == nil {
				res.DecisionsByController = map[string]float64{}
			}
			res.DecisionsByController[k] = d
		}
	}
	var writes float64
	for k, v := range m1.writes {
		if d := v - m0.writes[k]; d > 0 {
			if res.Writes == nil {
				res.Writes = map[string]float64{}
			}
			res.Writes[k] = d
			writes += d
		}
	}
	if n := b.bindingsPlaced(); n > 0 {
		res.WritesPerBinding = math.Round(writes/float64(n)*10) / 10
	}
	span := time.Since(t0)
	res.Hub = diff(u0["hub"], u1["hub"], span)
	if _, ok := u1["kube-apiserver"]; ok {
		a, e := diff(u0["kube-apiserver"], u1["kube-apiserver"], span), diff(u0["etcd"], u1["etcd"], span)
		res.APIServer, res.Etcd = &a, &e
	}
	b.log("%d placements available; p50 %.2fs p90 %.2fs", len(times), res.Available.P50, res.Available.P90)
	if b.o.Steady > 0 {
		s0 := b.usage()
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(b.o.Steady):
		}
		res.SteadyHubCPUPercent = diff(s0["hub"], b.usage()["hub"], b.o.Steady).CPUPercent
	}
	if b.o.Restart {
		b.log("SIGKILL of the hub; starting a new one")
		b.stopHub(true)
		rs := time.Now()
		if err := b.startHub(); err != nil {
			return nil, err
		}
		// Settled: every placement decided again (the policy-snapshot controller, which a
		// starting hub wakes for each, has taken them all, deciding or finding them served
		// inline), then no decision about placements, bindings or Works for quietPeriod.
		// The membership decisions of the members' heartbeats (17 a second at 1,000
		// members) never stop, and a new hub's first round of them is counted in the
		// decisions.
		last, lastChange := -1.0, time.Now()
		var firstDecision time.Time
		for {
			select {
			case <-ctx.Done():
				return nil, fmt.Errorf("restart: %w", ctx.Err())
			case <-time.After(200 * time.Millisecond):
			}
			m, err := b.scrape()
			if err != nil {
				continue // not listening yet
			}
			if m.placementReconciles > 0 && firstDecision.IsZero() {
				firstDecision = time.Now()
			}
			if m.placementReconciles != last {
				last, lastChange = m.placementReconciles, time.Now()
				res.RestartDecisions, res.RestartServedInline = m.decisions, m.servedInline
				continue
			}
			if last > 0 && m.snapshotReconciles >= float64(b.o.Placements) && time.Since(lastChange) >= quietPeriod {
				break
			}
		}
		res.RestartSeconds = lastChange.Sub(rs).Seconds()
		res.RestartFirstDecisionSeconds = firstDecision.Sub(rs).Seconds()
		if err := b.until(ctx, "every placement available after the restart", func(ctx context.Context) error {
			for i := range b.o.Placements {
				if err := b.available(ctx, placementName(i)); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return nil, err
		}
		b.log("restarted hub settled after %.1fs (%v decisions)", res.RestartSeconds, last)
	}
	return res, nil
}

func placementName(i int) string { return fmt.Sprintf("bench-%04d", i) }

// place creates the placements, Concurrent at a time, and times each to Available.
func (b *bench) place(ctx context.Context) ([]time.Duration, error) {
	conc := max(b.o.Concurrent, 1)
	times := make([]time.Duration, b.o.Placements)
	errs := make([]error, b.o.Placements)
	next := make(chan int)
	var wg sync.WaitGroup
	for range conc {
		wg.Go(func() {
			for i := range next {
				t, err := b.placeOne(ctx, i)
				times[i], errs[i] = t, err
			}
		})
	}
	for i := range b.o.Placements {
		next <- i
	}
	close(next)
	wg.Wait()
	return times, errors.Join(errs...)
}

func (b *bench) placeOne(ctx context.Context, i int) (time.Duration, error) {
	name := placementName(i)
	policy := &v1beta1.PlacementPolicy{PlacementType: placement.PickAll}
	if b.o.Pick > 0 && b.o.Pick < b.o.Members {
		n := int32(b.o.Pick)
		policy = &v1beta1.PlacementPolicy{PlacementType: placement.PickN, NumberOfClusters: &n,
			Affinity: &v1beta1.Affinity{ClusterAffinity: &v1beta1.ClusterAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1beta1.ClusterSelector{
				ClusterSelectorTerms: []v1beta1.ClusterSelectorTerm{{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"fleet-bench": "member"}}}},
			}}}}
	}
	start := time.Now()
	m := &milestones{created: start}
	for i := range m.seen {
		m.seen[i] = map[string]bool{}
	}
	b.mu.Lock()
	b.steps[name] = m
	b.mu.Unlock()
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: name, Name: "settings"}, Data: map[string]string{"n": name}},
		&v1beta1.ClusterResourcePlacement{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1beta1.ClusterResourcePlacementSpec{
			ResourceSelectors: []v1beta1.ClusterResourceSelector{{Version: "v1", Kind: "Namespace", Name: name}}, Policy: policy}},
	} {
		if err := b.admin.Create(ctx, o); err != nil {
			return 0, fmt.Errorf("create %s %s: %w", o.GetObjectKind().GroupVersionKind().Kind, o.GetName(), err)
		}
	}
	for {
		if err := b.available(ctx, name); err == nil {
			return time.Since(start), nil
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("placement %s: %w", name, b.available(ctx, name))
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// available says why the placement is not available yet on the members it should pick.
func (b *bench) available(ctx context.Context, name string) error {
	crp := &v1beta1.ClusterResourcePlacement{}
	if err := b.cache.Get(ctx, client.ObjectKey{Name: name}, crp); err != nil {
		return err
	}
	want := b.o.Members
	if b.o.Pick > 0 {
		want = b.o.Pick
	}
	c := meta.FindStatusCondition(crp.Status.Conditions, "ClusterResourcePlacementAvailable")
	if c == nil || c.Status != metav1.ConditionTrue || c.ObservedGeneration != crp.Generation || len(crp.Status.PlacementStatuses) != want {
		return fmt.Errorf("placement %s not available on %d members yet", name, want)
	}
	return nil
}

func (b *bench) allHealthy(ctx context.Context) error {
	var l clusterv1beta1.MemberClusterList
	if err := b.cache.List(ctx, &l); err != nil {
		return err
	}
	n := 0
	for _, mc := range l.Items {
		if meta.IsStatusConditionTrue(mc.Status.Conditions, "Joined") && meta.IsStatusConditionTrue(mc.Status.Conditions, "Healthy") {
			n++
		}
	}
	if n > 0 && b.firstJoin.IsZero() {
		b.firstJoin = time.Now()
	}
	if n < b.o.Members {
		return fmt.Errorf("%d of %d members joined and healthy", n, b.o.Members)
	}
	return nil
}

func (b *bench) until(ctx context.Context, what string, f func(context.Context) error) error {
	for {
		err := f(ctx)
		if err == nil {
			return nil
		}
		if b.hub != nil && b.hub.ProcessState != nil {
			return fmt.Errorf("%s: the hub exited", what)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %w (last: %v)", what, ctx.Err(), err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// bindingsPlaced is how many bindings the placement phase makes.
func (b *bench) bindingsPlaced() int { return b.perPlacement() * b.o.Placements }

// perPlacement is how many bindings a placement makes: pick members (every member for
// PickAll).
func (b *bench) perPlacement() int {
	if b.o.Pick > 0 && b.o.Pick < b.o.Members {
		return b.o.Pick
	}
	return b.o.Members
}

func round(f float64) float64 { return timing.Round2(f) }

func percentiles(ds []time.Duration) Percentiles { return timing.PercentilesOf(ds) }
