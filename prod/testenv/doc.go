// Package testenv owns starting the real kube-apiserver and etcd that the production hub's
// integration tests run against (controller-runtime's envtest, with binaries that
// hack/test-assets.sh builds or installs), with fleetsim's CRDs installed.
package testenv
