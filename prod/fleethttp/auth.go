package fleethttp

// Access: who a caller is (a client certificate, or a bearer token checked with a
// TokenReview) and whether it may act (a SubjectAccessReview on the fleet API group).
// Separate because it is the API server's RBAC, not fleet's, and every route goes
// through it.

import (
	"net/http"
	"strings"

	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"

	"github.com/fleetsim/fleetsim/apis/convert"
	fleetv1 "github.com/fleetsim/fleetsim/apis/fleet/v1alpha1"
)

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
