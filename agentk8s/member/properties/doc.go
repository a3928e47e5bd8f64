// Package properties holds the member agent's property providers: what `fleet member`
// reports on its InternalMemberCluster as the member's properties and resource usage, which
// the hub copies to the MemberCluster and the scheduler's property selectors and sorters read
// ([Properties and Resource Usage › Property provider]).
//
// A Provider is started once and asked to Collect on every heartbeat. Two ship with the
// agent, chosen by `fleet member --property-provider` (the table Providers):
//
//   - kubernetes (the default): node count, cpu and memory capacity, allocatable and
//     available summed over the nodes, and the Kubernetes version the API server reports;
//   - configurable: everything kubernetes reports, plus properties a user declares without
//     code: node labels mapped to properties, and the data of a ConfigMap on the member.
//
// Without a provider, or when it fails to start, the agent falls back to the kubernetes
// provider's node and resource figures (PROP-FALLBACK).
package properties
