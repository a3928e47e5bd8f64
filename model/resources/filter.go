package resources

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Filter is the hub's propagation filter, set by `fleet hub`'s --skipped-propagating-apis or
// --allowed-propagating-apis (exclusive) and --skipped-propagating-namespaces, and by a
// scenario's propagation: section ([Frequently Asked Questions › What kinds of resources
// can be placed], ARCH-PROPAGATION-FILTER). It narrows what Propagatable and
// ReservedNamespace already refuse, never widens it. A nil Filter lets everything through.
type Filter struct {
	// Allow makes APIs an allow list: only what it names is placed.
	Allow bool
	APIs  APIList
	// SkippedNamespaces are never placed, nor anything in them.
	SkippedNamespaces []string
}

// APIList is a parsed list of APIs in KubeFleet's flag syntax (ParseAPIList).
type APIList struct {
	Groups        []string
	GroupVersions []schema.GroupVersion
	// Kinds are compared without case: Kind is stored in lower case.
	Kinds []schema.GroupVersionKind
}

// ParseAPIList reads APIs as KubeFleet's hub flags take them: entries separated by ";",
// each <group> (every kind of a group), <group>/<version> (every kind of one version), or
// <group>/<version>/<kind>,<kind>... (kinds, case-insensitive). The core group has no name:
// v1/<kind>,<kind>... names core kinds. Empty entries are ignored.
func ParseAPIList(s string) (APIList, error) {
	var l APIList
	for entry := range strings.SplitSeq(s, ";") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		parts := strings.Split(entry, "/")
		for _, p := range parts {
			if p == "" {
				return APIList{}, fmt.Errorf("%q: an empty group, version or kind", entry)
			}
		}
		switch {
		case len(parts) == 1:
			if strings.Contains(entry, ",") {
				return APIList{}, fmt.Errorf("%q: kinds need <group>/<version>/ before them (v1/ for the core group)", entry)
			}
			l.Groups = append(l.Groups, entry)
		case len(parts) == 2 && parts[0] == "v1":
			l.Kinds = append(l.Kinds, kinds(schema.GroupVersion{Version: "v1"}, parts[1])...)
		case len(parts) == 2:
			if strings.Contains(parts[1], ",") {
				return APIList{}, fmt.Errorf("%q: kinds need <group>/<version>/ before them", entry)
			}
			l.GroupVersions = append(l.GroupVersions, schema.GroupVersion{Group: parts[0], Version: parts[1]})
		case len(parts) == 3:
			l.Kinds = append(l.Kinds, kinds(schema.GroupVersion{Group: parts[0], Version: parts[1]}, parts[2])...)
		default:
			return APIList{}, fmt.Errorf("%q: must be <group>, <group>/<version> or <group>/<version>/<kind>,<kind>", entry)
		}
	}
	return l, nil
}

func kinds(gv schema.GroupVersion, list string) []schema.GroupVersionKind {
	var out []schema.GroupVersionKind
	for k := range strings.SplitSeq(list, ",") {
		if k = strings.TrimSpace(k); k != "" {
			out = append(out, gv.WithKind(strings.ToLower(k)))
		}
	}
	return out
}

// Names reports whether the list names gvk.
func (l APIList) Names(gvk schema.GroupVersionKind) bool {
	return slices.Contains(l.Groups, gvk.Group) || slices.Contains(l.GroupVersions, gvk.GroupVersion()) ||
		slices.Contains(l.Kinds, schema.GroupVersionKind{Group: gvk.Group, Version: gvk.Version, Kind: strings.ToLower(gvk.Kind)})
}

// ParseFilter reads the three flags' values: skipped and allowed APIs are exclusive, and
// namespaces are separated by commas.
func ParseFilter(skippedAPIs, allowedAPIs, skippedNamespaces string) (*Filter, error) {
	if strings.TrimSpace(skippedAPIs) != "" && strings.TrimSpace(allowedAPIs) != "" {
		return nil, fmt.Errorf("skipped and allowed propagating APIs are mutually exclusive: give one")
	}
	f := &Filter{}
	list, allow := skippedAPIs, false
	if strings.TrimSpace(allowedAPIs) != "" {
		list, allow = allowedAPIs, true
	}
	apis, err := ParseAPIList(list)
	if err != nil {
		if allow {
			return nil, fmt.Errorf("allowed propagating APIs: %w", err)
		}
		return nil, fmt.Errorf("skipped propagating APIs: %w", err)
	}
	f.APIs, f.Allow = apis, allow
	for ns := range strings.SplitSeq(skippedNamespaces, ",") {
		if ns = strings.TrimSpace(ns); ns == "" {
			continue
		}
		if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
			return nil, fmt.Errorf("skipped propagating namespace %q: %s", ns, strings.Join(errs, "; "))
		}
		f.SkippedNamespaces = append(f.SkippedNamespaces, ns)
	}
	slices.Sort(f.SkippedNamespaces)
	f.SkippedNamespaces = slices.Compact(f.SkippedNamespaces)
	return f, nil
}

// AllowsAPI reports whether the filter lets objects of gvk be placed (Propagatable must
// too).
func (f *Filter) AllowsAPI(gvk schema.GroupVersionKind) bool {
	if f == nil {
		return true
	}
	return f.APIs.Names(gvk) == f.Allow
}

// AllowsNamespace reports whether the filter lets the namespace ns, and what is in it, be
// placed (ReservedNamespace must not refuse it either).
func (f *Filter) AllowsNamespace(ns string) bool {
	if f == nil {
		return true
	}
	_, found := slices.BinarySearch(f.SkippedNamespaces, ns)
	return !found
}

// Empty reports whether the filter lets everything through.
func (f *Filter) Empty() bool {
	return f == nil || (!f.Allow && len(f.APIs.Groups)+len(f.APIs.GroupVersions)+len(f.APIs.Kinds) == 0 && len(f.SkippedNamespaces) == 0)
}
