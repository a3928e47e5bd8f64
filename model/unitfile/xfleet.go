package unitfile

import (
	"fmt"
	"path"
	"strings"
)

// XFleetSection is the name of the fleet-specific section of a unit file.
const XFleetSection = "X-Fleet"

// [X-Fleet] keys. The first six are current. The X-prefixed keys were deprecated in fleet
// v0.8.0 but are still honoured, each folded into the current key it maps to (see
// [DeprecatedKey]); the constants themselves are not deprecated.
const (
	KeyMachineID       = "MachineID"
	KeyMachineOf       = "MachineOf"
	KeyMachineMetadata = "MachineMetadata"
	KeyConflicts       = "Conflicts"
	KeyGlobal          = "Global"
	KeyReplaces        = "Replaces"

	// KeyXConditionMachineID is the deprecated form of MachineID.
	KeyXConditionMachineID = "X-ConditionMachineID"
	// KeyXConditionMachineBootID is a legacy key mapped to MachineID with the lowest
	// precedence. A boot ID is not a machine ID, so in practice it never matches a machine.
	KeyXConditionMachineBootID = "X-ConditionMachineBootID"
	// KeyXConditionMachineOf is the deprecated form of MachineOf.
	KeyXConditionMachineOf = "X-ConditionMachineOf"
	// KeyXConditionMachineMetadata is the deprecated form of MachineMetadata.
	KeyXConditionMachineMetadata = "X-ConditionMachineMetadata"
	// KeyXConflicts is the deprecated form of Conflicts.
	KeyXConflicts = "X-Conflicts"
)

// DeprecatedKey reports whether key is a deprecated [X-Fleet] key and, if so, the current
// key it maps to.
func DeprecatedKey(key string) (replacement string, ok bool) {
	switch key {
	case KeyXConditionMachineID, KeyXConditionMachineBootID:
		return KeyMachineID, true
	case KeyXConditionMachineOf:
		return KeyMachineOf, true
	case KeyXConditionMachineMetadata:
		return KeyMachineMetadata, true
	case KeyXConflicts:
		return KeyConflicts, true
	}
	return "", false
}

// XFleet is the typed content of a unit's [X-Fleet] section, resolved for one unit name
// (specifiers expand differently per name), with deprecated keys folded into the current
// ones.
type XFleet struct {
	// Name is the unit name the options were resolved for.
	Name string
	// MachineID pins the unit to one machine, by full or 8-character short machine ID (see
	// [MachineIDMatches]); "" if unset.
	MachineID string
	// MachineMetadata is the metadata a machine needs; nil if unset.
	MachineMetadata Metadata
	// MachineOf lists the exact names of units this one must run next to.
	MachineOf []string
	// Conflicts lists path.Match globs of unit names this one must not share a machine with.
	Conflicts []string
	// Global asks for the unit to run on every machine that matches MachineMetadata and has
	// no conflicting unit; the engine never schedules a global unit. It is true if the last
	// Global item is true, yes, 1, on or t, in any case.
	Global bool
	// Replaces lists path.Match globs of unit names this one displaces from its machine.
	Replaces []string
	// Warnings lists, in file order, what is worth telling the user: unknown keys (fleetctl
	// warned about these), deprecated keys, and MachineMetadata items that were ignored.
	Warnings []string
}

// OptionError is an invalid [X-Fleet] option or combination of options.
type OptionError struct {
	Option string // the key, e.g. "MachineID"
	Reason string
}

func (e *OptionError) Error() string {
	return fmt.Sprintf("[%s] %s: %s", XFleetSection, e.Option, e.Reason)
}

// SplitMultiValue splits an [X-Fleet] value into items (CoreOS fleet's unit files, "Parser"):
// if it both starts and ends with '"', it is split on spaces outside double quotes, the
// quotes are removed and empty items are dropped, so `"a=b" "c=d"` gives [a=b c=d] and `""`
// gives none. Otherwise the whole value is one item, even if empty.
func SplitMultiValue(v string) []string {
	if !strings.HasPrefix(v, `"`) || !strings.HasSuffix(v, `"`) {
		return []string{v}
	}
	var items []string
	var cur strings.Builder
	quoted := false
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c == '"':
			quoted = !quoted
		case c == ' ' && !quoted:
			if cur.Len() > 0 {
				items = append(items, cur.String())
				cur.Reset()
			}
		default:
			cur.WriteByte(c)
		}
	}
	if cur.Len() > 0 {
		items = append(items, cur.String())
	}
	return items
}

// isTruthy reports whether a Global value means true: true, yes, 1, on or t, in any case.
func isTruthy(s string) bool {
	for _, t := range []string{"true", "yes", "1", "on", "t"} {
		if strings.EqualFold(s, t) {
			return true
		}
	}
	return false
}

// ParseXFleet reads f's [X-Fleet] section for the unit called unitName and validates it.
//
// Every value is split with [SplitMultiValue] and each item expanded with
// [ExpandSpecifiers] (for unitName), in that order. Then (CoreOS fleet's unit files, "X-Fleet
// keys and precedence"):
//
//   - MachineID: the first item wins, looking at MachineID, then X-ConditionMachineID, then
//     X-ConditionMachineBootID.
//   - MachineMetadata and X-ConditionMachineMetadata: each item must be "key=value" with
//     exactly one "=" and both parts non-empty, otherwise it is dropped (with a warning).
//     Values of the same key are ORed, different keys ANDed; see [Metadata.Matches].
//   - MachineOf and X-ConditionMachineOf: each item is one unit name (not split further).
//   - Conflicts and X-Conflicts: each item is further split on whitespace into globs.
//   - Global: the last item wins; true, yes, 1, on and t (in any case) mean true.
//   - Replaces: each item is one glob (not split further).
//   - Other keys are kept as warnings only.
//
// For the multi-valued keys the current key's items come first, then the deprecated key's,
// each in file order.
//
// Beyond upstream fleet, ParseXFleet rejects an empty MachineID, MachineOf or Replaces item
// (upstream silently made such a unit unschedulable) and malformed globs (which upstream
// silently never matched). Finally it applies [XFleet.Validate]. Errors are of type
// [*OptionError]; an error about one option names the key as written, an error about a
// combination names the current keys.
func ParseXFleet(f *File, unitName string) (*XFleet, error) {
	x := &XFleet{Name: unitName}
	var (
		ids                   [3][]string // MachineID, X-ConditionMachineID, X-ConditionMachineBootID
		peers, oldPeers       []string
		conflicts, oldConfl   []string
		metadata, oldMetadata []string
	)
	for _, o := range f.options(XFleetSection) {
		items := SplitMultiValue(o.Value)
		for i, it := range items {
			items[i] = ExpandSpecifiers(it, unitName)
		}
		if repl, ok := DeprecatedKey(o.Name); ok {
			note := ""
			if o.Name == KeyXConditionMachineBootID {
				note = " (a boot ID never matches a machine ID)"
			}
			x.Warnings = append(x.Warnings, fmt.Sprintf("[%s] %s is deprecated, use %s%s", XFleetSection, o.Name, repl, note))
		}
		switch o.Name {
		case KeyMachineID, KeyXConditionMachineID, KeyXConditionMachineBootID, KeyMachineOf, KeyXConditionMachineOf, KeyReplaces:
			if err := nonEmptyItems(o, items); err != nil {
				return nil, err
			}
		}
		switch o.Name {
		case KeyMachineID:
			ids[0] = append(ids[0], items...)
		case KeyXConditionMachineID:
			ids[1] = append(ids[1], items...)
		case KeyXConditionMachineBootID:
			ids[2] = append(ids[2], items...)
		case KeyMachineOf:
			peers = append(peers, items...)
		case KeyXConditionMachineOf:
			oldPeers = append(oldPeers, items...)
		case KeyMachineMetadata:
			metadata = append(metadata, items...)
		case KeyXConditionMachineMetadata:
			oldMetadata = append(oldMetadata, items...)
		case KeyConflicts, KeyXConflicts:
			var globs []string
			for _, it := range items {
				globs = append(globs, strings.Fields(it)...)
			}
			if err := wellFormedGlobs(o.Name, globs); err != nil {
				return nil, err
			}
			if o.Name == KeyConflicts {
				conflicts = append(conflicts, globs...)
			} else {
				oldConfl = append(oldConfl, globs...)
			}
		case KeyGlobal:
			if len(items) > 0 {
				x.Global = isTruthy(items[len(items)-1])
			}
		case KeyReplaces:
			if err := wellFormedGlobs(o.Name, items); err != nil {
				return nil, err
			}
			x.Replaces = append(x.Replaces, items...)
		default:
			if _, ok := DeprecatedKey(o.Name); !ok {
				x.Warnings = append(x.Warnings, fmt.Sprintf("[%s] unknown option %q is ignored", XFleetSection, o.Name))
			}
		}
	}
	for _, l := range ids {
		if len(l) > 0 {
			x.MachineID = l[0]
			break
		}
	}
	x.MachineOf = append(peers, oldPeers...)
	x.Conflicts = append(conflicts, oldConfl...)
	for _, it := range append(metadata, oldMetadata...) {
		parts := strings.Split(it, "=")
		if len(parts) != 2 || parts[0] == "" || parts[1] == "" {
			x.Warnings = append(x.Warnings, fmt.Sprintf("[%s] MachineMetadata item %q is ignored: want key=value", XFleetSection, it))
			continue
		}
		x.MachineMetadata = x.MachineMetadata.add(parts[0], parts[1])
	}
	if err := x.Validate(); err != nil {
		return nil, err
	}
	return x, nil
}

// options returns the options of every section called name, in order.
func (f *File) options(name string) []Option {
	if f == nil {
		return nil
	}
	var out []Option
	for _, s := range f.Sections {
		if s.Name == name {
			out = append(out, s.Options...)
		}
	}
	return out
}

func nonEmptyItems(o Option, items []string) error {
	for _, it := range items {
		if it != "" {
			continue
		}
		if o.Value == "" {
			return &OptionError{Option: o.Name, Reason: "empty value"}
		}
		return &OptionError{Option: o.Name, Reason: fmt.Sprintf("value %q expands to an empty name for this unit", o.Value)}
	}
	return nil
}

func wellFormedGlobs(option string, globs []string) error {
	for _, g := range globs {
		if _, err := path.Match(g, ""); err != nil {
			return &OptionError{Option: option, Reason: fmt.Sprintf("malformed glob %q: %v", g, err)}
		}
	}
	return nil
}

// Validate checks x against the combinations fleet's API rejects (CoreOS fleet's unit files,
// api.ValidateOptions; fleet's "fleet-specific Options"), in this order:
//
//   - MachineID with MachineOf, Conflicts, Global or Replaces;
//   - Global with MachineOf or Replaces (Global with MachineMetadata and Conflicts is fine);
//   - Conflicts with Replaces;
//   - a MachineOf peer matched by one of the unit's own Conflicts or Replaces globs.
//
// It also rejects empty MachineOf or Replaces items and malformed globs. Deprecated keys
// are reported under the name of the key they map to. The first problem found is returned,
// as an [*OptionError].
func (x *XFleet) Validate() error {
	for _, p := range x.MachineOf {
		if p == "" {
			return &OptionError{Option: KeyMachineOf, Reason: "empty value"}
		}
	}
	for _, r := range x.Replaces {
		if r == "" {
			return &OptionError{Option: KeyReplaces, Reason: "empty value"}
		}
	}
	if err := wellFormedGlobs(KeyConflicts, x.Conflicts); err != nil {
		return err
	}
	if err := wellFormedGlobs(KeyReplaces, x.Replaces); err != nil {
		return err
	}
	exclusive := func(option, reason string, others ...bool) error {
		names := []string{KeyMachineOf, KeyConflicts, KeyGlobal, KeyReplaces}
		for i, set := range others {
			if set {
				return &OptionError{Option: option, Reason: fmt.Sprintf("cannot be combined with %s (%s)", names[i], reason)}
			}
		}
		return nil
	}
	hasOf, hasConfl, hasRepl := len(x.MachineOf) > 0, len(x.Conflicts) > 0, len(x.Replaces) > 0
	if x.MachineID != "" {
		if err := exclusive(KeyMachineID, "MachineID already fixes the machine", hasOf, hasConfl, x.Global, hasRepl); err != nil {
			return err
		}
	}
	if x.Global {
		if err := exclusive(KeyGlobal, "a global unit runs on every matching machine", hasOf, false, false, hasRepl); err != nil {
			return err
		}
	}
	if hasConfl && hasRepl {
		return &OptionError{Option: KeyConflicts, Reason: "cannot be combined with Replaces (a replacing unit moves the other unit away instead)"}
	}
	for _, peer := range x.MachineOf {
		for _, opt := range []struct {
			key   string
			globs []string
		}{{KeyConflicts, x.Conflicts}, {KeyReplaces, x.Replaces}} {
			if g, ok := FirstMatch(opt.globs, peer); ok {
				return &OptionError{Option: KeyMachineOf, Reason: fmt.Sprintf(
					"peer %q is matched by this unit's own %s glob %q", peer, opt.key, g)}
			}
		}
	}
	return nil
}

// FirstMatch returns the first glob in globs that matches name. Malformed globs match
// nothing.
func FirstMatch(globs []string, name string) (string, bool) {
	for _, g := range globs {
		if ok, err := path.Match(g, name); ok && err == nil {
			return g, true
		}
	}
	return "", false
}

// ConflictsWith reports whether one of x's Conflicts globs matches name (one direction
// only; see [Conflicts] for the check fleet makes). A unit never conflicts with itself.
func (x *XFleet) ConflictsWith(name string) bool {
	if name == x.Name {
		return false
	}
	_, ok := FirstMatch(x.Conflicts, name)
	return ok
}

// Conflicts reports whether units a and b must not share a machine: one of a's Conflicts
// globs matches b's name, or one of b's matches a's. Globs use path.Match syntax ("*", "?",
// "[...]"; "*" does not cross "/"). A unit does not conflict with itself (same name).
func Conflicts(a, b *XFleet) bool {
	return a.Name != b.Name && (a.ConflictsWith(b.Name) || b.ConflictsWith(a.Name))
}

// ReplacesName reports whether one of x's Replaces globs matches name (one direction only;
// see [Replaces]). A unit never replaces itself.
func (x *XFleet) ReplacesName(name string) bool {
	if name == x.Name {
		return false
	}
	_, ok := FirstMatch(x.Replaces, name)
	return ok
}

// Replaces reports whether unit a replaces unit b: a's Replaces globs match b's name and
// b's do not match a's. A circular pair (each matching the other) is ignored, as fleet
// does, so Replaces(a, b) and Replaces(b, a) are never both true.
func Replaces(a, b *XFleet) bool {
	return a.ReplacesName(b.Name) && !b.ReplacesName(a.Name)
}

// MachineIDMatches reports whether a MachineID requirement want names the machine with ID
// id: want equals the full ID, or the 8-character short ID (its first 8 characters). fleet's
// documentation says only the full ID works; the code, followed here, also accepted the
// short one. An empty want matches nothing.
func MachineIDMatches(want, id string) bool {
	if want == "" {
		return false
	}
	return want == id || (len(id) > 8 && want == id[:8])
}

// Metadata is a MachineMetadata requirement: key → the values allowed for that key.
type Metadata map[string][]string

// add records key=value, skipping a duplicate value, allocating m if needed.
func (m Metadata) add(key, value string) Metadata {
	if m == nil {
		m = make(Metadata)
	}
	for _, v := range m[key] {
		if v == value {
			return m
		}
	}
	m[key] = append(m[key], value)
	return m
}

// Matches reports whether a machine with the given metadata satisfies m: for every key in
// m (AND across keys), the machine has that key and its value is one of m's values for it
// (OR within a key). Machine metadata is single-valued: one value per key. Comparison is
// exact and case-sensitive. An empty or nil m matches every machine.
//
// Example: MachineMetadata="region=us-east-1" "region=us-west-1" "diskType=SSD" means
// diskType=SSD AND (region=us-east-1 OR region=us-west-1).
func (m Metadata) Matches(machine map[string]string) bool {
	for key, allowed := range m {
		have, ok := machine[key]
		if !ok {
			return false
		}
		found := false
		for _, v := range allowed {
			if v == have {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}
