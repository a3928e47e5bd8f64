// Package testenv owns starting the real kube-apiserver and etcd that the production hub's
// integration tests run against (controller-runtime's envtest, with binaries that
// hack/test-assets.sh builds or installs), with fleetsim's CRDs installed, and the stand-in
// member agent (StandInAgent) that plays a member in those tests: it heartbeats on its
// InternalMemberCluster and reports on the Works in its namespace as a real agent would.
package testenv
