// Package member is the I/O side of the Kubernetes member agent that `fleet member` runs:
// it joins the hub through the member's InternalMemberCluster, heartbeats with the member's
// properties and resource usage, applies the manifests of the Works in the member's
// reserved namespace to the member's API server as agentk8s.RunWork says, records what it
// owns in an AppliedWork per Work, reports Work status, and leaves when the hub asks.
// Every decision is agentk8s's; this package reads, writes and reports.
package member
