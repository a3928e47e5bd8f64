// Package agentk8s owns the decision core of the member agent for Kubernetes clusters that
// the simulator and the production agent share: how the availability of each applied kind
// is judged (AVAIL-*), and how per-manifest apply and availability results become the
// Applied and Available conditions and failedPlacements that flow back to the hub.
// It performs no I/O; the production agent gathers objects from the member's API server,
// the simulator from scripted workload behaviour.
package agentk8s
