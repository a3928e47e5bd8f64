package timing

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
)

// Goal is the accuracy the model aims for: every p50 and p90 within ±20 % of the measurement.
const Goal = 0.20

// Figure is one figure predicted and measured, with the prediction's error relative to the
// measurement.
type Figure struct {
	Name      string  `json:"name"`
	Predicted float64 `json:"predicted"`
	Measured  float64 `json:"measured"`
	// Error is (predicted − measured) / measured; 0 when both are 0.
	Error float64 `json:"error"`
	// Within says whether a timing figure is within Goal (counts are only shown).
	Within bool `json:"within"`
	Timing bool `json:"timing"`
}

// Comparison is a prediction beside its measurement.
type Comparison struct {
	Predicted *Result  `json:"predicted"`
	Measured  *Result  `json:"measured"`
	Figures   []Figure `json:"figures"`
}

// Compare lines up the figures both give.
func Compare(pred, meas *Result) *Comparison {
	c := &Comparison{Predicted: pred, Measured: meas}
	add := func(name string, p, m float64, timing bool) {
		e := 0.0
		if m != 0 {
			e = (p - m) / m
		} else if p != 0 {
			e = math.Inf(1)
		}
		if math.IsInf(e, 0) {
			e = 99 // JSON has no infinity: a figure measured as zero is shown as missed
		}
		c.Figures = append(c.Figures, Figure{Name: name, Predicted: p, Measured: m, Error: math.Round(e*1000) / 1000,
			Within: math.Abs(e) <= Goal, Timing: timing})
	}
	add("Available p50 (s)", pred.Available.P50, meas.Available.P50, true)
	add("Available p90 (s)", pred.Available.P90, meas.Available.P90, true)
	for i, n := range StepNames {
		if i >= len(pred.Steps) || i >= len(meas.Steps) || n == StepBindingsMade {
			continue // made and bound are one step: bindings are created Bound
		}
		add(n+" p50 (s)", pred.Steps[i].Seconds.P50, meas.Steps[i].Seconds.P50, true)
		add(n+" p90 (s)", pred.Steps[i].Seconds.P90, meas.Steps[i].Seconds.P90, true)
	}
	if pred.RestartSeconds > 0 || meas.RestartSeconds > 0 {
		add("restart (s)", pred.RestartSeconds, meas.RestartSeconds, true)
	}
	add("decisions", pred.Decisions, meas.Decisions, false)
	for _, k := range []string{ctrlPlacementWide, ctrlRollout} {
		add("decisions "+k, pred.DecisionsByController[k], meas.DecisionsByController[k], false)
	}
	add("writes per binding", pred.WritesPerBinding, meas.WritesPerBinding, false)
	return c
}

// WriteComparison prints a comparison as a table.
func WriteComparison(w io.Writer, c *Comparison) {
	m := c.Measured
	fmt.Fprintf(w, "members %d, placements %d, pick %d, concurrent %d\n", m.Members, m.Placements, m.Pick, m.Concurrent)
	fmt.Fprintf(w, "%-42s %10s %10s %8s\n", "figure", "predicted", "measured", "error")
	for _, f := range c.Figures {
		mark := ""
		if f.Timing && !f.Within {
			mark = "  (outside ±20 %)"
		}
		fmt.Fprintf(w, "%-42s %10.2f %10.2f %7.0f%%%s\n", f.Name, f.Predicted, f.Measured, 100*f.Error, mark)
	}
}

// maxMeasurementBytes bounds a saved measurement: one Result, or a comparison holding two.
const maxMeasurementBytes = 16 << 20

// LoadMeasurement reads a measurement saved as JSON: a Result (a measurement's -o json) or
// a Comparison (--compare -o json), whose measured part it takes.
func LoadMeasurement(path string) (*Result, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--compare-with: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxMeasurementBytes+1))
	if err != nil {
		return nil, fmt.Errorf("--compare-with %s: %w", path, err)
	}
	if len(data) > maxMeasurementBytes {
		return nil, fmt.Errorf("--compare-with %s: larger than %d bytes", path, maxMeasurementBytes)
	}
	var probe struct {
		Measured json.RawMessage `json:"measured"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return nil, fmt.Errorf("--compare-with %s: not a measurement's JSON: %w", path, err)
	}
	if len(probe.Measured) > 0 {
		data = probe.Measured
	}
	var r Result
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("--compare-with %s: not a measurement's JSON: %w", path, err)
	}
	if r.Members == 0 {
		return nil, fmt.Errorf("--compare-with %s: no members in it: not a measurement's JSON", path)
	}
	return &r, nil
}
