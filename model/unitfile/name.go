package unitfile

import (
	"fmt"
	"strings"
)

// NameMax is the longest valid unit name, in bytes.
const NameMax = 256

// UnitTypes returns the 13 unit types (name suffixes) fleet accepts, sorted.
func UnitTypes() []string {
	return []string{"automount", "busname", "device", "mount", "path", "scope", "service",
		"slice", "snapshot", "socket", "swap", "target", "timer"}
}

// TemplateUnitTypes returns the unit types allowed for names containing "@" (templates and
// their instances), sorted.
func TemplateUnitTypes() []string {
	return []string{"path", "service", "socket", "target", "timer"}
}

func isUnitType(s string) bool {
	switch s {
	case "automount", "busname", "device", "mount", "path", "scope", "service",
		"slice", "snapshot", "socket", "swap", "target", "timer":
		return true
	}
	return false
}

func isTemplateUnitType(s string) bool {
	switch s {
	case "path", "service", "socket", "target", "timer":
		return true
	}
	return false
}

// isNameChar reports whether c may appear before a unit name's last ".".
func isNameChar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte(":_.@-", c) >= 0
}

// NameError is an invalid unit name.
type NameError struct {
	Name   string
	Reason string
}

func (e *NameError) Error() string { return fmt.Sprintf("invalid unit name %q: %s", e.Name, e.Reason) }

// ValidateName checks a unit name against fleet's rules (CoreOS fleet's unit files, "Name
// validation", fleet's "Unit Requirements"):
//
//   - 1 to [NameMax] bytes;
//   - of the form string.type, where type, after the last ".", is one of [UnitTypes];
//   - if the name contains "@", the type is one of [TemplateUnitTypes];
//   - string is not empty, does not start with "@", and contains only [A-Za-z0-9:_.@-].
//
// Upstream's code also accepted a backslash in string; the documentation's regular
// expression does not, and this function follows the document, so "foo\x2d.service" is
// rejected. Errors are of type [*NameError].
func ValidateName(name string) error {
	bad := func(format string, args ...any) error {
		return &NameError{Name: name, Reason: fmt.Sprintf(format, args...)}
	}
	if len(name) == 0 || len(name) > NameMax {
		return bad("length %d is outside 1..%d bytes", len(name), NameMax)
	}
	dot := strings.LastIndexByte(name, '.')
	if dot < 0 {
		return bad(`missing ".<type>" suffix`)
	}
	stem, typ := name[:dot], name[dot+1:]
	if typ == "" {
		return bad(`must not end with "."`)
	}
	if !isUnitType(typ) {
		return bad("unit type %q is not one of %s", typ, strings.Join(UnitTypes(), ", "))
	}
	if strings.Contains(name, "@") && !isTemplateUnitType(typ) {
		return bad(`unit type %q cannot be used with "@" (templates and instances must be one of %s)`,
			typ, strings.Join(TemplateUnitTypes(), ", "))
	}
	if stem == "" {
		return bad(`empty name before ".%s"`, typ)
	}
	if stem[0] == '@' {
		return bad(`must not start with "@"`)
	}
	for i := 0; i < len(stem); i++ {
		if !isNameChar(stem[i]) {
			return bad("character %q at byte %d is not allowed (allowed: A-Z a-z 0-9 : _ . @ -)", stem[i], i)
		}
	}
	return nil
}

// NameInfo is a unit name split into its parts. For "foo@bar.service":
//
//	Full     "foo@bar.service"
//	Name     "foo@bar"   everything before the last "."
//	Prefix   "foo"       everything before the first "@" in Name
//	Instance "bar"       everything after the first "@" in Name
//	Suffix   "service"   everything after the last ".", without the dot
//	HasAt    true        Name contains "@"
//
// For a name without "@", Prefix is Name and Instance is "" (as systemd's %p and %i). A
// name without "." has Name == Full and Suffix "".
type NameInfo struct {
	Full     string
	Name     string
	Prefix   string
	Instance string
	Suffix   string
	HasAt    bool
}

// SplitName splits a unit name into its parts. It does not validate the name; see
// [ValidateName].
func SplitName(name string) NameInfo {
	ni := NameInfo{Full: name, Name: name}
	if dot := strings.LastIndexByte(name, '.'); dot >= 0 {
		ni.Name, ni.Suffix = name[:dot], name[dot+1:]
	}
	ni.Prefix = ni.Name
	if at := strings.IndexByte(ni.Name, '@'); at >= 0 {
		ni.Prefix, ni.Instance, ni.HasAt = ni.Name[:at], ni.Name[at+1:], true
	}
	return ni
}

// IsTemplate reports whether the name is a template: it has an "@" and an empty instance.
func (n NameInfo) IsTemplate() bool { return n.HasAt && n.Instance == "" }

// IsInstance reports whether the name is an instance of a template: it has an "@" and a
// non-empty instance.
func (n NameInfo) IsInstance() bool { return n.HasAt && n.Instance != "" }

// Template returns "prefix@.suffix" for a name with an "@" (an instance's template, or a
// template itself), and "" otherwise.
func (n NameInfo) Template() string {
	if !n.HasAt {
		return ""
	}
	return n.Prefix + "@." + n.Suffix
}

// IsTemplate reports whether name is a template unit name such as "foo@.service".
func IsTemplate(name string) bool { return SplitName(name).IsTemplate() }

// IsInstance reports whether name is a template instance such as "foo@bar.service".
func IsInstance(name string) bool { return SplitName(name).IsInstance() }

// TemplateOf returns the template an instance name is made from ("foo@bar.service" →
// "foo@.service"). ok is false if name is not an instance. fleet keeps no link between an
// instance and its template; this only derives the name.
func TemplateOf(name string) (template string, ok bool) {
	ni := SplitName(name)
	if !ni.IsInstance() {
		return "", false
	}
	return ni.Template(), true
}

// Instantiate returns the instance of template for instance ("foo@.service", "bar" →
// "foo@bar.service"). ok is false if template is not a template name or instance is empty.
// The result is not validated; see [ValidateName].
func Instantiate(template, instance string) (name string, ok bool) {
	ni := SplitName(template)
	if !ni.IsTemplate() || instance == "" || ni.Full == ni.Name {
		return "", false
	}
	return ni.Prefix + "@" + instance + "." + ni.Suffix, true
}
