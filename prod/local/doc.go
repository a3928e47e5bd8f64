// Package local starts a fleet on one machine for a person to try: one etcd, a kube-apiserver
// per cluster (the hub's and each member's, each under its own etcd prefix), certificates
// made for them, and any further processes (the hub, the member agents, machine agents) as
// detached processes whose PIDs and start times are kept in a state directory, so that a
// later command finds and stops exactly them. It knows nothing of fleet's controllers: the
// caller says which commands to start.
package local
