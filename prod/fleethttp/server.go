package fleethttp

// The Server and its routes: configuration, defaults and the dispatch of each path and
// method under /fleet/v1 and /v1-alpha to its handler after authentication and
// authorisation. The handlers are one resource a file (units.go, machines.go, states.go);
// the wire format, access checks and pagination they share are wire.go, auth.go and
// page.go.

import (
	"io"
	"net/http"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// DefaultPageSize is fleet's token_limit.
const DefaultPageSize = 100

// Server serves the fleet API v1.
type Server struct {
	// Client writes Units and Machines.
	Client client.Client
	// Access authenticates and authorises callers (NewAccess); nil authenticates nobody.
	Access *Access
	// Reader reads Units and Machines (the API server directly, so a read follows a write).
	Reader client.Reader
	// MachineTTL decides which machines are alive (default units.DefaultMachineTTL).
	MachineTTL time.Duration
	// PageSize is the page size (default DefaultPageSize).
	PageSize int
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Anonymous, if set, skips authentication and authorisation (tests only).
	Anonymous bool
}

// Handler returns the API's HTTP handler, with every route under /fleet/v1 and /v1-alpha.
func (s *Server) Handler() http.Handler {
	return http.HandlerFunc(s.serve)
}

func (s *Server) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Server", "fleetd/fleetsim")
	p := r.URL.Path
	var rest string
	switch {
	case strings.HasPrefix(p, "/fleet/v1/") || p == "/fleet/v1":
		rest = strings.TrimPrefix(p, "/fleet/v1")
	case strings.HasPrefix(p, "/v1-alpha/") || p == "/v1-alpha":
		rest = strings.TrimPrefix(p, "/v1-alpha")
	default:
		writeError(w, http.StatusNotFound, "not found")
		return
	}
	user, ok := s.authenticate(w, r)
	if !ok {
		return
	}
	switch {
	case rest == "" || rest == "/":
		writeError(w, http.StatusMethodNotAllowed, "method not allowed")
	case rest == "/discovery" || rest == "/discovery.json":
		if r.Method != http.MethodGet {
			writeError(w, http.StatusBadRequest, "only GET is supported on the discovery document")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, discovery)
	case rest == "/machines":
		switch r.Method {
		case http.MethodGet:
			if s.authorize(w, r, user, "list", "machines", "") {
				s.listMachines(w, r)
			}
		case http.MethodPatch:
			if s.authorize(w, r, user, "patch", "machines", "") {
				s.patchMachines(w, r)
			}
		default:
			writeError(w, http.StatusMethodNotAllowed, "only GET and PATCH supported")
		}
	case rest == "/units":
		if r.Method != http.MethodGet {
			writeError(w, http.StatusMethodNotAllowed, "only GET supported")
			return
		}
		if s.authorize(w, r, user, "list", "units", "") {
			s.listUnits(w, r)
		}
	case strings.HasPrefix(rest, "/units/"):
		name := strings.TrimPrefix(rest, "/units/")
		if name == "" || strings.Contains(name, "/") {
			writeError(w, http.StatusNotFound, "not found")
			return
		}
		switch r.Method {
		case http.MethodGet:
			if s.authorize(w, r, user, "get", "units", name) {
				s.getUnit(w, r, name)
			}
		case http.MethodPut:
			s.putUnit(w, r, user, name) // authorised there: create or update, once it knows which
		case http.MethodDelete:
			if s.authorize(w, r, user, "delete", "units", name) {
				s.deleteUnit(w, r, name)
			}
		default:
			writeError(w, http.StatusMethodNotAllowed, "only GET, PUT and DELETE supported")
		}
	case rest == "/state":
		if r.Method != http.MethodGet {
			writeError(w, http.StatusMethodNotAllowed, "only GET supported")
			return
		}
		if s.authorize(w, r, user, "list", "machines", "") {
			s.listState(w, r)
		}
	case strings.HasPrefix(rest, "/state/"):
		name := strings.TrimPrefix(rest, "/state/")
		if name == "" || strings.Contains(name, "/") {
			writeError(w, http.StatusNotFound, "not found")
			return
		}
		if r.Method != http.MethodGet {
			writeError(w, http.StatusMethodNotAllowed, "only GET supported")
			return
		}
		if s.authorize(w, r, user, "list", "machines", "") {
			s.getState(w, r, name)
		}
	default:
		writeError(w, http.StatusNotFound, "not found")
	}
}
