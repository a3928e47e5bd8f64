package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// Process is a started process as the state directory records it.
type Process struct {
	Name string   `json:"name"`
	PID  int      `json:"pid"`
	Args []string `json:"args"`
	Log  string   `json:"log"`
	// StartTicks is the process's start time (field 22 of /proc/PID/stat): a PID the kernel
	// has since given to another process has another start time, so Stop never signals
	// a stranger.
	StartTicks uint64 `json:"startTicks"`
}

// Start starts args as a process of its own session, with stdout and stderr appended to
// logFile, and does not wait for it: it outlives the command that started it, and Stop
// ends it by PID.
func Start(name, logFile string, args []string, env []string) (Process, error) {
	f, err := os.OpenFile(logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return Process{}, fmt.Errorf("%s: log file: %w", name, err)
	}
	defer f.Close()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return Process{}, fmt.Errorf("start %s (%s): %w", name, args[0], err)
	}
	p := Process{Name: name, PID: cmd.Process.Pid, Args: args, Log: logFile}
	p.StartTicks, _ = startTicks(p.PID)
	_ = cmd.Process.Release()
	return p, nil
}

// Alive reports whether p still runs: its PID exists with the recorded start time and is
// not a zombie.
func (p Process) Alive() bool {
	st, err := readStat(p.PID)
	if err != nil {
		return false
	}
	if p.StartTicks != 0 && st.ticks != p.StartTicks {
		return false // another process has the PID now
	}
	return st.state != "Z" && st.state != "X"
}

// Stop ends p: SIGTERM, then SIGKILL after grace, and waits until it is gone. A process
// that already ended is no error.
func (p Process) Stop(grace time.Duration) error {
	if !p.Alive() {
		reap(p.PID)
		return nil
	}
	if err := syscall.Kill(p.PID, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("stop %s (pid %d): %w", p.Name, p.PID, err)
	}
	if gone(p, grace) {
		return nil
	}
	if err := syscall.Kill(p.PID, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("kill %s (pid %d): %w", p.Name, p.PID, err)
	}
	if !gone(p, 10*time.Second) {
		return fmt.Errorf("%s (pid %d) still runs after SIGKILL", p.Name, p.PID)
	}
	return nil
}

// gone polls until p has ended, reaping it when it is a child of this process (a test
// that runs `up` and `down` in one process).
func gone(p Process, within time.Duration) bool {
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, within, true, func(_ context.Context) (bool, error) {
		reap(p.PID)
		return !p.Alive(), nil
	})
	return err == nil
}

// reap collects the exit status of pid if it is this process's child; otherwise nothing.
func reap(pid int) {
	var ws syscall.WaitStatus
	_, _ = syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
}

type stat struct {
	state string
	ticks uint64
}

// readStat reads the state and start time of pid from /proc (Linux).
func readStat(pid int) (stat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return stat{}, err
	}
	// The command name (field 2) may hold spaces and parentheses: fields follow the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return stat{}, fmt.Errorf("/proc/%d/stat: no command field", pid)
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return stat{}, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f)+2)
	}
	ticks, err := strconv.ParseUint(f[19], 10, 64) // field 22
	if err != nil {
		return stat{}, fmt.Errorf("/proc/%d/stat: start time: %w", pid, err)
	}
	return stat{state: f[0], ticks: ticks}, nil
}

func startTicks(pid int) (uint64, error) {
	st, err := readStat(pid)
	return st.ticks, err
}
