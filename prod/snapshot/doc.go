// Package snapshot captures a live hub as a scenario that starts in that state (`fleetsim
// snapshot`), reads a hub's bindings and Works in the form a what-if preview predicts them
// (scenarios/whatif.State), and applies a what-if change to a hub (`fleetsim whatif
// --verify`).
//
// Capturing uses list calls only and writes nothing. What a scenario cannot hold (snapshot
// history, staged runs' progress, executed evictions, member-side state) is listed in
// Snapshot.Missed rather than guessed.
package snapshot
