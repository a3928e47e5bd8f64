package hub

import "testing"

// TestDiscoveryCatchUpOnePoller: while a poller runs, further CRD events start none of their
// own; they make the running one try again once when it ends, however many came.
func TestDiscoveryCatchUpOnePoller(t *testing.T) {
	var d discoveryCatchUp
	if !d.start() {
		t.Fatal("first event: no poller started")
	}
	for i := range 50 {
		if d.start() {
			t.Fatalf("event %d during a poll started a second poller", i+2)
		}
	}
	if !d.finish() {
		t.Fatal("events came during the poll, but the poller did not try again")
	}
	if d.finish() {
		t.Fatal("no events came during the second round, but the poller tried a third time")
	}
	if !d.start() {
		t.Fatal("after the poller stopped, a new event started none")
	}
}
