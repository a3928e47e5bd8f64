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

// MachinePresence returns what a Machine object says of the machine's presence: its agent
// has reported once it has a heartbeat, and it is leaving once it is being deleted. The TTL
// rule is the model's (units.MachinePresence.Alive), shared with the simulator.
func MachinePresence(m *fleetv1.Machine) units.MachinePresence {
	hb := m.Status.LastHeartbeat.Time
	return units.MachinePresence{ID: m.Name, Metadata: m.Spec.Metadata, Reported: !hb.IsZero(), LastHeartbeat: hb, Leaving: m.DeletionTimestamp != nil}
}

// MachinePresences returns every machine's presence, sorted by ID.
func MachinePresences(list []fleetv1.Machine) []units.MachinePresence {
	out := make([]units.MachinePresence, 0, len(list))
	for i := range list {
		out = append(out, MachinePresence(&list[i]))
	}
	sort.Slice(out, func(a, b int) bool { return out[a].ID < out[b].ID })
	return out
}

// MachineAlive reports whether a machine is alive at now: it has a heartbeat less than ttl
// old and is not being deleted (units.MachinePresence.Alive).
func MachineAlive(m *fleetv1.Machine, now time.Time, ttl time.Duration) bool {
	return MachinePresence(m).Alive(now, ttl)
}

// MachineStates returns the engine's view of the machines at now, sorted by ID.
func MachineStates(list []fleetv1.Machine, now time.Time, ttl time.Duration) []units.MachineState {
	return units.MachinesAt(MachinePresences(list), now, ttl)
}
