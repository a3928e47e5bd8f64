package webhook

import (
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// Paths the handlers are served on; config/webhook names the same.
const (
	PathOverrides = "/validate-overrides"
	PathBudgets   = "/validate-disruption-budgets"
	PathInternal  = "/validate-internal-objects"
)

// DefaultHubUser is the identity `fleet hub` runs as in a cluster (config/rbac).
const DefaultHubUser = "system:serviceaccount:fleet-system:fleet-hub"

// Options configures the webhook.
type Options struct {
	// HubUsers may write internal objects (the hub's own identity); default DefaultHubUser.
	HubUsers []string
}

// Register serves the handlers on srv. Reader must read fresh (the manager's API reader):
// the override rule compares with the overrides stored right now.
func Register(srv webhook.Server, reader client.Reader, decoder admission.Decoder, o Options) {
	if len(o.HubUsers) == 0 {
		o.HubUsers = []string{DefaultHubUser}
	}
	srv.Register(PathOverrides, &webhook.Admission{Handler: &overrides{reader: reader, decoder: decoder}})
	srv.Register(PathBudgets, &webhook.Admission{Handler: &budgets{decoder: decoder}})
	srv.Register(PathInternal, &webhook.Admission{Handler: &internal{reader: reader, hubUsers: o.HubUsers}})
}

// Setup adds a webhook server listening on port with the certificate tls.crt and key
// tls.key of certDir to mgr, and registers the handlers.
func Setup(mgr manager.Manager, port int, certDir string, o Options) error {
	srv := webhook.NewServer(webhook.Options{Port: port, CertDir: certDir})
	Register(srv, mgr.GetAPIReader(), admission.NewDecoder(mgr.GetScheme()), o)
	return mgr.Add(srv)
}
