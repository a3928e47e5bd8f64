package units_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetsim/fleetsim/model/units"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func TestAcquire(t *testing.T) {
	const ttl = 10 * time.Second
	held := &units.Lease{Holder: "m1", Token: 4, Expires: t0.Add(5 * time.Second)}
	tests := []struct {
		name      string
		l         *units.Lease
		candidate string
		now       time.Time
		want      units.Lease
		ok        bool
	}{
		{"no lease yet", nil, "m1", t0, units.Lease{Holder: "m1", Token: 1, Expires: t0.Add(ttl)}, true},
		{"held by another", held, "m2", t0, *held, false},
		{"held by the candidate: unchanged", held, "m1", t0, *held, true},
		{"expired exactly at Expires", held, "m2", t0.Add(5 * time.Second), units.Lease{Holder: "m2", Token: 5, Expires: t0.Add(15 * time.Second)}, true},
		{"expired: the old holder gets a new token too", held, "m1", t0.Add(time.Minute), units.Lease{Holder: "m1", Token: 5, Expires: t0.Add(time.Minute + ttl)}, true},
		{"released", &units.Lease{Token: 4}, "m2", t0, units.Lease{Holder: "m2", Token: 5, Expires: t0.Add(ttl)}, true},
		{"empty candidate", nil, "", t0, units.Lease{}, false},
	}
	for _, tc := range tests {
		got, ok := units.Acquire(tc.l, tc.candidate, tc.now, ttl)
		if diff := cmp.Diff(tc.want, got); diff != "" || ok != tc.ok {
			t.Errorf("%s: Acquire(%v, %s) = %v, %v, want %v, %v", tc.name, tc.l, tc.candidate, got, ok, tc.want, tc.ok)
		}
	}
	if got, _ := units.Acquire(nil, "m1", t0, 0); !got.Expires.Equal(t0.Add(units.DefaultLeaseTTL)) {
		t.Errorf("Acquire(ttl 0).Expires = %v, want now + DefaultLeaseTTL", got.Expires)
	}
}

func TestRenewRelease(t *testing.T) {
	const ttl = 10 * time.Second
	l, _ := units.Acquire(nil, "m1", t0, ttl)
	r, ok := units.Renew(&l, "m1", t0.Add(8*time.Second), ttl)
	if want := (units.Lease{Holder: "m1", Token: 1, Expires: t0.Add(18 * time.Second)}); !ok || r != want {
		t.Errorf("Renew(holder, in time) = %v, %v, want %v, true", r, ok, want)
	}
	if got, ok := units.Renew(&l, "m2", t0, ttl); ok || got != l {
		t.Errorf("Renew(not the holder) = %v, %v, want unchanged, false", got, ok)
	}
	if got, ok := units.Renew(&l, "m1", t0.Add(ttl), ttl); ok || got != l {
		t.Errorf("Renew(expired) = %v, %v, want unchanged, false", got, ok)
	}
	if _, ok := units.Renew(nil, "m1", t0, ttl); ok {
		t.Errorf("Renew(nil) succeeded")
	}
	rel, ok := units.Release(&l, "m1", t0)
	if !ok || rel != (units.Lease{Token: 1}) {
		t.Errorf("Release = %v, %v, want token kept, no holder", rel, ok)
	}
	if _, ok := units.Release(&l, "m2", t0); ok {
		t.Errorf("Release(not the holder) succeeded")
	}
	if next, ok := units.Acquire(&rel, "m1", t0, ttl); !ok || next.Token != 2 {
		t.Errorf("Acquire after Release = %v, %v, want token 2", next, ok)
	}
}

// TestFencingPausedExLeader is the scenario of upstream's missing fencing: the leader
// decides, pauses (GC, SIGSTOP, a slow disk) past its lease, another engine takes the lease
// and writes, then the old leader wakes up and writes its stale decision.
func TestFencingPausedExLeader(t *testing.T) {
	const ttl = 10 * time.Second
	store, ok := units.Acquire(nil, "m1", t0, ttl)
	if !ok {
		t.Fatal("m1 could not take a free lease")
	}
	in := units.Input{
		Machines: []units.MachineState{machine("m1"), machine("m2")},
		Units:    []units.Job{free(mk(t, "a.service", launched))},
		Lease:    store,
	}
	stale := units.Schedule(in) // m1 decides under token 1 ...
	if stale.Fence != (units.FencedWrite{Holder: "m1", Token: 1}) {
		t.Fatalf("Schedule(...).Fence = %v, want m1's token 1", stale.Fence)
	}
	if err := units.Admit(stale.Fence, store); err != nil {
		t.Fatalf("Admit(current leader's write) = %v, want nil", err)
	}

	// ... and is paused for 30 s. m2 cannot take the lease before it expires.
	if _, ok := units.Acquire(&store, "m2", t0.Add(9*time.Second), ttl); ok {
		t.Fatal("m2 took the lease before it expired")
	}
	store, ok = units.Acquire(&store, "m2", t0.Add(11*time.Second), ttl)
	if !ok || store.Token != 2 {
		t.Fatalf("Acquire(m2, after expiry) = %v, %v, want token 2", store, ok)
	}
	in.Lease = store
	fresh := units.Schedule(in)
	if err := units.Admit(fresh.Fence, store); err != nil {
		t.Errorf("Admit(new leader's write) = %v, want nil", err)
	}

	// m1 wakes up at t0+30s and writes its old plan: rejected.
	err := units.Admit(stale.Fence, store)
	var fe *units.FenceError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "stale token") {
		t.Fatalf("Admit(paused ex-leader's write) = %v, want a stale-token *FenceError", err)
	}
	// Renewing does not help it: its lease expired.
	old := units.Lease{Holder: "m1", Token: 1, Expires: t0.Add(ttl)}
	if _, ok := units.Renew(&old, "m1", t0.Add(30*time.Second), ttl); ok {
		t.Error("ex-leader renewed an expired lease")
	}
}

func TestAdmit(t *testing.T) {
	cur := units.Lease{Holder: "m2", Token: 7, Expires: t0}
	tests := []struct {
		w    units.FencedWrite
		l    units.Lease
		want string // substring of the error; "" for nil
	}{
		{units.FencedWrite{Holder: "m2", Token: 7}, cur, ""},
		{units.FencedWrite{Holder: "m1", Token: 6}, cur, "stale token"},
		{units.FencedWrite{Holder: "m2", Token: 8}, cur, "newer"},
		{units.FencedWrite{Holder: "m1", Token: 7}, cur, `belongs to "m2"`},
		{units.FencedWrite{Holder: "m2"}, cur, "no lease token"},
		{units.FencedWrite{Holder: "m2", Token: 7}, units.Lease{Token: 7}, "no engine holds the lease"},
	}
	for _, tc := range tests {
		err := units.Admit(tc.w, tc.l)
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("Admit(%v, %v) = %v, want %q", tc.w, tc.l, err, tc.want)
		}
	}
}

// TestClaim: an engine's claim at each round renews the lease it holds (same token, later
// expiry) rather than letting it lapse, and acquires it otherwise.
func TestClaim(t *testing.T) {
	ttl := 30 * time.Second
	held := units.Lease{Holder: "e1", Token: 4, Expires: t0.Add(10 * time.Second)}
	for _, tc := range []struct {
		name   string
		l      *units.Lease
		holder string
		want   units.Lease
		ok     bool
	}{
		{"no lease yet: acquired with the first token", nil, "e1", units.Lease{Holder: "e1", Token: 1, Expires: t0.Add(ttl)}, true},
		{"held: renewed under the same token", &held, "e1", units.Lease{Holder: "e1", Token: 4, Expires: t0.Add(ttl)}, true},
		{"held by another: refused", &held, "e2", held, false},
		{"expired: acquired under a new token", &units.Lease{Holder: "e2", Token: 4, Expires: t0}, "e1", units.Lease{Holder: "e1", Token: 5, Expires: t0.Add(ttl)}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := units.Claim(tc.l, tc.holder, t0, ttl)
			if diff := cmp.Diff(tc.want, got); diff != "" || ok != tc.ok {
				t.Errorf("Claim() = %v (-want +got):\n%s", ok, diff)
			}
		})
	}
}
