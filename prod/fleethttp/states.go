package fleethttp

// The state resource: the unit states live machines report, listed with filters or got
// by unit name.

import (
	"context"
	"fmt"
	"net/http"
	"sort"

	"github.com/fleetsim/fleetsim/apis/convert"
	fleetv1 "github.com/fleetsim/fleetsim/apis/fleet/v1alpha1"
)

// states returns every unit state reported by a live machine, sorted by (name, machineID).
func (s *Server) states(ctx context.Context) ([]*UnitState, error) {
	var ml fleetv1.MachineList
	if err := s.Reader.List(ctx, &ml); err != nil {
		return nil, fmt.Errorf("list machines: %w", err)
	}
	var out []*UnitState
	for i := range ml.Items {
		m := &ml.Items[i]
		if !convert.MachineAlive(m, s.now(), s.MachineTTL) {
			continue // states expire with their machine
		}
		for _, st := range m.Status.Units {
			out = append(out, &UnitState{Name: st.Name, Hash: st.Hash, MachineID: m.Name,
				SystemdLoadState: st.LoadState, SystemdActiveState: st.ActiveState, SystemdSubState: st.SubState})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return out[i].MachineID < out[j].MachineID
	})
	return out, nil
}

func stateKey(st *UnitState) string { return st.Name + "\x00" + st.MachineID }

func (s *Server) listState(w http.ResponseWriter, r *http.Request) {
	after, err := s.pageStart(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	all, err := s.states(r.Context())
	if err != nil {
		writeError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	q := r.URL.Query()
	mid, uname := q.Get("machineID"), q.Get("unitName")
	var filtered []*UnitState
	for _, st := range all {
		if (mid == "" || st.MachineID == mid) && (uname == "" || st.Name == uname) {
			filtered = append(filtered, st)
		}
	}
	items, next := page(s, filtered, stateKey, after)
	writeJSON(w, http.StatusOK, UnitStatePage{States: items, NextPageToken: next})
}

func (s *Server) getState(w http.ResponseWriter, r *http.Request, name string) {
	all, err := s.states(r.Context())
	if err != nil {
		writeError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	for _, st := range all {
		if st.Name == name {
			writeJSON(w, http.StatusOK, st)
			return
		}
	}
	writeError(w, http.StatusNotFound, "unit state does not exist")
}
