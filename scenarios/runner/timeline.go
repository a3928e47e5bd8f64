package runner

// Filtering a report's timeline by event kind and subject (fleetsim run --events,
// --subject): the report keeps every notable event; a reader narrows it.

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
)

// NotableKinds are the event kinds a report's timeline holds, sorted.
func NotableKinds() []string { return slices.Sorted(maps.Keys(notable)) }

// TimelineFilter keeps the entries of the given kinds (all when empty) and, when Subject
// is set, only the subjects matching it (path.Match syntax: *, ?, [a-z]), dropping
// entries left with none. An entry's subjects beyond MaxSubjects (counted, not named)
// cannot be matched and are counted no more.
type TimelineFilter struct {
	Kinds   []string
	Subject string
}

// Check refuses unknown kinds and malformed patterns, naming the flag.
func (f TimelineFilter) Check() error {
	for _, k := range f.Kinds {
		if !notable[k] {
			return fmt.Errorf("--events: %q is not a timeline event kind; the kinds are %s", k, strings.Join(NotableKinds(), ", "))
		}
	}
	if f.Subject != "" {
		if _, err := path.Match(f.Subject, ""); err != nil {
			return fmt.Errorf("--subject: %q is not a valid pattern (use *, ? and [a-z]): %w", f.Subject, err)
		}
	}
	return nil
}

// FilterTimeline narrows the report's timeline to what f keeps.
func (r *Report) FilterTimeline(f TimelineFilter) {
	if len(f.Kinds) == 0 && f.Subject == "" {
		return
	}
	out := make([]TimelineEntry, 0, len(r.Timeline))
	for _, e := range r.Timeline {
		if len(f.Kinds) > 0 && !slices.Contains(f.Kinds, e.Kind) {
			continue
		}
		if f.Subject != "" {
			var keep []string
			for _, s := range e.Subjects {
				if ok, _ := path.Match(f.Subject, s); ok {
					keep = append(keep, s)
				}
			}
			if len(keep) == 0 {
				continue
			}
			e.Subjects, e.MoreSubjects = keep, 0
		}
		out = append(out, e)
	}
	r.Timeline = out
}
