package fleethttp

// The wire format (spec §5): the JSON entities and pages the API sends and takes, the
// error envelope, and the helpers that write them. Separate so the API's shape is read in
// one place, apart from the handlers that fill it.

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
)

// Error is the error envelope's body.
type Error struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

type errorEnvelope struct {
	Error Error `json:"error"`
}

func writeError(w http.ResponseWriter, code int, format string, args ...any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(errorEnvelope{Error{Code: code, Message: fmt.Sprintf(format, args...)}})
}

// MaxBodyBytes is the largest request body the API reads; a larger one is answered 413.
const MaxBodyBytes = 1 << 20

// decodeBody decodes the JSON body of r into v. If it cannot, it answers and returns false:
// 413 for a body over MaxBodyBytes, 408 for a body that does not arrive within the server's
// read timeout, 400 for anything else.
func decodeBody(w http.ResponseWriter, r *http.Request, v any) bool {
	err := json.NewDecoder(http.MaxBytesReader(w, r.Body, MaxBodyBytes)).Decode(v)
	var tooLarge *http.MaxBytesError
	var ne net.Error
	switch {
	case err == nil:
		return true
	case errors.As(err, &tooLarge):
		writeError(w, http.StatusRequestEntityTooLarge, "request body over the limit of %d bytes (1 MiB)", tooLarge.Limit)
	case errors.As(err, &ne) && ne.Timeout():
		writeError(w, http.StatusRequestTimeout, "request body not received within the read timeout")
	default:
		writeError(w, http.StatusBadRequest, "unable to decode body: %v", err)
	}
	return false
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// Wire types (spec §5).

// UnitOption is one option of a unit file.
type UnitOption struct {
	Section string `json:"section"`
	Name    string `json:"name"`
	Value   string `json:"value"`
}

// Unit is the API's unit entity.
type Unit struct {
	Name         string        `json:"name"`
	Options      []*UnitOption `json:"options"`
	DesiredState string        `json:"desiredState,omitempty"`
	CurrentState string        `json:"currentState,omitempty"`
	MachineID    string        `json:"machineID,omitempty"`
}

// UnitPage is a page of units.
type UnitPage struct {
	Units         []*Unit `json:"units,omitempty"`
	NextPageToken string  `json:"nextPageToken,omitempty"`
}

// Machine is the API's machine entity.
type Machine struct {
	ID        string            `json:"id"`
	PrimaryIP string            `json:"primaryIP"`
	Metadata  map[string]string `json:"metadata,omitempty"`
}

// MachinePage is a page of machines.
type MachinePage struct {
	Machines      []*Machine `json:"machines,omitempty"`
	NextPageToken string     `json:"nextPageToken,omitempty"`
}

// UnitState is the API's unit state entity.
type UnitState struct {
	Name               string `json:"name"`
	Hash               string `json:"hash"`
	MachineID          string `json:"machineID"`
	SystemdLoadState   string `json:"systemdLoadState"`
	SystemdActiveState string `json:"systemdActiveState"`
	SystemdSubState    string `json:"systemdSubState"`
}

// UnitStatePage is a page of unit states.
type UnitStatePage struct {
	States        []*UnitState `json:"states,omitempty"`
	NextPageToken string       `json:"nextPageToken,omitempty"`
}
