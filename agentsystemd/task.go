package agentsystemd

import (
	"fmt"
	"strings"

	"github.com/fleetsim/fleetsim/model/unitfile"
)

// TaskKind is what a task does. Its numeric order is the phase order of a Plan.
type TaskKind int

// The task kinds, in plan order.
const (
	// TaskStop stops a unit (systemd StopUnit, mode "replace").
	TaskStop TaskKind = iota + 1
	// TaskUnload disables the unit's runtime link, resets its failed state and removes its file.
	TaskUnload
	// TaskLoad writes the unit file and links it (runtime, forced).
	TaskLoad
	// TaskDaemonReload makes systemd re-read unit files (systemd Reload). It names no unit.
	TaskDaemonReload
	// TaskStart starts a unit (systemd StartUnit, mode "replace").
	TaskStart
)

var taskKindNames = [...]string{
	TaskStop:         "stop",
	TaskUnload:       "unload",
	TaskLoad:         "load",
	TaskDaemonReload: "daemon-reload",
	TaskStart:        "start",
}

// String returns the kind's name: stop, unload, load, daemon-reload or start.
func (k TaskKind) String() string {
	if k >= TaskStop && k <= TaskStart {
		return taskKindNames[k]
	}
	return fmt.Sprintf("TaskKind(%d)", int(k))
}

// Task is one step of a Plan.
type Task struct {
	Kind TaskKind
	// Unit is the unit's name; empty for TaskDaemonReload.
	Unit string
	// Reason says, for people, why the task is needed.
	Reason string
	// Hash is the content a TaskLoad writes; zero for other kinds.
	Hash unitfile.Hash
	// File is the content a TaskLoad writes, if the desired unit carried it; nil otherwise.
	File *unitfile.File
}

// String returns the kind and the unit, as in "start foo.service", or just "daemon-reload".
func (t Task) String() string {
	if t.Unit == "" {
		return t.Kind.String()
	}
	return t.Kind.String() + " " + t.Unit
}

// Plan is an ordered list of tasks; see the package documentation for the order.
// An empty plan means the machine has converged.
type Plan []Task

// String lists the tasks, as in "[stop a.service; unload a.service; daemon-reload]".
func (p Plan) String() string {
	parts := make([]string, len(p))
	for i, t := range p {
		parts[i] = t.String()
	}
	return "[" + strings.Join(parts, "; ") + "]"
}

// TaskError is the error of the task at which Apply stopped.
type TaskError struct {
	Task Task
	Err  error
}

// Error returns the task and its error, as in "start foo.service: unit is masked".
func (e *TaskError) Error() string { return e.Task.String() + ": " + e.Err.Error() }

// Unwrap returns the task's error.
func (e *TaskError) Unwrap() error { return e.Err }

// Apply runs the plan's tasks in order with run and stops at the first failure.
// done holds the tasks that succeeded, in order. If a task fails, err is a *TaskError for it
// and the tasks after it are not run; the next round's Decide plans them again from what
// systemd then reports.
func Apply(plan Plan, run func(Task) error) (done []Task, err error) {
	for i, t := range plan {
		if rerr := run(t); rerr != nil {
			return plan[:i:i], &TaskError{Task: t, Err: rerr}
		}
	}
	return plan[:len(plan):len(plan)], nil
}

// Systemd is what a reconcile round needs from a machine: the current state of the units the
// agent manages, and a way to run a task. SimSystemd implements it; so does the production
// D-Bus driver.
type Systemd interface {
	// Units returns the current state of the units the agent manages: every unit file in the
	// agent's unit directory and every unit systemd still reports for one of those names.
	Units() ([]CurrentUnit, error)
	// Run performs one task.
	Run(Task) error
}

// Reconcile runs one round: it reads the current units from sys, decides, and applies the
// plan. It returns the plan, the tasks done, and the first error.
func Reconcile(desired []DesiredUnit, sys Systemd) (plan Plan, done []Task, err error) {
	current, err := sys.Units()
	if err != nil {
		return nil, nil, fmt.Errorf("list units: %w", err)
	}
	plan = Decide(desired, current)
	done, err = Apply(plan, sys.Run)
	return plan, done, err
}
