// Package input reads the files a user hands fleetsim (scenarios, plans, templates, fuzz and
// plan shards) with a bound on their size, so an input that never ends (/dev/zero, a pipe
// left open, a runaway file) is refused with a message instead of filling memory.
package input
