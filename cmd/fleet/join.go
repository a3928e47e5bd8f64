package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/fleetsim/fleetsim/apis"
	clusterv1beta1 "github.com/fleetsim/fleetsim/apis/cluster/v1beta1"
)

// joinOptions are what joining a member needs besides the two clusters' configurations.
type joinOptions struct {
	name            string
	hubURL          string // the hub's address as the member agent reaches it; "" means the hub config's
	namespace       string // on the hub, the member's ServiceAccount; on the member, its Secret and ConfigMap
	secretName      string
	configMapName   string
	tokenDuration   time.Duration
	heartbeatPeriod int32
	out             string // also write the hub kubeconfig here
}

// The names config/member reads: the Secret holding the member's hub kubeconfig and the
// ConfigMap holding its name.
const (
	defaultHubSecret    = "fleet-hub-kubeconfig"
	defaultMemberConfig = "fleet-member-config"
	memberNameKey       = "memberName"
	kubeconfigKey       = "kubeconfig"
)

func newJoinCommand(stdout io.Writer) *cobra.Command {
	o := joinOptions{}
	var hubKubeconfig, memberKubeconfig string
	cmd := &cobra.Command{
		Use:   "join",
		Short: "Join a member cluster to a hub: its MemberCluster, its identity and its hub kubeconfig",
		Long: `join does on two clusters what a member needs before its agent (fleet member, or
config/member) can run:

On the hub (--hub-kubeconfig, an administrator's): a ServiceAccount fleet-member-<name> in
--namespace as the member's identity, a token for it (TokenRequest API, valid for
--token-duration), and the MemberCluster <name> with that identity. The hub then makes the
reserved namespace fleet-member-<name> and the Role that confines the identity to it.

On the member (--member-kubeconfig): the namespace --namespace, the Secret
fleet-hub-kubeconfig holding a kubeconfig of the hub with the token, and the ConfigMap
fleet-member-config holding the member's name; config/member mounts the one and reads the
other.

The identity is a ServiceAccount token rather than a certificate from the
CertificateSigningRequest API: a token needs nothing but the API server (a CSR needs a
signer, the controller manager, which development hubs often lack), and deleting the
ServiceAccount revokes it at once. Run join again before the token expires to renew it.
Everything join writes is created or updated, so running it again is safe.`,
		Example: `  # Join member-1 (the member agent reaches the hub at the hub kubeconfig's address):
  fleet join --hub-kubeconfig ~/.kube/hub.yaml --member-kubeconfig ~/.kube/member-1.yaml --member-name member-1
  kubectl --kubeconfig ~/.kube/member-1.yaml apply -k config/member

  # The hub as the member's pods reach it, and a copy of the kubeconfig:
  fleet join --hub-kubeconfig hub.yaml --member-kubeconfig m1.yaml --member-name member-1 \
    --hub-url https://hub.example.com:6443 --out hub-member-1.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			quietClients()
			if o.name == "" {
				return invalid("--member-name is required")
			}
			if hubKubeconfig == "" || memberKubeconfig == "" {
				return invalid("--hub-kubeconfig and --member-kubeconfig are required")
			}
			hubCfg, err := loadConfig(hubKubeconfig)
			if err != nil {
				return invalid("hub kubeconfig: %w", err)
			}
			memberCfg, err := loadConfig(memberKubeconfig)
			if err != nil {
				return invalid("member kubeconfig: %w", err)
			}
			res, err := joinMember(cmd.Context(), hubCfg, memberCfg, o)
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "member %s joined: identity %s/%s on the hub (token until %s); Secret %s/%s and ConfigMap %s/%s on the member\n",
				o.name, res.Identity.Namespace, res.Identity.Name, res.Expires.UTC().Format(time.RFC3339),
				o.namespace, o.secretName, o.namespace, o.configMapName)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&hubKubeconfig, "hub-kubeconfig", "", "an administrator's kubeconfig of the hub (required)")
	f.StringVar(&memberKubeconfig, "member-kubeconfig", "", "an administrator's kubeconfig of the member cluster (required)")
	f.StringVar(&o.name, "member-name", "", "the member's name: its MemberCluster on the hub (required)")
	f.StringVar(&o.hubURL, "hub-url", "", "the hub's API server address as the member agent reaches it (default: the hub kubeconfig's)")
	f.StringVar(&o.namespace, "namespace", "fleet-system", "namespace of the member's ServiceAccount on the hub and of its Secret and ConfigMap on the member")
	f.StringVar(&o.secretName, "secret-name", defaultHubSecret, "name of the Secret on the member that holds the hub kubeconfig (key "+kubeconfigKey+")")
	f.StringVar(&o.configMapName, "configmap-name", defaultMemberConfig, "name of the ConfigMap on the member that holds the member's name (key "+memberNameKey+")")
	f.DurationVar(&o.tokenDuration, "token-duration", 365*24*time.Hour, "how long the member's token is valid (the API server may shorten it)")
	f.Int32Var(&o.heartbeatPeriod, "heartbeat-period-seconds", clusterv1beta1.DefaultHeartbeatPeriodSeconds, "the MemberCluster's heartbeat period")
	f.StringVar(&o.out, "out", "", "also write the member's hub kubeconfig to this file")
	return cmd
}

// joined is what joinMember made.
type joined struct {
	Identity   rbacv1.Subject
	Expires    time.Time
	Kubeconfig []byte
}

// joinMember makes the member's identity and MemberCluster on the hub and its hub
// kubeconfig on the member (see the join command's help).
func joinMember(ctx context.Context, hubCfg, memberCfg *rest.Config, o joinOptions) (*joined, error) {
	if errs := validation.IsDNS1123Label(o.name); len(errs) > 0 {
		return nil, invalid("--member-name %q: %v", o.name, errs)
	}
	if o.tokenDuration < 10*time.Minute {
		return nil, invalid("--token-duration %s: must be at least 10m (the TokenRequest API's minimum)", o.tokenDuration)
	}
	if o.heartbeatPeriod < clusterv1beta1.MinHeartbeatPeriodSeconds || o.heartbeatPeriod > clusterv1beta1.MaxHeartbeatPeriodSeconds {
		return nil, invalid("--heartbeat-period-seconds %d: must be from %d to %d", o.heartbeatPeriod, clusterv1beta1.MinHeartbeatPeriodSeconds, clusterv1beta1.MaxHeartbeatPeriodSeconds)
	}
	failed := func(format string, args ...any) error {
		return &exitError{code: exitFailed, err: fmt.Errorf(format, args...)}
	}
	scheme, err := fleetScheme()
	if err != nil {
		return nil, failed("%w", err)
	}
	hub, err := client.New(hubCfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, failed("hub client: %w", err)
	}
	member, err := client.New(memberCfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, failed("member client: %w", err)
	}
	hubCS, err := kubernetes.NewForConfig(hubCfg)
	if err != nil {
		return nil, failed("hub client: %w", err)
	}

	// The identity on the hub.
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "fleet-member-" + o.name, Namespace: o.namespace,
		Labels: map[string]string{"fleetsim.io/member-cluster": o.name}}}
	if err := ensureNamespace(ctx, hub, o.namespace); err != nil {
		return nil, failed("hub: %w", err)
	}
	if err := hub.Create(ctx, sa); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, failed("hub: ServiceAccount %s/%s: %w", sa.Namespace, sa.Name, err)
	}
	secs := int64(o.tokenDuration / time.Second)
	tr, err := hubCS.CoreV1().ServiceAccounts(o.namespace).CreateToken(ctx, sa.Name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &secs}}, metav1.CreateOptions{})
	if err != nil {
		return nil, failed("hub: token of ServiceAccount %s/%s: %w", sa.Namespace, sa.Name, err)
	}
	identity := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: sa.Name, Namespace: sa.Namespace}

	// The MemberCluster.
	mc := &clusterv1beta1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: o.name}}
	if _, err := controllerutil.CreateOrUpdate(ctx, hub, mc, func() error {
		mc.Spec.Identity = identity
		mc.Spec.HeartbeatPeriodSeconds = o.heartbeatPeriod
		return nil
	}); err != nil {
		return nil, failed("hub: MemberCluster %s: %w", o.name, err)
	}

	// The member's hub kubeconfig.
	kc, err := hubKubeconfig(hubCfg, o.hubURL, o.name, tr.Status.Token)
	if err != nil {
		return nil, failed("hub kubeconfig: %w", err)
	}
	if err := ensureNamespace(ctx, member, o.namespace); err != nil {
		return nil, failed("member: %w", err)
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: o.secretName, Namespace: o.namespace}}
	if _, err := controllerutil.CreateOrUpdate(ctx, member, secret, func() error {
		secret.Type = corev1.SecretTypeOpaque
		secret.Data = map[string][]byte{kubeconfigKey: kc}
		return nil
	}); err != nil {
		return nil, failed("member: Secret %s/%s: %w", o.namespace, o.secretName, err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: o.configMapName, Namespace: o.namespace}}
	if _, err := controllerutil.CreateOrUpdate(ctx, member, cm, func() error {
		cm.Data = map[string]string{memberNameKey: o.name}
		return nil
	}); err != nil {
		return nil, failed("member: ConfigMap %s/%s: %w", o.namespace, o.configMapName, err)
	}
	if o.out != "" {
		if err := os.WriteFile(o.out, kc, 0o600); err != nil {
			return nil, failed("--out: %w", err)
		}
	}
	return &joined{Identity: identity, Expires: tr.Status.ExpirationTimestamp.Time, Kubeconfig: kc}, nil
}

// hubKubeconfig is a kubeconfig of the hub at url (the hub config's host when empty) that
// trusts the hub config's CA and authenticates with token.
func hubKubeconfig(hubCfg *rest.Config, url, name, token string) ([]byte, error) {
	if url == "" {
		url = hubCfg.Host
	}
	ca := hubCfg.CAData
	if len(ca) == 0 && hubCfg.CAFile != "" {
		b, err := os.ReadFile(hubCfg.CAFile)
		if err != nil {
			return nil, fmt.Errorf("the hub's CA: %w", err)
		}
		ca = b
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["hub"] = &clientcmdapi.Cluster{Server: url, CertificateAuthorityData: ca, InsecureSkipTLSVerify: hubCfg.Insecure}
	kc.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: token}
	kc.Contexts["hub"] = &clientcmdapi.Context{Cluster: "hub", AuthInfo: name}
	kc.CurrentContext = "hub"
	return clientcmd.Write(*kc)
}

func ensureNamespace(ctx context.Context, c client.Client, name string) error {
	err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("namespace %s: %w", name, err)
	}
	return nil
}

// fleetScheme knows the built-in kinds and fleet's.
func fleetScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	return s, apis.AddToScheme(s)
}

// quietClients gives controller-runtime's clients a logger that drops everything: a
// one-shot command reports its own errors, and without one controller-runtime prints a
// warning with a stack trace on its first client.
func quietClients() { ctrl.SetLogger(logr.Discard()) }
