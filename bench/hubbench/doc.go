// Package hubbench measures the production hub on a real API server: `fleetsim bench hub`.
//
// It starts kube-apiserver and etcd from hack/test-assets.sh's cache (or uses the API
// server of a kubeconfig), runs the hub as its own process (`fleet hub`, so its CPU and
// memory are its own and it can be SIGKILLed), joins stand-in member agents
// (prod/testenv.StandInAgent, heartbeating every minute and reporting each Work applied
// and available after a delay), creates placements and times each from creation to
// ClusterResourcePlacementAvailable. It reports percentiles, the hub's API calls per
// decision (from its Prometheus metrics) and the CPU and memory of the hub, kube-apiserver
// and etcd. With Restart it then SIGKILLs the hub, starts a new one and times how long
// the new hub takes to decide every stored placement again until nothing changes.
package hubbench
