package convert

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
	"time"

	fleetv1 "github.com/fleetsim/fleetsim/apis/fleet/v1alpha1"

	"github.com/fleetsim/fleetsim/model/unitfile"
	"github.com/fleetsim/fleetsim/model/units"
)

// ObjectName returns the name of the Unit object that holds the unit named name, a valid
// RFC 1123 subdomain: the name lower-cased, split at dots into labels, each label's other
// characters replaced by "-" and trimmed of "-" at both ends and cut to 63 characters, empty
// labels dropped, and "-" plus 10 hex digits of the SHA-256 of the exact unit name appended
// (so names that differ only in case or in replaced characters never collide). For example
// "web@1.service" is "web-1.service-<hash>".
func UnitObjectName(name string) string {
	sum := sha256.Sum256([]byte(name))
	suffix := "-" + hex.EncodeToString(sum[:5])
	var labels []string
	size := 0
	for _, part := range strings.Split(strings.ToLower(name), ".") {
		var b strings.Builder
		for _, r := range part {
			if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
				b.WriteRune(r)
			} else {
				b.WriteByte('-')
			}
		}
		l := strings.Trim(b.String(), "-")
		if len(l) > 52 {
			l = strings.Trim(l[:52], "-")
		}
		if l == "" || size+len(l)+1 > 200 {
			continue
		}
		labels = append(labels, l)
		size += len(l) + 1
	}
	if len(labels) == 0 {
		labels = []string{"unit"}
	}
	return strings.Join(labels, ".") + suffix
}

// ToModel returns the model unit an API Unit holds.
func UnitToModel(u *fleetv1.Unit) (*units.Unit, error) {
	f, err := unitfile.Parse(u.Spec.File)
	if err != nil {
		return nil, fmt.Errorf("unit %s: %w", u.Spec.Name, err)
	}
	mu, err := units.New(u.Spec.Name, f)
	if err != nil {
		return nil, err
	}
	st, err := units.ParseState(u.Spec.DesiredState)
	if err != nil {
		return nil, fmt.Errorf("unit %s: %w", u.Spec.Name, err)
	}
	return mu.WithState(st), nil
}

// Jobs returns the engine's view of the units: each valid unit with the machine it is
// scheduled to, sorted by name. Units that do not convert are returned in bad, keyed by
// unit name, with the reason.
func UnitJobs(list []fleetv1.Unit) (jobs []units.Job, bad map[string]error) {
	for i := range list {
		mu, err := UnitToModel(&list[i])
		if err != nil {
			if bad == nil {
				bad = map[string]error{}
			}
			bad[list[i].Spec.Name] = err
			continue
		}
		jobs = append(jobs, units.Job{Unit: mu, Machine: list[i].Status.MachineID})
	}
	sort.Slice(jobs, func(a, b int) bool { return jobs[a].Unit.Name < jobs[b].Unit.Name })
	return jobs, bad
}

// Alive reports whether a machine's last heartbeat is less than ttl old at now.
func MachineAlive(m *fleetv1.Machine, now time.Time, ttl time.Duration) bool {
	if ttl <= 0 {
		ttl = units.DefaultMachineTTL
	}
	hb := m.Status.LastHeartbeat.Time
	return !hb.IsZero() && now.Sub(hb) < ttl && m.DeletionTimestamp == nil
}

// MachineStates returns the engine's view of the machines, sorted by ID.
func MachineStates(list []fleetv1.Machine, now time.Time, ttl time.Duration) []units.MachineState {
	out := make([]units.MachineState, 0, len(list))
	for i := range list {
		m := &list[i]
		out = append(out, units.MachineState{ID: m.Name, Metadata: m.Spec.Metadata, Alive: MachineAlive(m, now, ttl)})
	}
	sort.Slice(out, func(a, b int) bool { return out[a].ID < out[b].ID })
	return out
}

// NextExpiry returns when the first live machine would be lost if it stopped heartbeating
// now, or the zero time if no machine is alive.
func MachineNextExpiry(list []fleetv1.Machine, now time.Time, ttl time.Duration) time.Time {
	if ttl <= 0 {
		ttl = units.DefaultMachineTTL
	}
	var next time.Time
	for i := range list {
		if !MachineAlive(&list[i], now, ttl) {
			continue
		}
		t := list[i].Status.LastHeartbeat.Add(ttl)
		if next.IsZero() || t.Before(next) {
			next = t
		}
	}
	return next
}
