package local

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// StateFile is the state directory's record of a local fleet.
const StateFile = "state.json"

// State is what `up` started and wrote, for `status` and `down`.
type State struct {
	Dir string `json:"dir"`
	// Processes in start order; `down` stops them in reverse.
	Processes []Process `json:"processes"`
	// Clusters by name: "hub" and one per member.
	Clusters []Cluster `json:"clusters"`
	// Machines are the machine sandboxes (their state directories).
	Machines []string `json:"machines,omitempty"`
	// FleetAPI is the fleet API v1's URL, FleetctlEnv the file to source for fleetctl.
	FleetAPI    string `json:"fleetAPI,omitempty"`
	FleetctlEnv string `json:"fleetctlEnv,omitempty"`
}

// Cluster is one API server of the local fleet.
type Cluster struct {
	Name       string `json:"name"`
	URL        string `json:"url"`
	Kubeconfig string `json:"kubeconfig"`
	// Role is "hub" or "member".
	Role string `json:"role"`
}

// ErrNoState is returned by Load when the directory holds no local fleet.
var ErrNoState = errors.New("no local fleet")

// Load reads the state of dir.
func Load(dir string) (*State, error) {
	b, err := os.ReadFile(filepath.Join(dir, StateFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w (no %s)", dir, ErrNoState, StateFile)
	}
	if err != nil {
		return nil, err
	}
	s := &State{}
	if err := json.Unmarshal(b, s); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, StateFile), err)
	}
	return s, nil
}

// Save writes s into its directory, atomically, so an interrupted `up` leaves the last
// complete record of what it started.
func (s *State) Save() error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(s.Dir, StateFile+".tmp")
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(s.Dir, StateFile))
}

// Add records p and saves at once: a process is never running without a record.
func (s *State) Add(p Process) error {
	s.Processes = append(s.Processes, p)
	return s.Save()
}
