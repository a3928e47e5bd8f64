// Package fuzz runs fuzz campaigns over scenarios: for each run it derives a seed, draws a
// random fault schedule (member crashes and partitions with their heals, taint and label
// churn, clock skew, hub restarts, workloads turning unavailable or failing to apply,
// members joining and leaving, evictions) on top of the scenario's own timeline, runs it
// with every `always` invariant checked after every event, and on a violation shrinks the
// schedule to the fewest faults and the earliest end that still fail, and renders it as an
// ordinary scenario file with the faults inline as timeline steps and the failed invariant
// as an `always` check. A campaign's runs do not render and parse their file: each target's
// file is parsed once and a run's fault steps are added to it in memory, with the lines the
// rendered file would give them (inmemory.go).
//
// Every run is a pure function of (campaign seed, run index): runs execute in parallel on
// goroutines, each single-threaded, and the reported failure is the one of the lowest run
// index, so the same seed always finds the same failure. Run i belongs to shard i mod N.
package fuzz
