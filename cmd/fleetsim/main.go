// Command fleetsim runs fleet scenarios in the deterministic simulator: a fleet of
// Kubernetes clusters and systemd machines, what happens to it over time, and what must
// hold. Same file and seed, same answer, in seconds.
//
// Exit codes: 0 every expectation and invariant held; 1 some did not; 2 invalid input
// (the message names the file, line and field) or a failure to run.
package main

import (
	"errors"
	"fmt"
	"os"
)

// Exit codes, documented in --help.
const (
	exitOK      = 0
	exitFailed  = 1
	exitInvalid = 2
)

// exitError carries an exit code out of a command.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func main() {
	os.Exit(execute(os.Args[1:], os.Stdout, os.Stderr))
}

// execute runs the command line and returns the exit code; tests call it directly.
func execute(args []string, stdout, stderr *os.File) int {
	root := newRootCommand(stdout, stderr)
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			fmt.Fprintln(stderr, "fleetsim:", ee.err)
		}
		return ee.code
	}
	// Cobra's own errors: unknown flags, wrong argument counts.
	fmt.Fprintln(stderr, "fleetsim:", err)
	return exitInvalid
}
