package agentk8s

import "time"

// Sightings remembers when an agent first saw each finding (a drift or a diff of one
// manifest), so the firstDriftedObservedTime and firstDiffedObservedTime it reports stay put
// while the finding lasts. The simulator's member agents and `fleet member` share it.
type Sightings map[string]time.Time

// FirstSeen returns when the finding key was first seen, remembering now if it is new; when
// found is false the finding is gone, so it is forgotten and the zero time returned.
func (s *Sightings) FirstSeen(key string, found bool, now time.Time) time.Time {
	if !found {
		delete(*s, key)
		return time.Time{}
	}
	if *s == nil {
		*s = Sightings{}
	}
	t, ok := (*s)[key]
	if !ok {
		t = now
		(*s)[key] = t
	}
	return t
}
