package sim

// Field managers on a simulated member: who owns which field of each object, as the
// member's API server records in managedFields, so that a server-side apply can conflict
// with another manager as it does on a real member ([Using server-side apply], APPLY-SSA).
// Lists are owned as a whole (atomic), a simplification of structured merge's list types.

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// DefaultEditManager is the field manager of a memberEdit step that names none: what
// `kubectl edit` records.
const DefaultEditManager = "kubectl-edit"

// fieldOwners maps an object key to each of its owned leaf fields (".data.color") and the
// managers owning it, sorted.
type fieldOwners map[string]map[string][]string

// leaves lists the leaf fields of an object a manager sets: everything but apiVersion,
// kind, status and metadata other than labels and annotations.
func leaves(obj map[string]any) map[string]any {
	out := map[string]any{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		if m, ok := v.(map[string]any); ok && len(m) > 0 {
			for k, c := range m {
				walk(prefix+"."+k, c)
			}
			return
		}
		out[prefix] = v
	}
	for k, v := range obj {
		switch k {
		case "apiVersion", "kind", "status":
		case "metadata":
			md, _ := v.(map[string]any)
			for _, sub := range []string{"labels", "annotations"} {
				if m, ok := md[sub].(map[string]any); ok {
					for lk, lv := range m {
						out[".metadata."+sub+"."+lk] = lv
					}
				}
			}
		default:
			walk("."+k, v)
		}
	}
	return out
}

func valueAt(obj map[string]any, path string) (any, bool) {
	v, ok, _ := unstructured.NestedFieldNoCopy(obj, strings.Split(path, ".")[1:]...)
	return v, ok
}

// update records an update (create, update or patch) by manager that turned before (nil:
// none) into after: manager becomes the sole owner of every field it changed or created,
// as the API server records an Update; fields gone from after lose their owners.
func (f fieldOwners) update(key string, before, after map[string]any, manager string) {
	owners := f.reset(key, before)
	for path := range owners {
		if _, ok := valueAt(after, path); !ok {
			delete(owners, path)
		}
	}
	for path, v := range leaves(after) {
		if old, had := valueAt(before, path); before == nil || !had || !reflect.DeepEqual(old, v) {
			owners[path] = []string{manager}
		}
	}
}

// apply records manager's server-side apply of sent onto before: manager owns exactly the
// fields it sent, alone where it changed the value (forced, or nobody else owned it), with
// the other owners where the value was already the same; it no longer owns fields it did
// not send.
func (f fieldOwners) apply(key string, before, sent map[string]any, manager string) {
	owners := f.reset(key, before)
	set := leaves(sent)
	for path, ms := range owners {
		if _, ok := set[path]; !ok {
			owners[path] = slices.DeleteFunc(ms, func(m string) bool { return m == manager })
		}
	}
	for path, v := range set {
		if old, had := valueAt(before, path); before == nil || !had || !reflect.DeepEqual(old, v) {
			owners[path] = []string{manager}
		} else if !slices.Contains(owners[path], manager) {
			owners[path] = append(owners[path], manager)
			slices.Sort(owners[path])
		}
	}
}

// reset returns the owners of key's fields, forgotten when the object is new.
func (f fieldOwners) reset(key string, before map[string]any) map[string][]string {
	if before == nil || f[key] == nil {
		f[key] = map[string][]string{}
	}
	return f[key]
}

// serverSideApply checks manager's apply of manifest onto live: a field the manifest sets to
// a value other than live's, owned by another manager, is a conflict, refused with the API
// server's Conflict error unless force. On success manager owns what it set.
func (f fieldOwners) serverSideApply(key string, live, manifest map[string]any, manager string, force bool) error {
	if live == nil {
		return nil
	}
	owners := f[key]
	var causes []metav1.StatusCause
	set := leaves(manifest)
	for _, path := range slices.Sorted(maps.Keys(set)) {
		old, had := valueAt(live, path)
		if !had || reflect.DeepEqual(old, set[path]) {
			continue
		}
		for _, m := range owners[path] {
			if m != manager {
				causes = append(causes, metav1.StatusCause{Type: metav1.CauseTypeFieldManagerConflict,
					Message: fmt.Sprintf("conflict with %q", m), Field: path})
			}
		}
	}
	if len(causes) == 0 || force {
		return nil
	}
	lines := make([]string, len(causes))
	for i, c := range causes {
		lines[i] = c.Message + ": " + c.Field
	}
	plural := ""
	if len(causes) > 1 {
		plural = "s"
	}
	return apierrors.NewApplyConflict(causes, fmt.Sprintf("Apply failed with %d conflict%s: %s", len(causes), plural, strings.Join(lines, "\n")))
}
