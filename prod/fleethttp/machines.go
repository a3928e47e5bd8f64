package fleethttp

// The machines resource: the live machines, and JSON-patch edits of their metadata.

import (
	"encoding/json"
	"net/http"
	"regexp"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetsim/fleetsim/apis/convert"
	fleetv1 "github.com/fleetsim/fleetsim/apis/fleet/v1alpha1"
)

func (s *Server) listMachines(w http.ResponseWriter, r *http.Request) {
	after, err := s.pageStart(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	var ml fleetv1.MachineList
	if err := s.Reader.List(r.Context(), &ml); err != nil {
		writeError(w, http.StatusInternalServerError, "list machines: %v", err)
		return
	}
	var all []*Machine
	for i := range ml.Items {
		m := &ml.Items[i]
		if convert.MachineAlive(m, s.now(), s.MachineTTL) {
			all = append(all, &Machine{ID: m.Name, PrimaryIP: m.Status.PublicIP, Metadata: m.Spec.Metadata})
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].ID < all[j].ID })
	items, next := page(s, all, func(m *Machine) string { return m.ID }, after)
	writeJSON(w, http.StatusOK, MachinePage{Machines: items, NextPageToken: next})
}

var metadataKey = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

type patchOp struct {
	Op    string          `json:"op"`
	Path  string          `json:"path"`
	Value json.RawMessage `json:"value"`
}

func (p patchOp) value() (string, bool) {
	if len(p.Value) == 0 || string(p.Value) == "null" {
		return "", false
	}
	var s string
	if err := json.Unmarshal(p.Value, &s); err == nil {
		return s, true
	}
	var nested struct {
		Value *string `json:"value"`
	}
	if err := json.Unmarshal(p.Value, &nested); err == nil && nested.Value != nil {
		return *nested.Value, true
	}
	return "", false
}

func (s *Server) patchMachines(w http.ResponseWriter, r *http.Request) {
	var ops []patchOp
	if !decodeBody(w, r, &ops) {
		return
	}
	type edit struct {
		machine, key, value string
		remove              bool
	}
	var edits []edit
	for _, op := range ops {
		parts := strings.Split(op.Path, "/")
		if len(parts) != 4 || parts[0] != "" || parts[1] == "" || parts[2] != "metadata" || !metadataKey.MatchString(parts[3]) {
			writeError(w, http.StatusBadRequest, "invalid path %q: want /<machineID>/metadata/<key>", op.Path)
			return
		}
		if errs := validation.IsDNS1123Subdomain(parts[1]); len(errs) > 0 {
			writeError(w, http.StatusBadRequest, "invalid path %q: machine ID %q: %s", op.Path, parts[1], strings.Join(errs, "; "))
			return
		}
		e := edit{machine: parts[1], key: parts[3]}
		switch op.Op {
		case "add", "replace":
			v, ok := op.value()
			if !ok {
				writeError(w, http.StatusBadRequest, "missing value for %s %s", op.Op, op.Path)
				return
			}
			e.value = v
		case "remove":
			e.remove = true
		default:
			writeError(w, http.StatusBadRequest, "invalid op %q: want add, remove or replace", op.Op)
			return
		}
		edits = append(edits, e)
	}
	ctx := r.Context()
	for _, e := range edits {
		for {
			m := &fleetv1.Machine{}
			err := s.Reader.Get(ctx, client.ObjectKey{Name: e.machine}, m)
			if apierrors.IsNotFound(err) {
				if e.remove {
					break
				}
				// Machines that are not registered may be patched, as upstream.
				m = &fleetv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: e.machine}, Spec: fleetv1.MachineSpec{Metadata: map[string]string{e.key: e.value}}}
				err = s.Client.Create(ctx, m)
			} else if err == nil {
				if m.Spec.Metadata == nil {
					m.Spec.Metadata = map[string]string{}
				}
				if e.remove {
					delete(m.Spec.Metadata, e.key)
				} else {
					m.Spec.Metadata[e.key] = e.value
				}
				err = s.Client.Update(ctx, m)
			}
			if apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) {
				continue
			}
			if apierrors.IsInvalid(err) {
				writeError(w, http.StatusBadRequest, "%v", err)
				return
			}
			if err != nil {
				writeError(w, http.StatusInternalServerError, "patch machine %s: %v", e.machine, err)
				return
			}
			break
		}
	}
	writeJSON(w, http.StatusNoContent, nil)
}
