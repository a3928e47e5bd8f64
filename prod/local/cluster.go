package local

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// FreePort is a TCP port on 127.0.0.1 nobody listens on now.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// StartEtcd starts etcd from assets with its data in dir and returns its client URL.
func StartEtcd(assets, dir string) (Process, string, error) {
	client, err := FreePort()
	if err != nil {
		return Process{}, "", err
	}
	peer, err := FreePort()
	if err != nil {
		return Process{}, "", err
	}
	url := "http://127.0.0.1:" + strconv.Itoa(client)
	peerURL := "http://127.0.0.1:" + strconv.Itoa(peer)
	args := []string{filepath.Join(assets, "etcd"), "--name", "local", "--data-dir", filepath.Join(dir, "etcd"),
		"--listen-client-urls", url, "--advertise-client-urls", url,
		"--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL, "--initial-cluster", "local=" + peerURL}
	p, err := Start("etcd", filepath.Join(dir, "etcd.log"), args, []string{"ETCD_UNSUPPORTED_ARCH=" + os.Getenv("ETCD_UNSUPPORTED_ARCH")})
	if err != nil {
		return Process{}, "", err
	}
	err = waitFor(p, 2*time.Minute, func(ctx context.Context) error {
		c := &net.Dialer{Timeout: time.Second}
		conn, err := c.DialContext(ctx, "tcp", strings.TrimPrefix(url, "http://"))
		if err == nil {
			conn.Close()
		}
		return err
	})
	return p, url, err
}

// APIServer is a started kube-apiserver and an administrator's kubeconfig of it.
type APIServer struct {
	Process    Process
	URL        string
	Kubeconfig string
	Config     *rest.Config
}

// StartAPIServer starts the kube-apiserver of cluster name from assets on etcd, under the
// etcd prefix /name, in dir (made here): a serving certificate and the administrator's
// client certificate (system:masters) from ca, a service-account signing key (so that the
// TokenRequest API works without a controller manager), RBAC authorization. It writes
// dir/admin.kubeconfig and waits until /readyz answers.
func StartAPIServer(assets, dir, name, etcd string, ca *CA) (*APIServer, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	serving, err := ca.Serving(dir, "apiserver")
	if err != nil {
		return nil, err
	}
	admin, err := ca.Client(dir, "admin", "admin", "system:masters")
	if err != nil {
		return nil, err
	}
	saKey, err := ServiceAccountKey(dir)
	if err != nil {
		return nil, err
	}
	url := "https://127.0.0.1:" + strconv.Itoa(port)
	args := []string{filepath.Join(assets, "kube-apiserver"),
		"--etcd-servers", etcd, "--etcd-prefix", "/" + name,
		"--bind-address", "127.0.0.1", "--secure-port", strconv.Itoa(port),
		"--tls-cert-file", serving.CertFile, "--tls-private-key-file", serving.KeyFile, "--client-ca-file", ca.CertFile,
		"--service-account-issuer", url, "--service-account-key-file", saKey, "--service-account-signing-key-file", saKey,
		"--service-cluster-ip-range", "10.0.0.0/24", "--authorization-mode", "RBAC", "--allow-privileged=true",
		// No controller manager runs: the ServiceAccount admission plugin would wait for
		// default ServiceAccounts nothing makes.
		"--disable-admission-plugins", "ServiceAccount",
		// The default reconciler refuses a loopback address for the kubernetes Service;
		// nothing in a local fleet reaches the API server through it.
		"--endpoint-reconciler-type", "none",
	}
	p, err := Start(name+"-apiserver", filepath.Join(dir, "apiserver.log"), args, nil)
	if err != nil {
		return nil, err
	}
	s := &APIServer{Process: p, URL: url, Kubeconfig: filepath.Join(dir, "admin.kubeconfig"),
		Config: &rest.Config{Host: url, TLSClientConfig: rest.TLSClientConfig{CAFile: ca.CertFile, CertFile: admin.CertFile, KeyFile: admin.KeyFile}}}
	if err := WriteKubeconfig(s.Kubeconfig, name, url, ca.CertFile, &clientcmdapi.AuthInfo{ClientCertificate: admin.CertFile, ClientKey: admin.KeyFile}); err != nil {
		return s, err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(s.Config)
	if err != nil {
		return s, err
	}
	rc := dc.RESTClient()
	err = waitFor(p, 3*time.Minute, func(ctx context.Context) error {
		return rc.Get().AbsPath("/readyz").Do(ctx).Error()
	})
	return s, err
}

// WriteKubeconfig writes a kubeconfig for server (trusting the CA in caFile, embedded) with
// user's credentials (files are embedded), so the file stands alone.
func WriteKubeconfig(path, name, server, caFile string, user *clientcmdapi.AuthInfo) error {
	caData, err := os.ReadFile(caFile)
	if err != nil {
		return err
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters[name] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: caData}
	kc.AuthInfos[name] = user
	kc.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	kc.CurrentContext = name
	if err := clientcmdapi.FlattenConfig(kc); err != nil {
		return err
	}
	return clientcmd.WriteToFile(*kc, path)
}

// waitFor calls ready until it succeeds, p has exited (an error with the end of its log)
// or within has passed.
func waitFor(p Process, within time.Duration, ready func(context.Context) error) error {
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, within, true, func(ctx context.Context) (bool, error) {
		if !p.Alive() {
			return false, fmt.Errorf("%s exited; the end of %s:\n%s", p.Name, p.Log, Tail(p.Log, 15))
		}
		tctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		last = ready(tctx)
		return last == nil, nil
	})
	if err != nil && last != nil && p.Alive() {
		return fmt.Errorf("%s not ready after %s: %w (log: %s)", p.Name, within, last, p.Log)
	}
	return err
}

// Tail is the last n lines of file, for error messages.
func Tail(file string, n int) string {
	b, err := os.ReadFile(file)
	if err != nil {
		return "(" + err.Error() + ")"
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
