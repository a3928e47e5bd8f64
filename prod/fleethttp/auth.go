package fleethttp

// Access: who a caller is (a client certificate, or a bearer token checked with a
// TokenReview) and whether it may act (a SubjectAccessReview on the fleet API group).
// Separate because it is the API server's RBAC, not fleet's, and every route goes
// through it. Both halves are k8s.io/apiserver's delegating authenticator and authorizer,
// the ones aggregated API servers and kubebuilder metrics endpoints use: they cache each
// review for a TTL, so a client that makes many requests costs the API server one review
// per TTL instead of one per request.

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/authenticatorfactory"
	authuser "k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	authenticationv1 "k8s.io/client-go/kubernetes/typed/authentication/v1"
	authorizationv1 "k8s.io/client-go/kubernetes/typed/authorization/v1"

	"github.com/fleetsim/fleetsim/apis/convert"
	fleetv1 "github.com/fleetsim/fleetsim/apis/fleet/v1alpha1"
)

// Default cache TTLs, those of k8s.io/apiserver's delegating options: short enough that a
// revoked token or a removed RoleBinding stops working within seconds, long enough that
// a client's burst of requests is reviewed once.
const (
	DefaultTokenCacheTTL = 10 * time.Second
	DefaultAllowCacheTTL = 10 * time.Second
	DefaultDenyCacheTTL  = 10 * time.Second
)

// AccessOptions configure Access.
type AccessOptions struct {
	// Authentication creates TokenReviews (a clientset's AuthenticationV1()); nil refuses
	// bearer tokens.
	Authentication authenticationv1.AuthenticationV1Interface
	// Authorization creates SubjectAccessReviews (a clientset's AuthorizationV1()); required.
	Authorization authorizationv1.AuthorizationV1Interface
	// ClientCA verifies client certificates (user = CN, groups = O); nil refuses them.
	// dynamiccertificates.NewDynamicCAContentFromFile reloads a file when it changes.
	ClientCA dynamiccertificates.CAContentProvider
	// TokenCacheTTL caches a TokenReview's answer, positive or negative (default
	// DefaultTokenCacheTTL).
	TokenCacheTTL time.Duration
	// AllowCacheTTL and DenyCacheTTL cache a SubjectAccessReview's allow and deny
	// (defaults DefaultAllowCacheTTL and DefaultDenyCacheTTL).
	AllowCacheTTL, DenyCacheTTL time.Duration
}

// Access authenticates and authorises the API's callers.
type Access struct {
	authn authenticator.Request
	authz authorizer.Authorizer
}

// reviewBackoff retries a review that failed to reach the API server (not a denial) a
// few times before the request fails with 500: the delegating factories' own default.
var reviewBackoff = wait.Backoff{Duration: 500 * time.Millisecond, Factor: 1.5, Jitter: 0.2, Steps: 5}

// NewAccess builds the delegating authenticator and authorizer.
func NewAccess(o AccessOptions) (*Access, error) {
	if o.Authorization == nil {
		return nil, errors.New("fleet API access: no SubjectAccessReview client")
	}
	if o.Authentication == nil && o.ClientCA == nil {
		return nil, errors.New("fleet API access: neither bearer tokens nor client certificates can authenticate anyone")
	}
	ttl := func(v, d time.Duration) time.Duration {
		if v <= 0 {
			return d
		}
		return v
	}
	b := reviewBackoff
	authn, _, err := authenticatorfactory.DelegatingAuthenticatorConfig{
		TokenAccessReviewClient:            o.Authentication,
		TokenAccessReviewTimeout:           10 * time.Second,
		WebhookRetryBackoff:                &b,
		CacheTTL:                           ttl(o.TokenCacheTTL, DefaultTokenCacheTTL),
		ClientCertificateCAContentProvider: o.ClientCA,
	}.New()
	if err != nil {
		return nil, fmt.Errorf("fleet API authenticator: %w", err)
	}
	authz, err := authorizerfactory.DelegatingAuthorizerConfig{
		SubjectAccessReviewClient: o.Authorization,
		AllowCacheTTL:             ttl(o.AllowCacheTTL, DefaultAllowCacheTTL),
		DenyCacheTTL:              ttl(o.DenyCacheTTL, DefaultDenyCacheTTL),
		WebhookRetryBackoff:       &b,
	}.New()
	if err != nil {
		return nil, fmt.Errorf("fleet API authorizer: %w", err)
	}
	return &Access{authn: authn, authz: authz}, nil
}

// user is an authenticated caller: its name, groups, UID and extra, as the authenticator
// found them and as the SubjectAccessReview sends them.
type user = authuser.Info

// anonymousUser is the caller when Server.Anonymous is set (tests only).
var anonymousUser user = &authuser.DefaultInfo{Name: "system:anonymous"}

// authenticate answers 401 to a caller no authenticator accepts, as kube-apiserver does,
// whether its credential was wrong or could not be reviewed (the reason is in the message).
func (s *Server) authenticate(w http.ResponseWriter, r *http.Request) (user, bool) {
	if s.Anonymous {
		return anonymousUser, true
	}
	why := ""
	if s.Access != nil {
		resp, ok, err := s.Access.authn.AuthenticateRequest(r)
		if ok && resp != nil && resp.User != nil {
			return resp.User, true
		}
		if err != nil {
			why = ": " + err.Error()
		}
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="fleet"`)
	writeError(w, http.StatusUnauthorized, "authentication required: a client certificate or a bearer token%s", why)
	return nil, false
}

func (s *Server) authorize(w http.ResponseWriter, r *http.Request, u user, verb, resource, name string) bool {
	if s.Anonymous {
		return true
	}
	if s.Access == nil {
		writeError(w, http.StatusForbidden, "%s may not %s %s: the fleet API has no authorizer", u.GetName(), verb, resource)
		return false
	}
	attrs := authorizer.AttributesRecord{User: u, Verb: verb, ResourceRequest: true,
		APIGroup: fleetv1.GroupVersion.Group, APIVersion: fleetv1.GroupVersion.Version, Resource: resource}
	if name != "" {
		attrs.Name = convert.UnitObjectName(name)
	}
	decision, reason, err := s.Access.authz.Authorize(r.Context(), attrs)
	if decision == authorizer.DecisionAllow {
		return true
	}
	if err != nil {
		writeError(w, http.StatusInternalServerError, "cannot check access: %v", err)
		return false
	}
	if reason != "" {
		writeError(w, http.StatusForbidden, "%s may not %s %s: %s", u.GetName(), verb, resource, reason)
	} else {
		writeError(w, http.StatusForbidden, "%s may not %s %s", u.GetName(), verb, resource)
	}
	return false
}
