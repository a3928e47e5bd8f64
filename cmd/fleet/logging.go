package main

import (
	"io"

	"github.com/go-logr/logr"
	"go.uber.org/zap/zapcore"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// newLogger is the daemons' logger: JSON or text, at -v verbosity, with timestamps to the
// millisecond (decisions, writes and reports a few milliseconds apart are told apart).
func newLogger(w io.Writer, format string, verbosity int) logr.Logger {
	return zap.New(zap.WriteTo(w), zap.UseDevMode(format == "text"), zap.Level(zapcore.Level(-verbosity)),
		func(o *zap.Options) { o.TimeEncoder = zapcore.ISO8601TimeEncoder })
}
