package hubbench

// The hub under measurement, as its own process (`fleet hub`) with its own metrics
// endpoint and kubeconfig, so its CPU and memory are its own and it can be SIGKILLed.

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// startHub runs the hub process with a metrics endpoint of its own.
func (b *bench) startHub() error {
	kc := filepath.Join(b.dir, "hub.kubeconfig")
	if err := writeKubeconfig(b.cfg, kc); err != nil {
		return err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	b.metrics = l.Addr().String()
	_ = l.Close()
	args := append(slices.Clone(b.o.HubCommand[1:]), "hub", "--kubeconfig", kc, "--leader-elect=false",
		"--metrics-bind-address", b.metrics, "--metrics-secure=false", "--health-probe-bind-address", "0", "--log-format", "text")
	args = append(args, b.o.HubFlags...)
	logf, err := os.Create(filepath.Join(os.TempDir(), "fleet-bench-hub.log"))
	if err != nil {
		return err
	}
	b.hub = exec.Command(b.o.HubCommand[0], args...)
	b.hub.Stdout, b.hub.Stderr = logf, logf
	if err := b.hub.Start(); err != nil {
		return fmt.Errorf("start the hub: %w", err)
	}
	b.log("hub started (pid %d), log in %s", b.hub.Process.Pid, logf.Name())
	return nil
}

// stopHub ends the hub: SIGKILL when kill, else SIGTERM.
func (b *bench) stopHub(kill bool) {
	if b.hub == nil || b.hub.Process == nil {
		return
	}
	sig := syscall.SIGTERM
	if kill {
		sig = syscall.SIGKILL
	}
	_ = b.hub.Process.Signal(sig)
	_, _ = b.hub.Process.Wait()
	b.hub = nil
}

// writeKubeconfig writes cfg (certificate or token auth) as a kubeconfig file.
func writeKubeconfig(cfg *rest.Config, path string) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["hub"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData, CertificateAuthority: cfg.CAFile}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData,
		ClientCertificate: cfg.CertFile, ClientKey: cfg.KeyFile, Token: cfg.BearerToken}
	kc.Contexts["hub"] = &clientcmdapi.Context{Cluster: "hub", AuthInfo: "admin"}
	kc.CurrentContext = "hub"
	return clientcmd.WriteToFile(*kc, path)
}
