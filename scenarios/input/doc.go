// Package input guards what fleetsim takes from users and prints back: it reads the files a
// user hands it (scenarios, plans, templates, fuzz and plan shards) with a bound on their
// size, so an input that never ends (/dev/zero, a pipe left open, a runaway file) is refused
// with a message instead of filling memory, and it makes text read from those files safe to
// print on a terminal (Printable).
package input
