package fleethttp

// The units resource: listing, getting, creating, updating the desired state of and
// deleting units, stored as fleet Unit objects; a unit's currentState comes from what
// its machine reports.

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetsim/fleetsim/agentsystemd"
	"github.com/fleetsim/fleetsim/apis/convert"
	fleetv1 "github.com/fleetsim/fleetsim/apis/fleet/v1alpha1"
	"github.com/fleetsim/fleetsim/model/unitfile"
	"github.com/fleetsim/fleetsim/model/units"
)

func (s *Server) listUnits(w http.ResponseWriter, r *http.Request) {
	after, err := s.pageStart(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	all, err := s.units(r.Context())
	if err != nil {
		writeError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	items, next := page(s, all, func(u *Unit) string { return u.Name }, after)
	writeJSON(w, http.StatusOK, UnitPage{Units: items, NextPageToken: next})
}

// units returns every unit as the API shows it, sorted by name.
func (s *Server) units(ctx context.Context) ([]*Unit, error) {
	var ul fleetv1.UnitList
	if err := s.Reader.List(ctx, &ul); err != nil {
		return nil, fmt.Errorf("list units: %w", err)
	}
	var ml fleetv1.MachineList
	if err := s.Reader.List(ctx, &ml); err != nil {
		return nil, fmt.Errorf("list machines: %w", err)
	}
	out := make([]*Unit, 0, len(ul.Items))
	for i := range ul.Items {
		out = append(out, s.toUnit(&ul.Items[i], ml.Items))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// toUnit converts a stored unit. currentState is fleet's: the state the agent of the machine
// the unit is scheduled to reports having acted on (inactive, loaded or launched; see
// agentsystemd.CurrentState), for the unit's present content; inactive when unscheduled or
// not reported; empty for global units, which have no single machine. systemd's own view is
// the state resource's.
func (s *Server) toUnit(u *fleetv1.Unit, machines []fleetv1.Machine) *Unit {
	out := &Unit{Name: u.Spec.Name, DesiredState: u.Spec.DesiredState, MachineID: u.Status.MachineID, Options: []*UnitOption{}}
	f, err := unitfile.Parse(u.Spec.File)
	if err == nil {
		for _, o := range f.Options() {
			out.Options = append(out.Options, &UnitOption{Section: o.Section, Name: o.Name, Value: o.Value})
		}
		if x, err := unitfile.ParseXFleet(f, u.Spec.Name); err == nil && x.Global {
			return out
		}
	}
	out.CurrentState = string(agentsystemd.CurrentInactive)
	if out.MachineID == "" || err != nil {
		return out
	}
	h := f.Hash()
	for i := range machines {
		m := &machines[i]
		if m.Name != out.MachineID || !convert.MachineAlive(m, s.now(), s.MachineTTL) {
			continue
		}
		for _, st := range m.Status.Units {
			if st.Name == u.Spec.Name && st.Hash == h.String() {
				out.CurrentState = string(agentsystemd.UnitState{Hash: h, LoadState: st.LoadState, ActiveState: st.ActiveState,
					Current: agentsystemd.CurrentState(st.State)}.State())
			}
		}
	}
	return out
}

func (s *Server) getUnit(w http.ResponseWriter, r *http.Request, name string) {
	u, err := s.getStored(r.Context(), name)
	if apierrors.IsNotFound(err) {
		writeError(w, http.StatusNotFound, "unit does not exist")
		return
	}
	if err != nil {
		writeError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	var ml fleetv1.MachineList
	if err := s.Reader.List(r.Context(), &ml); err != nil {
		writeError(w, http.StatusInternalServerError, "list machines: %v", err)
		return
	}
	writeJSON(w, http.StatusOK, s.toUnit(u, ml.Items))
}

func (s *Server) getStored(ctx context.Context, name string) (*fleetv1.Unit, error) {
	u := &fleetv1.Unit{}
	if err := s.Reader.Get(ctx, client.ObjectKey{Name: convert.UnitObjectName(name)}, u); err != nil {
		return nil, err
	}
	if u.Spec.Name != name {
		return nil, apierrors.NewNotFound(fleetv1.GroupVersion.WithResource("units").GroupResource(), name)
	}
	return u, nil
}

func (s *Server) putUnit(w http.ResponseWriter, r *http.Request, u user, name string) {
	if ct := r.Header.Values("Content-Type"); len(ct) != 1 || ct[0] != "application/json" {
		writeError(w, http.StatusUnsupportedMediaType, "Content-Type must be application/json")
		return
	}
	var body Unit
	if !decodeBody(w, r, &body) {
		return
	}
	if body.Name == "" {
		body.Name = name
	}
	if body.Name != name {
		writeError(w, http.StatusBadRequest, "name in URL %q differs from unit name in request body %q", name, body.Name)
		return
	}
	if err := unitfile.ValidateName(name); err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	ctx := r.Context()
	cur, err := s.getStored(ctx, name)
	if err != nil && !apierrors.IsNotFound(err) {
		writeError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	var file *unitfile.File
	if len(body.Options) > 0 {
		opts := make([]unitfile.UnitOption, 0, len(body.Options))
		for _, o := range body.Options {
			if o == nil {
				writeError(w, http.StatusBadRequest, "null unit option")
				return
			}
			opts = append(opts, unitfile.UnitOption{Section: o.Section, Name: o.Name, Value: o.Value})
		}
		file = unitfile.FromOptions(opts)
	}
	if cur == nil || (file != nil && cur.Spec.File != unitfile.Serialize(file)) {
		// Creating, or re-creating under new content (which deletes the old unit first).
		if !s.authorize(w, r, u, "create", "units", name) || (cur != nil && !s.authorize(w, r, u, "delete", "units", name)) {
			return
		}
		if file == nil {
			writeError(w, http.StatusConflict, "unit does not exist and options field empty")
			return
		}
		s.createUnit(w, r, name, file, body.DesiredState, cur)
		return
	}
	if !s.authorize(w, r, u, "update", "units", name) {
		return
	}
	if body.DesiredState == "" {
		writeError(w, http.StatusConflict, "must provide DesiredState to update existing unit")
		return
	}
	st, err := units.ParseState(body.DesiredState)
	if err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	if unitfile.IsTemplate(name) && st != units.StateInactive {
		writeError(w, http.StatusBadRequest, "template unit %s can only be inactive", name)
		return
	}
	for {
		if cur.Spec.DesiredState == string(st) {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		cur.Spec.DesiredState = string(st)
		err := s.Client.Update(ctx, cur)
		if apierrors.IsConflict(err) {
			if cur, err = s.getStored(ctx, name); err == nil {
				continue
			}
		}
		if err != nil {
			writeError(w, http.StatusInternalServerError, "update unit: %v", err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
		return
	}
}

func (s *Server) createUnit(w http.ResponseWriter, r *http.Request, name string, f *unitfile.File, desired string, old *fleetv1.Unit) {
	mu, err := units.New(name, f)
	if err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	if err := f.Validate(); err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	st := units.StateInactive
	if desired != "" {
		if st, err = units.ParseState(desired); err != nil {
			writeError(w, http.StatusBadRequest, "%v", err)
			return
		}
	}
	if mu.IsTemplate() && st != units.StateInactive {
		writeError(w, http.StatusBadRequest, "template unit %s can only be inactive", name)
		return
	}
	ctx := r.Context()
	if old != nil { // new content under an existing name: re-created, as upstream (--replace)
		if err := s.Client.Delete(ctx, old, client.Preconditions{UID: &old.UID}); err != nil && !apierrors.IsNotFound(err) {
			writeError(w, http.StatusInternalServerError, "replace unit: %v", err)
			return
		}
	}
	obj := &fleetv1.Unit{ObjectMeta: metav1.ObjectMeta{Name: convert.UnitObjectName(name)},
		Spec: fleetv1.UnitSpec{Name: name, File: unitfile.Serialize(f), DesiredState: string(st)}}
	for range 50 {
		err = s.Client.Create(ctx, obj)
		if !apierrors.IsAlreadyExists(err) || old == nil {
			break
		}
		time.Sleep(100 * time.Millisecond) // the old object is still being deleted
	}
	if apierrors.IsAlreadyExists(err) {
		writeError(w, http.StatusConflict, "unit %s was created concurrently", name)
		return
	}
	if apierrors.IsInvalid(err) {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	if err != nil {
		writeError(w, http.StatusInternalServerError, "create unit: %v", err)
		return
	}
	w.WriteHeader(http.StatusCreated)
}

func (s *Server) deleteUnit(w http.ResponseWriter, r *http.Request, name string) {
	u, err := s.getStored(r.Context(), name)
	if apierrors.IsNotFound(err) {
		writeError(w, http.StatusNotFound, "unit does not exist")
		return
	}
	if err == nil {
		err = s.Client.Delete(r.Context(), u)
	}
	if apierrors.IsNotFound(err) {
		writeError(w, http.StatusNotFound, "unit does not exist")
		return
	}
	if err != nil {
		writeError(w, http.StatusInternalServerError, "delete unit: %v", err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
