// Package timing predicts what the production hub measures: the time from a placement's
// creation to its bindings made, its Works reported by the agents and Available, the hub's
// decisions and its writes by kind, for the workloads `fleet bench hub` runs.
//
// The model follows what prod/hub does, not a request count. A placement's first decision
// (policy snapshot, scheduler, rollout and work generator run inline) takes a worker, spends
// the hub's CPU per binding, then flushes in the hub's order — snapshots, bindings, Works,
// the bindings' statuses, the placement's status — flushParallelism writes at a time, each
// phase after the one before. Every write is served by the API server, modelled as a number
// of cores taking writes first come first served, each for its measured CPU cost by kind,
// plus a round trip that uses no core. A status write that lists clusters (a placement's
// per-cluster statuses, a policy snapshot's decisions: one for every member the scheduler
// saw, up to model/scheduler's limit) costs more the more it lists: its kind is measured at
// two sizes and charged along the line through them. The agents see a Work an informer delay after it is
// written, report after the report delay, and their report is a write too. Reports wake the
// placement's rollout after the hub's batching windows (20 ms for the last awaited report,
// 300 ms otherwise); that decision writes the reported bindings' statuses, then the
// placement's, and the placement is Available once a decision has fanned in every report.
// Members' heartbeats are a steady stream of status writes beside it. The bench's first
// placement comes when every member has joined; a placement the hub sees before it is warm
// after its start waits for it. A restarted hub lists each kind at its measured LIST cost
// for its size, then decides every placement again.
//
// Every constant is a field of a Calibration, with its unit and the measurement it came
// from; the reference calibration measured on the project's machine is embedded
// (reference.yaml, a copy of reports/calibration/reference.yaml) and `fleet bench hub
// --calibrate FILE` measures another machine's. The package has no dependency on the
// simulator or on the hub (only on model/scheduler's limit of decisions): it is the shared contract of both benchmark commands (their
// flags, Workload, and their output, Result) and the model between them.
package timing
