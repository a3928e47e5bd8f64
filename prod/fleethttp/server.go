package fleethttp

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/fleetsim/fleetsim/apis/convert"
	"io"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetsim/fleetsim/agentsystemd"
	fleetv1 "github.com/fleetsim/fleetsim/apis/fleet/v1alpha1"
	"github.com/fleetsim/fleetsim/model/unitfile"
	"github.com/fleetsim/fleetsim/model/units"
)

// DefaultPageSize is fleet's token_limit.
const DefaultPageSize = 100

// Server serves the fleet API v1.
type Server struct {
	// Client writes Units and Machines and creates TokenReviews and SubjectAccessReviews.
	Client client.Client
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

// Handler returns the API's HTTP handler, with every route under /fleet/v1 and /v1-alpha.
func (s *Server) Handler() http.Handler {
	return http.HandlerFunc(s.serve)
}

func (s *Server) pageSize() int {
	if s.PageSize <= 0 || s.PageSize > 65535 {
		return DefaultPageSize
	}
	return s.PageSize
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

// user is an authenticated caller.
type user struct {
	name   string
	groups []string
	uid    string
	extra  map[string]authzv1.ExtraValue
}

func (s *Server) authenticate(w http.ResponseWriter, r *http.Request) (user, bool) {
	if s.Anonymous {
		return user{}, true
	}
	if r.TLS != nil && len(r.TLS.VerifiedChains) > 0 && len(r.TLS.VerifiedChains[0]) > 0 {
		c := r.TLS.VerifiedChains[0][0]
		if c.Subject.CommonName != "" {
			return user{name: c.Subject.CommonName, groups: c.Subject.Organization}, true
		}
	}
	auth := r.Header.Get("Authorization")
	if tok, ok := strings.CutPrefix(auth, "Bearer "); ok && strings.TrimSpace(tok) != "" {
		tr := &authnv1.TokenReview{Spec: authnv1.TokenReviewSpec{Token: strings.TrimSpace(tok)}}
		if err := s.Client.Create(r.Context(), tr); err != nil {
			writeError(w, http.StatusInternalServerError, "cannot review the token: %v", err)
			return user{}, false
		}
		if tr.Status.Authenticated {
			u := user{name: tr.Status.User.Username, groups: tr.Status.User.Groups, uid: tr.Status.User.UID}
			if len(tr.Status.User.Extra) > 0 {
				u.extra = map[string]authzv1.ExtraValue{}
				for k, v := range tr.Status.User.Extra {
					u.extra[k] = authzv1.ExtraValue(v)
				}
			}
			return u, true
		}
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="fleet"`)
	writeError(w, http.StatusUnauthorized, "authentication required: a client certificate or a bearer token")
	return user{}, false
}

func (s *Server) authorize(w http.ResponseWriter, r *http.Request, u user, verb, resource, name string) bool {
	if s.Anonymous {
		return true
	}
	sar := &authzv1.SubjectAccessReview{Spec: authzv1.SubjectAccessReviewSpec{
		User: u.name, Groups: u.groups, UID: u.uid, Extra: u.extra,
		ResourceAttributes: &authzv1.ResourceAttributes{Group: fleetv1.GroupVersion.Group, Version: fleetv1.GroupVersion.Version,
			Resource: resource, Verb: verb, Name: name},
	}}
	if name != "" {
		sar.Spec.ResourceAttributes.Name = convert.UnitObjectName(name)
	}
	if err := s.Client.Create(r.Context(), sar); err != nil {
		writeError(w, http.StatusInternalServerError, "cannot check access: %v", err)
		return false
	}
	if !sar.Status.Allowed {
		writeError(w, http.StatusForbidden, "%s may not %s %s", u.name, verb, resource)
		return false
	}
	return true
}

// Pagination: a token is base64url(limit uint16 LE | last key). Keyset, not offset.

func encodeToken(limit int, last string) string {
	b := make([]byte, 2, 2+len(last))
	binary.LittleEndian.PutUint16(b, uint16(limit))
	return base64.URLEncoding.EncodeToString(append(b, last...))
}

func (s *Server) pageStart(r *http.Request) (after string, err error) {
	q := r.URL.Query()["nextPageToken"]
	if len(q) == 0 {
		return "", nil
	}
	if len(q) > 1 {
		return "", errors.New("nextPageToken repeated")
	}
	b, err := base64.URLEncoding.DecodeString(q[0])
	if err != nil || len(b) < 3 {
		return "", errors.New("invalid nextPageToken")
	}
	if l := int(binary.LittleEndian.Uint16(b)); l != s.pageSize() {
		return "", fmt.Errorf("token limit must be %d", s.pageSize())
	}
	return string(b[2:]), nil
}

// page returns the items of sorted keys after `after`, at most one page, and the next token.
func page[T any](s *Server, items []T, key func(T) string, after string) ([]T, string) {
	i := sort.Search(len(items), func(i int) bool { return key(items[i]) > after })
	if after == "" {
		i = 0
	}
	end := min(i+s.pageSize(), len(items))
	out := items[i:end]
	if end < len(items) && len(out) > 0 {
		return out, encodeToken(s.pageSize(), key(out[len(out)-1]))
	}
	return out, ""
}

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

// toUnit converts a stored unit. currentState is what the machine the unit is scheduled to
// reports from systemd (inactive, loaded, launched or failed); inactive when unscheduled;
// empty for global units, which have no single machine.
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
				out.CurrentState = string(agentsystemd.UnitState{Hash: h, LoadState: st.LoadState, ActiveState: st.ActiveState}.State())
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
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&body); err != nil {
		writeError(w, http.StatusBadRequest, "unable to decode body: %v", err)
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
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&ops); err != nil {
		writeError(w, http.StatusBadRequest, "unable to decode body: %v", err)
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
