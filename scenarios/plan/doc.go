// Package plan runs capacity plans: a scenario template swept over parameters (member
// count, placements, heartbeat period, rollout budgets, staged stages, failure rates, the
// hub's API latency and client rate limits), each point repeated over seeds. Every run is
// an ordinary deterministic simulation; measurements come from what the simulator records
// (placement and binding conditions, staged runs, member health, hub decisions, heartbeats,
// objects held). Statistics over seeds (quantiles with confidence intervals, fitted growth
// laws, knees) use gonum; plots use gonum/plot. `fleetsim plan` is the command.
//
// A plan's runs are independent, so a plan shards like a fuzz campaign: run i belongs to
// shard i mod N, and Merge combines the shards' results into one report, after checking
// them against the plan and each other.
//
// Every bound of a plan (its size, its points, a render's steps and bytes, samples per
// run, the hub model's numbers) is a constant of limits.go, so that a bad plan is refused
// by Parse, naming its file, line and field, instead of hanging or exhausting memory.
package plan
