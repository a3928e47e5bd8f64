package unitfile

import "strings"

// Install is a unit file's [Install] section as systemd's enable reads it. fleet's agent
// enables (runtime, forced) every unit whose file has an [Install] section when it loads the
// unit, and disables it when it unloads it ([Unit Files › Definition of the Install Section]):
// systemd then starts the unit whenever a unit that WantedBy= or RequiredBy= names starts,
// whatever the unit's desired state in fleet.
type Install struct {
	// WantedBy and RequiredBy name the units that pull this one in when they start.
	WantedBy   []string
	RequiredBy []string
	// Alias names the other names enable links the unit under.
	Alias []string
	// Also names the units enabled and disabled together with this one.
	Also []string
}

// HasInstall reports whether f has an [Install] section with at least one option: the files
// the agent enables when it loads them.
func HasInstall(f *File) bool {
	if f == nil {
		return false
	}
	for _, s := range f.Sections {
		if s.Name == "Install" && len(s.Options) > 0 {
			return true
		}
	}
	return false
}

// ParseInstall returns f's [Install] section. Each of WantedBy=, RequiredBy=, Alias= and
// Also= takes a whitespace-separated list and may repeat; an empty value resets the list, as
// systemd reads it. Other [Install] keys (DefaultInstance=, UpheldBy=) are left out.
func ParseInstall(f *File) Install {
	var in Install
	for _, k := range []struct {
		name string
		dst  *[]string
	}{{"WantedBy", &in.WantedBy}, {"RequiredBy", &in.RequiredBy}, {"Alias", &in.Alias}, {"Also", &in.Also}} {
		for _, v := range f.Values("Install", k.name) {
			fields := strings.Fields(v)
			if len(fields) == 0 {
				*k.dst = nil
				continue
			}
			*k.dst = append(*k.dst, fields...)
		}
	}
	return in
}

// PulledInBy reports whether starting unit name starts the unit of in, once enabled: name is
// one of its WantedBy= or RequiredBy= units.
func (in Install) PulledInBy(name string) bool {
	for _, l := range [][]string{in.WantedBy, in.RequiredBy} {
		for _, n := range l {
			if n == name {
				return true
			}
		}
	}
	return false
}
