package hub

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// upsert writes want as the difference to base: it creates want when base is nil, updates
// metadata and spec when they differ, and the status through the status subresource when it
// differs. want ends up holding what the API server stored.
func upsert(ctx context.Context, c client.Client, want, base client.Object) error {
	st, err := writeSpec(ctx, c, want, base)
	if err != nil || st == nil {
		return err
	}
	return st.write(ctx, c)
}

// statusWrite is a decided status still to write on an object whose spec is written.
type statusWrite struct {
	obj    client.Object // as the API server stored it
	status reflect.Value // the decided status
}

// writeSpec creates want, or updates it when its metadata or spec differ from base, and
// returns the status write still due (nil when the stored status is the decided one). The
// API server ignores the status of a create and of an update, so it is always a second
// write; a flush can hold it back until the objects that depend on the spec are written.
func writeSpec(ctx context.Context, c client.Client, want, base client.Object) (*statusWrite, error) {
	status, hasStatus := statusField(want)
	if base != nil && sameSpec(want, base) {
		// Most decisions, a restarted hub's above all: nothing to write but the status.
		if !hasStatus || sameStatus(want, base) {
			return nil, nil
		}
		return &statusWrite{obj: want, status: status}, nil
	}
	// The write answers with the stored object, status included, into want: keep what was
	// decided.
	var decided runtime.Object
	if hasStatus {
		decided = want.DeepCopyObject()
		status, _ = statusField(decided)
	}
	if base == nil {
		want.SetResourceVersion("")
		if err := c.Create(ctx, want); err != nil {
			return nil, fmt.Errorf("create: %w", err)
		}
		if !hasStatus || storedForm.DeepEqual(status.Interface(), reflect.Zero(status.Type()).Interface()) {
			return nil, nil
		}
		return &statusWrite{obj: want, status: status}, nil
	}
	if err := c.Update(ctx, want); err != nil {
		return nil, fmt.Errorf("update: %w", err)
	}
	if !hasStatus || sameStatus(decided, want) {
		return nil, nil
	}
	return &statusWrite{obj: want, status: status}, nil
}

// write sets the decided status on the stored object and writes it.
func (w *statusWrite) write(ctx context.Context, c client.Client) error {
	st, _ := statusField(w.obj)
	st.Set(w.status)
	if err := c.Status().Update(ctx, w.obj); err != nil {
		return fmt.Errorf("update status: %w", err)
	}
	return nil
}

// statusField is the Status field of an API object, if its type has one served as the
// status subresource (every type the hub writes names it Status, its JSON name "status").
func statusField(o runtime.Object) (reflect.Value, bool) {
	v := reflect.ValueOf(o).Elem()
	f, ok := v.Type().FieldByName("Status")
	if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); !ok || name != "status" {
		return reflect.Value{}, false
	}
	return v.FieldByIndex(f.Index), true
}

// sameSpec compares what an update writes: labels, annotations, finalizers, owner
// references and every field but the type, the rest of the metadata and the status.
func sameSpec(a, b client.Object) bool {
	if !storedForm.DeepEqual(a.GetLabels(), b.GetLabels()) || !storedForm.DeepEqual(a.GetAnnotations(), b.GetAnnotations()) ||
		!storedForm.DeepEqual(a.GetFinalizers(), b.GetFinalizers()) || !storedForm.DeepEqual(a.GetOwnerReferences(), b.GetOwnerReferences()) {
		return false
	}
	av, bv := reflect.ValueOf(a).Elem(), reflect.ValueOf(b).Elem()
	for i := range av.NumField() {
		switch av.Type().Field(i).Name {
		case "TypeMeta", "ObjectMeta", "Status":
			continue
		}
		if !storedForm.DeepEqual(av.Field(i).Interface(), bv.Field(i).Interface()) {
			return false
		}
	}
	return true
}

// sameStatus compares two objects' statuses.
func sameStatus(a, b runtime.Object) bool {
	as, _ := statusField(a)
	bs, _ := statusField(b)
	return storedForm.DeepEqual(as.Interface(), bs.Interface())
}

// storedForm compares API values as the API server stores them, so that a decision that
// changes nothing writes nothing (a write wakes every controller that watches the kind,
// whose decisions would write again): empty and absent lists and maps are the same,
// times count to the second (metav1.Time's JSON) or the microsecond (MicroTime's),
// quantities by value, and embedded JSON (manifests, override values) by what it encodes,
// not how it is spelled.
var storedForm = conversion.EqualitiesOrDie(
	func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 },
	func(a, b metav1.Time) bool { return a.Truncate(time.Second).Equal(b.Truncate(time.Second)) },
	func(a, b metav1.MicroTime) bool {
		return a.Truncate(time.Microsecond).Equal(b.Truncate(time.Microsecond))
	},
	func(a, b metav1.FieldsV1) bool { return a.Equal(b) },
	func(a, b runtime.RawExtension) bool { return sameJSON(a.Raw, b.Raw) },
	func(a, b apiextensionsv1.JSON) bool { return sameJSON(a.Raw, b.Raw) },
)

// sameJSON compares two JSON documents by value; a document that does not parse equals
// only its own bytes.
func sameJSON(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	var av, bv any
	if len(a) == 0 || len(b) == 0 || json.Unmarshal(a, &av) != nil || json.Unmarshal(b, &bv) != nil {
		return false
	}
	return reflect.DeepEqual(av, bv)
}
