package timing

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v3"
)

// Constant is one measured number of the model: its value, its unit and how it was obtained
// (the command, or the hub's source for a constant the hub's code fixes).
type Constant struct {
	Value  float64 `yaml:"value"`
	Unit   string  `yaml:"unit"`
	Source string  `yaml:"source"`
}

// Calibration holds every constant of the hub model for one machine.
type Calibration struct {
	// Machine, MeasuredAt and Load say where and when it was measured (Load: the load
	// average then, since a shared machine moves every figure).
	Machine    string    `yaml:"machine"`
	MeasuredAt string    `yaml:"measuredAt"`
	Load       string    `yaml:"load"`
	APIServer  APIServer `yaml:"apiServer"`
	Hub        Hub       `yaml:"hub"`
	Agent      Agent     `yaml:"agent"`
}

// APIServer is kube-apiserver with etcd as a service: Cores writes served at once, each for
// its CPU cost by kind, plus a round trip that takes no core.
type APIServer struct {
	// Cores: how many writes' worth of CPU the API server and etcd get at once (the CPU per
	// write times the writes per second at saturation).
	Cores Constant `yaml:"cores"`
	// RoundTrip: a write's time beyond its CPU with the server otherwise idle (client,
	// network, etcd's commit).
	RoundTrip Constant `yaml:"roundTrip"`
	// The CPU of kube-apiserver and etcd per write, by kind.
	BindingCreate  Constant `yaml:"bindingCreate"`
	BindingStatus  Constant `yaml:"bindingStatus"`
	WorkCreate     Constant `yaml:"workCreate"`
	WorkStatus     Constant `yaml:"workStatus"`
	SnapshotCreate Constant `yaml:"snapshotCreate"`
	// PlacementStatus: a placement's status write listing StatusClustersLarge clusters;
	// PlacementStatusSmall the same at StatusClustersSmall (StatusCost draws the line).
	PlacementStatus      Constant `yaml:"placementStatus"`
	PlacementStatusSmall Constant `yaml:"placementStatusSmall"`
	// PolicySnapshotStatus: the scheduler's status write on a policy snapshot, which holds
	// its cluster decisions (StatusClustersLarge of them; PolicySnapshotStatusSmall at
	// StatusClustersSmall).
	PolicySnapshotStatus      Constant `yaml:"policySnapshotStatus"`
	PolicySnapshotStatusSmall Constant `yaml:"policySnapshotStatusSmall"`
	// StatusClustersSmall and StatusClustersLarge: the two sizes, in clusters listed, the
	// status writes above were measured at (a file with one size has 1 and 1: flat costs).
	StatusClustersSmall Constant `yaml:"statusClustersSmall"`
	StatusClustersLarge Constant `yaml:"statusClustersLarge"`
	// HeartbeatWrite: one of a heartbeat's two status writes (the agent's on its
	// InternalMemberCluster, the hub's on the MemberCluster), their mean.
	HeartbeatWrite Constant `yaml:"heartbeatWrite"`
	// ListPerObject: a restarted hub's informers listing what is stored, per object, for
	// the kinds not listed on their own below (placements, members).
	ListPerObject Constant `yaml:"listPerObject"`
	// The LIST of one kind, per object, at two sizes (ListSmall and ListLarge objects): a
	// restarted hub's list phase charges each kind at its size (ListCost).
	ListSmall                 Constant `yaml:"listSmall"`
	ListLarge                 Constant `yaml:"listLarge"`
	ListBindingSmall          Constant `yaml:"listBindingSmall"`
	ListBindingLarge          Constant `yaml:"listBindingLarge"`
	ListWorkSmall             Constant `yaml:"listWorkSmall"`
	ListWorkLarge             Constant `yaml:"listWorkLarge"`
	ListPolicySnapshotSmall   Constant `yaml:"listPolicySnapshotSmall"`
	ListPolicySnapshotLarge   Constant `yaml:"listPolicySnapshotLarge"`
	ListResourceSnapshotSmall Constant `yaml:"listResourceSnapshotSmall"`
	ListResourceSnapshotLarge Constant `yaml:"listResourceSnapshotLarge"`
	// Watched: how much more CPU a write takes with the hub's, the agents' and the bench's
	// informers watching and the hub's reads, than in the write workload alone (the ratio of
	// kube-apiserver's and etcd's CPU per write in a hub run to the workload's).
	Watched Constant `yaml:"watched"`
}

// Hub is the production hub's side.
type Hub struct {
	// InformerDelay: from a write's answer to its watch event in another client's cache.
	InformerDelay Constant `yaml:"informerDelay"`
	// CPUPerBinding: the hub's decision time per binding a decision creates or fans in.
	CPUPerBinding Constant `yaml:"cpuPerBinding"`
	// CPUPerDecision: a decision's time beyond its bindings (reading its placement, deciding).
	CPUPerDecision Constant `yaml:"cpuPerDecision"`
	// FirstPlacement is read and ignored, so that calibrations written before WarmUp load:
	// the warm-up phase (WarmUp, JoinBase, JoinPerMember) replaced it.
	FirstPlacement *Constant `yaml:"firstPlacement,omitempty"`
	// WarmUp: from the hub's start to its placement controllers deciding at full speed (its
	// informers and caches started on first use); a placement created earlier waits for it.
	WarmUp Constant `yaml:"warmUp"`
	// JoinBase and JoinPerMember: from the hub's start to every member Joined and Healthy is
	// JoinBase + members × JoinPerMember; the bench creates its first placement then.
	JoinBase      Constant `yaml:"joinBase"`
	JoinPerMember Constant `yaml:"joinPerMember"`
	// StartDelay: a new hub's time from its start to listing (leader election, informers).
	StartDelay Constant `yaml:"startDelay"`
	// Constants of prod/hub's code: the writes of one flush phase in flight, and the
	// batching windows of members' reports.
	FlushParallelism Constant `yaml:"flushParallelism"`
	ReportBatchDelay Constant `yaml:"reportBatchDelay"`
	ReportWindow     Constant `yaml:"reportWindow"`
	AwaitLimit       Constant `yaml:"awaitLimit"`
}

// Agent is the member agents' side beyond the workload's report delay.
type Agent struct {
	// PollInterval: the bench's poll of a placement's status (prod's stand-in agents and the
	// bench see objects through watches; the bench checks Available this often).
	PollInterval Constant `yaml:"pollInterval"`
}

// field is one entry of the calibration's table: its path, where it is, its unit and range,
// and for a constant added after the file format's first version, the constant a file
// without it borrows the value of (so that older calibration files still load).
type field struct {
	name     string
	c        *Constant
	unit     string
	min, max float64
	// later: added after the format's first version; borrow: the constant whose value a
	// file without it takes ("" for the fallback of fillAbsent).
	later  bool
	borrow string
}

// fields is the table every constant of a calibration is checked and read by.
func (c *Calibration) fields() []field {
	a, h := &c.APIServer, &c.Hub
	ms := func(name string, k *Constant, max float64) field {
		return field{name: name, c: k, unit: "ms", max: max}
	}
	later := func(f field, borrow string) field { f.later, f.borrow = true, borrow; return f }
	objects := func(name string, k *Constant) field {
		return field{name: name, c: k, unit: "objects", min: 1, max: 100_000_000}
	}
	clusters := func(name string, k *Constant) field {
		return field{name: name, c: k, unit: "clusters", min: 1, max: 100_000_000}
	}
	return []field{
		{name: "apiServer.cores", c: &a.Cores, unit: "cores", min: 0.01, max: 10_000},
		ms("apiServer.roundTrip", &a.RoundTrip, 60_000),
		ms("apiServer.bindingCreate", &a.BindingCreate, 60_000),
		ms("apiServer.bindingStatus", &a.BindingStatus, 60_000),
		ms("apiServer.workCreate", &a.WorkCreate, 60_000),
		ms("apiServer.workStatus", &a.WorkStatus, 60_000),
		ms("apiServer.snapshotCreate", &a.SnapshotCreate, 60_000),
		ms("apiServer.placementStatus", &a.PlacementStatus, 60_000),
		later(ms("apiServer.policySnapshotStatus", &a.PolicySnapshotStatus, 60_000), "apiServer.placementStatus"),
		later(ms("apiServer.placementStatusSmall", &a.PlacementStatusSmall, 60_000), "apiServer.placementStatus"),
		later(ms("apiServer.policySnapshotStatusSmall", &a.PolicySnapshotStatusSmall, 60_000), "apiServer.policySnapshotStatus"),
		later(clusters("apiServer.statusClustersSmall", &a.StatusClustersSmall), ""),
		later(clusters("apiServer.statusClustersLarge", &a.StatusClustersLarge), ""),
		ms("apiServer.heartbeatWrite", &a.HeartbeatWrite, 60_000),
		ms("apiServer.listPerObject", &a.ListPerObject, 60_000),
		later(objects("apiServer.listSmall", &a.ListSmall), ""),
		later(objects("apiServer.listLarge", &a.ListLarge), ""),
		later(ms("apiServer.listBindingSmall", &a.ListBindingSmall, 60_000), "apiServer.listPerObject"),
		later(ms("apiServer.listBindingLarge", &a.ListBindingLarge, 60_000), "apiServer.listPerObject"),
		later(ms("apiServer.listWorkSmall", &a.ListWorkSmall, 60_000), "apiServer.listPerObject"),
		later(ms("apiServer.listWorkLarge", &a.ListWorkLarge, 60_000), "apiServer.listPerObject"),
		later(ms("apiServer.listPolicySnapshotSmall", &a.ListPolicySnapshotSmall, 60_000), "apiServer.listPerObject"),
		later(ms("apiServer.listPolicySnapshotLarge", &a.ListPolicySnapshotLarge, 60_000), "apiServer.listPerObject"),
		later(ms("apiServer.listResourceSnapshotSmall", &a.ListResourceSnapshotSmall, 60_000), "apiServer.listPerObject"),
		later(ms("apiServer.listResourceSnapshotLarge", &a.ListResourceSnapshotLarge, 60_000), "apiServer.listPerObject"),
		{name: "apiServer.watched", c: &a.Watched, unit: "ratio", min: 0.1, max: 100},
		ms("hub.informerDelay", &h.InformerDelay, 60_000),
		ms("hub.cpuPerBinding", &h.CPUPerBinding, 60_000),
		ms("hub.cpuPerDecision", &h.CPUPerDecision, 60_000),
		later(ms("hub.warmUp", &h.WarmUp, 3_600_000), ""),
		later(ms("hub.joinBase", &h.JoinBase, 3_600_000), ""),
		later(ms("hub.joinPerMember", &h.JoinPerMember, 600_000), ""),
		ms("hub.startDelay", &h.StartDelay, 3_600_000),
		{name: "hub.flushParallelism", c: &h.FlushParallelism, unit: "writes", min: 1, max: 10_000},
		ms("hub.reportBatchDelay", &h.ReportBatchDelay, 60_000),
		ms("hub.reportWindow", &h.ReportWindow, 60_000),
		ms("hub.awaitLimit", &h.AwaitLimit, 3_600_000),
		ms("agent.pollInterval", &c.Agent.PollInterval, 60_000),
	}
}

// Validate checks every constant: present with a source, in its unit and range.
func (c *Calibration) Validate() error {
	var errs []error
	for _, f := range c.fields() {
		switch {
		case f.c.Unit != f.unit:
			errs = append(errs, fmt.Errorf("%s: unit %q, want %q", f.name, f.c.Unit, f.unit))
		case math.IsNaN(f.c.Value) || f.c.Value < f.min || f.c.Value > f.max:
			errs = append(errs, fmt.Errorf("%s: %v %s is outside [%v, %v]", f.name, f.c.Value, f.unit, f.min, f.max))
		case f.c.Source == "":
			errs = append(errs, fmt.Errorf("%s: no source: say which command or code it comes from", f.name))
		}
	}
	return errors.Join(errs...)
}

// Set sets the constant named by its path (apiServer.cores, hub.cpuPerBinding...) to v in
// its own unit, as a plan's sweep does, and reports whether the name is one.
func (c *Calibration) Set(name string, v float64, source string) error {
	for _, f := range c.fields() {
		if f.name == name {
			if math.IsNaN(v) || v < f.min || v > f.max {
				return fmt.Errorf("%s: %v %s is outside [%v, %v]", name, v, f.unit, f.min, f.max)
			}
			f.c.Value, f.c.Source = v, source
			return nil
		}
	}
	return fmt.Errorf("%q is not a constant of the calibration (want one of %v)", name, Names())
}

// Names lists the calibration's constants by path, in the file's order.
func Names() []string {
	var c Calibration
	var out []string
	for _, f := range c.fields() {
		out = append(out, f.name)
	}
	return out
}

// ms is a constant in milliseconds as a duration.
func ms(c Constant) time.Duration { return time.Duration(c.Value * float64(time.Millisecond)) }

//go:embed reference.yaml
var reference []byte

// Reference is the calibration measured on the project's reference machine (the copy of
// reports/calibration/reference.yaml embedded in the binaries).
func Reference() *Calibration {
	c, err := Parse("reference.yaml", reference)
	if err != nil {
		panic(err) // TestReferenceCalibration keeps the embedded file valid
	}
	return c
}

// LoadWith is Load, then the NAME=VALUE overrides of sets (--set), in order.
func LoadWith(path string, sets []string) (*Calibration, error) {
	c, err := Load(path)
	if err != nil {
		return nil, err
	}
	for _, s := range sets {
		name, val, ok := strings.Cut(s, "=")
		v, perr := strconv.ParseFloat(val, 64)
		if !ok || perr != nil {
			return nil, fmt.Errorf("--set %q: want NAME=NUMBER, such as apiServer.cores=4", s)
		}
		if err := c.Set(name, v, "--set "+s); err != nil {
			return nil, fmt.Errorf("--set: %w", err)
		}
	}
	return c, nil
}

// Parse reads a calibration; name is its file, for the errors.
func Parse(name string, data []byte) (*Calibration, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var c Calibration
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	c.fillAbsent(name)
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &c, nil
}

// fillAbsent gives the constants a file written before they existed lacks (no unit, no
// source) the value of the constant they borrow, saying so in their source: such a
// calibration predicts as it did before. Without a constant to borrow, the warm-up is the
// file's hub.firstPlacement after a join of no time, as that constant was charged, and the
// LIST sizes are one object (every kind's cost per object then is one figure), and the
// status sizes one cluster (every status write of a kind then costs one figure).
func (c *Calibration) fillAbsent(file string) {
	byName := map[string]*Constant{}
	for _, f := range c.fields() {
		byName[f.name] = f.c
	}
	for _, f := range c.fields() {
		if !f.later || f.c.Unit != "" || f.c.Source != "" || f.c.Value != 0 {
			continue
		}
		src := fmt.Sprintf("absent from %s (written before %s existed): ", file, f.name)
		switch {
		case f.borrow != "":
			*f.c = Constant{Value: byName[f.borrow].Value, Unit: f.unit, Source: src + "borrowed from " + f.borrow}
		case f.name == "hub.warmUp" && c.Hub.FirstPlacement != nil:
			*f.c = Constant{Value: c.Hub.FirstPlacement.Value, Unit: f.unit, Source: src + "the file's hub.firstPlacement"}
		case f.unit == "objects":
			*f.c = Constant{Value: 1, Unit: f.unit, Source: src + "one size: the list cost per object does not move with it"}
		case f.unit == "clusters":
			*f.c = Constant{Value: 1, Unit: f.unit, Source: src + "one size: a status write's cost does not move with the clusters it lists"}
		default:
			*f.c = Constant{Value: 0, Unit: f.unit, Source: src + "none"}
		}
	}
}

// maxFileBytes bounds a calibration file: a few dozen constants with their sources.
const maxFileBytes = 1 << 20

// Load reads a calibration file, or the reference one for "" or "reference".
func Load(path string) (*Calibration, error) {
	if path == "" || path == "reference" {
		return Reference(), nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("calibration: %w", err)
	}
	defer f.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(io.LimitReader(f, maxFileBytes+1)); err != nil {
		return nil, fmt.Errorf("calibration %s: %w", path, err)
	}
	if buf.Len() > maxFileBytes {
		return nil, fmt.Errorf("calibration %s: larger than %d bytes", path, maxFileBytes)
	}
	return Parse(path, buf.Bytes())
}

// Marshal writes c as YAML under a header saying what the file is.
func (c *Calibration) Marshal() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString("# The hub model's calibration (sim/timing): every constant with its unit and the\n" +
		"# measurement or code it comes from. Written by `fleet bench hub --calibrate FILE`.\n")
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(c); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
