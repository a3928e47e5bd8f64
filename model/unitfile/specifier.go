package unitfile

import "strings"

// ExpandSpecifiers replaces the systemd specifiers fleet supports in s, for the unit called
// unitName (CoreOS fleet's unit files, "Specifiers"):
//
//	%n  full unit name          "foo@bar.service"
//	%N  name without its suffix "foo@bar"
//	%p  prefix                  "foo" (for "foo.service" also "foo")
//	%i  instance                "bar" ("" for names without "@")
//
// The replacements are applied one after another in that order, each replacing every
// occurrence. There is no unescaping, no "%%", and no other specifier (%m, %H, ... are left
// as they are). fleet applies this to [X-Fleet] values only; [ParseXFleet] does so.
func ExpandSpecifiers(s, unitName string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	ni := SplitName(unitName)
	s = strings.ReplaceAll(s, "%n", ni.Full)
	s = strings.ReplaceAll(s, "%N", ni.Name)
	s = strings.ReplaceAll(s, "%p", ni.Prefix)
	s = strings.ReplaceAll(s, "%i", ni.Instance)
	return s
}
