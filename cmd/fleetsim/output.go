package main

import (
	"encoding/json"
	"fmt"
	"io"

	"sigs.k8s.io/yaml"
)

// writeStructured writes v as indented JSON or as YAML for -o json and -o yaml, and
// nothing for text (the command printed its text already).
func writeStructured(w io.Writer, output string, v any) error {
	switch output {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		if err := enc.Encode(v); err != nil {
			return &exitError{code: exitInvalid, err: err}
		}
	case "yaml":
		b, err := yaml.Marshal(v)
		if err != nil {
			return &exitError{code: exitInvalid, err: err}
		}
		if _, err := w.Write(b); err != nil {
			return &exitError{code: exitInvalid, err: err}
		}
	}
	return nil
}

// errWriter remembers the first write error (a full disk, a closed pipe) so that a command
// can fail with exit 2 after printing, instead of losing its output silently; writes after
// an error are dropped.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	if err != nil {
		e.err = err
	}
	return n, err
}

// check returns the exit error for a failed write, or nil.
func (e *errWriter) check() error {
	if e.err == nil {
		return nil
	}
	return &exitError{code: exitInvalid, err: fmt.Errorf("writing the output: %w", e.err)}
}
