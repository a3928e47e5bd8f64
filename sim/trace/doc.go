// Package trace owns the record of a simulation run: a 64-bit hash folded over every
// processed event (time, kind, subject, detail), and an optional JSON-lines log of the same
// events. Same scenario + same seed + same binary gives the same hash; CI checks it.
package trace
