package hubbench

// CPU and memory of the hub, kube-apiserver and etcd, read from /proc. Separate because
// it is Linux process accounting, nothing of fleet; BenchmarkAPIServerWrites uses it too.

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

type sample struct {
	cpu float64 // seconds
	rss float64 // MiB
}

// usage samples the hub, and the kube-apiserver and etcd this process started.
func (b *bench) usage() map[string]sample {
	out := map[string]sample{}
	if b.hub != nil && b.hub.Process != nil {
		if s, ok := procSample(b.hub.Process.Pid); ok {
			out["hub"] = s
		}
	}
	if b.env == nil {
		return out
	}
	for comm, pid := range childServers(os.Getpid()) {
		if s, ok := procSample(pid); ok {
			out[comm] = s
		}
	}
	return out
}

// childServers finds the kube-apiserver and etcd that process parent started, by command.
func childServers(parent int) map[string]int {
	out := map[string]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		comm, rest, ok := splitStat(string(stat))
		if !ok || len(rest) < 2 {
			continue
		}
		if ppid, _ := strconv.Atoi(rest[1]); ppid == parent && (comm == "kube-apiserver" || comm == "etcd") {
			out[comm] = pid
		}
	}
	return out
}

// splitStat splits /proc/PID/stat into the command and the fields after it.
func splitStat(s string) (string, []string, bool) {
	i, j := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if i < 0 || j < i {
		return "", nil, false
	}
	return s[i+1 : j], strings.Fields(s[j+1:]), true
}

const clockTicks = 100 // USER_HZ on Linux

func procSample(pid int) (sample, bool) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return sample{}, false
	}
	_, f, ok := splitStat(string(stat))
	if !ok || len(f) < 13 {
		return sample{}, false
	}
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	s := sample{cpu: (ut + st) / clockTicks}
	if status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid)); err == nil {
		for _, line := range strings.Split(string(status), "\n") {
			if strings.HasPrefix(line, "VmRSS:") {
				if kb, err := strconv.ParseFloat(strings.Fields(line)[1], 64); err == nil {
					s.rss = kb / 1024
				}
			}
		}
	}
	return s, true
}

func diff(a, b sample, span time.Duration) Usage {
	cpu := b.cpu - a.cpu
	return Usage{CPUSeconds: round(cpu), CPUPercent: round(100 * cpu / span.Seconds()), RSSMiB: round(b.rss)}
}
