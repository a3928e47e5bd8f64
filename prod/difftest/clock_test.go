package difftest

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/benbjohnson/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/fleetsim/fleetsim/apis/cluster/v1beta1"
	v1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
	"github.com/fleetsim/fleetsim/model/membership"
)

// fleetClock is the one mock clock of a test fleet: the hub decides on it and the agents
// stamp their heartbeats and reports with it. It remembers the deadlines of the timers set
// on it (the hub's timed wakes: unavailable periods, staged-run waits, heartbeat windows),
// so the test can advance time to each in order.
type fleetClock struct {
	*clock.Mock
	mu        sync.Mutex
	deadlines []time.Time
}

func newFleetClock(start time.Time) *fleetClock {
	m := clock.NewMock()
	m.Set(start)
	return &fleetClock{Mock: m}
}

func (c *fleetClock) note(d time.Duration) { c.noteAt(c.Now().Add(d)) }

// noteAt notes a deadline at t: something the test plays (a workload becoming ready) is
// due then.
func (c *fleetClock) noteAt(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.deadlines = append(c.deadlines, t)
}

// AfterFunc is the mock's, with the deadline noted.
func (c *fleetClock) AfterFunc(d time.Duration, f func()) *clock.Timer {
	c.note(d)
	return c.Mock.AfterFunc(d, f)
}

// Timer is the mock's, with the deadline noted.
func (c *fleetClock) Timer(d time.Duration) *clock.Timer {
	c.note(d)
	return c.Mock.Timer(d)
}

// After is the mock's, with the deadline noted.
func (c *fleetClock) After(d time.Duration) <-chan time.Time {
	c.note(d)
	return c.Mock.After(d)
}

// next is the earliest noted deadline after now and no later than limit (limit when none),
// forgetting those passed.
func (c *fleetClock) next(limit time.Time) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.Now()
	c.deadlines = slices.DeleteFunc(c.deadlines, func(t time.Time) bool { return !t.After(now) })
	out := limit
	for _, t := range c.deadlines {
		if t.Before(out) {
			out = t
		}
	}
	return out
}

// agentClock is what agents run on in the differential test: the fleet's mock time (their
// heartbeats, reports, heartbeat and drift periods are judged by it) with wall-clock
// timers, so that an agent polls the hub while the test holds the mock clock still and
// waits for the hub to settle. How soon an agent polls is latency only; what it reports
// and when its heartbeat is due follow the mock clock.
type agentClock struct {
	clock.Clock // the wall clock's timers
	mock        *fleetClock
}

func (c agentClock) Now() time.Time                  { return c.mock.Now() }
func (c agentClock) Since(t time.Time) time.Duration { return c.mock.Now().Sub(t) }
func (c agentClock) Until(t time.Time) time.Duration { return t.Sub(c.mock.Now()) }

// maxStep is the coarsest step of the mock clock between phases: half the hub's heartbeat
// window (member.DefaultEligibility, five minutes), so members that heartbeat stay healthy
// as they do in the simulator, where agents heartbeat every period; and the window's own
// wakes (a heartbeat's time plus five minutes) fall on the steps' times instead of adding
// steps of their own.
const maxStep = 150 * time.Second

// advanceTo moves the fleet's clock to t: to each timer's deadline in order, at most
// maxStep at a time, waiting after each step for every running agent to heartbeat at the
// new time and for the hub's state to stop changing.
func (f *fleet) advanceTo(t time.Time) {
	f.t.Helper()
	start, steps := time.Now(), 0
	defer func() {
		f.t.Logf("clock advanced to %s in %d steps, in %s", f.clk.Now().Sub(SimStart), steps, time.Since(start).Round(time.Millisecond))
	}()
	for ; f.clk.Now().Before(t); steps++ {
		f.catchUp()
		prev := f.clk.Now()
		next := f.clk.next(minTime(t, prev.Add(maxStep)))
		f.clk.Set(next)
		if next.Sub(prev) >= time.Second {
			f.kickStandIns() // they heartbeat at the new time now, not at their next period
			f.waitHeartbeats(next)
		}
		f.quiet()
	}
}

// catchUp waits, when the scenario has trackable workloads, until whatever plays the
// members' workloads (the stand-in agents, or the member controllers beside real agents)
// has played one round that began after the hub went quiet and so read every Work: a
// trackable workload's readiness deadline (WorkloadReadyDelay after a member first sees
// it) is then noted on the clock before the clock steps past it, whatever the machine's
// load. Then it waits for the hub to go quiet on what they reported.
//
// With stand-ins, what they play is the Works themselves: once a round has read the Works
// the hub holds now, nothing new can be first seen until a Work changes or a phase is
// played, and the catch-up is skipped (most clock steps of a long scenario). Real agents
// apply Works on their members later, so the members' controllers always catch up.
func (f *fleet) catchUp() {
	f.t.Helper()
	if !f.workloads.tracking() {
		return
	}
	var works map[string]string
	if !f.real {
		var err error
		if works, err = f.workGenerations(); err == nil && f.caughtUp != nil && maps.Equal(works, f.caughtUp) {
			return
		}
	}
	type player struct {
		name     string
		want     uint64
		finished func() uint64
	}
	var players []player
	for _, name := range sortedKeys(f.agents) {
		if f.down[name] {
			continue
		}
		if a := f.standIns[name]; a != nil {
			players = append(players, player{name, a.Started() + 1, a.Rounds})
			a.Kick()
		} else if r, ok := f.workloadRounds.Load(name); ok {
			pr := r.(*playerRounds)
			players = append(players, player{name, pr.started.Load() + 1, pr.finished.Load})
			pr.Kick()
		}
	}
	f.eventually("members play their workloads afresh", func() error {
		for _, p := range players {
			if got := p.finished(); got < p.want {
				return fmt.Errorf("member %s has finished %d rounds, want %d", p.name, got, p.want)
			}
		}
		return nil
	})
	f.caughtUp = works
	f.quiet()
}

// workGenerations names every Work on the hub with its uid and generation: what changes
// when a Work's manifests do.
func (f *fleet) workGenerations() (map[string]string, error) {
	var works v1beta1.WorkList
	if err := f.admin.List(context.Background(), &works); err != nil {
		return nil, err
	}
	out := make(map[string]string, len(works.Items))
	for _, w := range works.Items {
		out[w.Namespace+"/"+w.Name] = fmt.Sprintf("%s/%d", w.UID, w.Generation)
	}
	return out, nil
}

// kickStandIns starts a round of every running stand-in now.
func (f *fleet) kickStandIns() {
	for name, a := range f.standIns {
		if !f.down[name] {
			a.Kick()
		}
	}
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// waitHeartbeats waits until every member whose agent runs has heartbeated at or after at
// (to the second: the API stores times in seconds).
func (f *fleet) waitHeartbeats(at time.Time) {
	f.t.Helper()
	ctx := context.Background()
	for _, name := range sortedKeys(f.agents) {
		if f.down[name] {
			continue
		}
		f.eventually(fmt.Sprintf("member %s heartbeats at %s", name, at.Format(time.RFC3339)), func() error {
			imc := &clusterv1beta1.InternalMemberCluster{}
			err := f.admin.Get(ctx, client.ObjectKey{Namespace: membership.Namespace(name), Name: name}, imc)
			if err != nil || imc.Spec.State == membership.StateLeave || imc.DeletionTimestamp != nil {
				return nil // not made yet, leaving or gone: nothing heartbeats
			}
			for _, s := range imc.Status.AgentStatus {
				if s.Type == clusterv1beta1.MemberAgent && !s.LastReceivedHeartbeat.Time.Before(at.Truncate(time.Second)) {
					return nil
				}
			}
			return fmt.Errorf("last heartbeats %+v", imc.Status.AgentStatus)
		})
	}
}

// quiet waits until the hub's state has not changed for quietFor (at most quietMax): the
// hub has done what the clock's step woke.
func (f *fleet) quiet() {
	const quietFor, quietMax = 400 * time.Millisecond, 20 * time.Second
	ctx := context.Background()
	last, _ := ReadHub(ctx, f.admin)
	since := time.Now()
	for deadline := time.Now().Add(quietMax); time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
		cur, err := ReadHub(ctx, f.admin)
		if err != nil || !equalStates(last, cur) {
			last, since = cur, time.Now()
			continue
		}
		if time.Since(since) >= quietFor {
			return
		}
	}
}
