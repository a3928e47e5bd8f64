package plan

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

func sortedSamples(n int, seed uint64, draw func(r *rand.Rand) float64) []float64 {
	r := rand.New(rand.NewPCG(seed*0x9e3779b97f4a7c15+1, seed^0x5851f42d4c957f2d))
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = draw(r)
	}
	sort.Float64s(xs)
	return xs
}

func TestQuantilesOfKnownDistributions(t *testing.T) {
	uniform := sortedSamples(20000, 1, func(r *rand.Rand) float64 { return r.Float64() })
	expo := sortedSamples(20000, 2, func(r *rand.Rand) float64 { return r.ExpFloat64() })
	tests := []struct {
		name string
		xs   []float64
		q    float64
		want float64
	}{
		{"uniform p50", uniform, 0.5, 0.5},
		{"uniform p90", uniform, 0.9, 0.9},
		{"uniform p99", uniform, 0.99, 0.99},
		{"exponential p50", expo, 0.5, math.Ln2},
		{"exponential p90", expo, 0.9, math.Log(10)},
		{"exponential p99", expo, 0.99, math.Log(100)},
	}
	for _, tc := range tests {
		e := OrderStatisticCI(tc.xs, tc.q, Level)
		if math.Abs(e.Value-tc.want) > 0.05*tc.want {
			t.Errorf("%s = %.4f, want %.4f within 5%%", tc.name, e.Value, tc.want)
		}
		if !(e.Lo <= tc.want && tc.want <= e.Hi) || e.Lo > e.Value || e.Hi < e.Value {
			t.Errorf("%s: interval [%.4f, %.4f] around %.4f does not hold the true %.4f", tc.name, e.Lo, e.Hi, e.Value, tc.want)
		}
	}
	// Exact quantiles of 1..5 (linear interpolation between order statistics).
	if got := Quantile([]float64{1, 2, 3, 4, 5}, 0.5); got != 2.5 {
		t.Errorf("median of 1..5 by LinInterp = %v, want 2.5", got)
	}
}

// The order-statistic interval covers the true quantile about as often as promised.
func TestOrderStatisticCoverage(t *testing.T) {
	covered := 0
	const trials = 400
	for i := range trials {
		xs := sortedSamples(200, uint64(100+i), func(r *rand.Rand) float64 { return r.ExpFloat64() })
		e := OrderStatisticCI(xs, 0.9, Level)
		if e.Lo <= math.Log(10) && math.Log(10) <= e.Hi {
			covered++
		}
	}
	if frac := float64(covered) / trials; frac < 0.92 || frac > 0.995 {
		t.Errorf("95%% interval covered the true p90 in %.1f%% of trials", frac*100)
	}
}

func TestQuantileOverRuns(t *testing.T) {
	// Ten runs of 1000 uniform samples each: the pooled p90 is about 0.9, and the bootstrap
	// over runs holds it.
	var runs []Sketch
	for i := range 10 {
		runs = append(runs, sketch(sortedSamples(1000, uint64(i), func(r *rand.Rand) float64 { return r.Float64() })))
	}
	e := QuantileOverRuns(runs, 0.9, 1)
	if math.Abs(e.Value-0.9) > 0.01 || e.Lo > 0.9 || e.Hi < 0.9 || e.Hi-e.Lo > 0.05 {
		t.Errorf("p90 over runs = %+v, want about 0.9 inside a narrow interval", e)
	}
	if again := QuantileOverRuns(runs, 0.9, 1); again != e {
		t.Errorf("bootstrap is not deterministic: %+v then %+v", e, again)
	}
	// A run larger than the sketch keeps its quantiles.
	big := sketch(sortedSamples(100000, 3, func(r *rand.Rand) float64 { return r.ExpFloat64() }))
	if big.N != 100000 || len(big.Values) != SketchSize {
		t.Fatalf("sketch kept %d of %d", len(big.Values), big.N)
	}
	if p99 := QuantileOverRuns([]Sketch{big, big}, 0.99, 1).Value; math.Abs(p99-math.Log(100)) > 0.1 {
		t.Errorf("p99 of a sketched exponential = %.3f, want %.3f", p99, math.Log(100))
	}
}

func TestMeanCI(t *testing.T) {
	e := MeanCI([]float64{1, 2, 3, 4, 5}, 0.95)
	// mean 3, sd 1.5811, t(0.975, 4) = 2.7764: half-width 1.9632.
	if math.Abs(e.Value-3) > 1e-12 || math.Abs(e.Hi-3-1.9632) > 1e-3 || math.Abs(3-e.Lo-1.9632) > 1e-3 {
		t.Errorf("MeanCI = %+v, want 3 ± 1.9632", e)
	}
}

func TestFits(t *testing.T) {
	x := []float64{10, 20, 50, 100, 200}
	lin := make([]float64, len(x))
	pow := make([]float64, len(x))
	for i, v := range x {
		lin[i] = 3 + 2*v
		pow[i] = 5 * math.Pow(v, 1.5)
	}
	f, ok := BestFit(x, lin)
	if !ok || f.Law != "linear" || math.Abs(f.A-3) > 1e-9 || math.Abs(f.B-2) > 1e-9 || math.Abs(f.R2-1) > 1e-12 {
		t.Errorf("linear data: %+v ok=%v, want y = 3 + 2x with R² 1", f, ok)
	}
	f, ok = BestFit(x, pow)
	if !ok || f.Law != "power" || math.Abs(f.A-5) > 1e-6 || math.Abs(f.B-1.5) > 1e-9 || math.Abs(f.R2-1) > 1e-9 {
		t.Errorf("power data: %+v ok=%v, want y = 5x^1.5 with R² 1", f, ok)
	}
	if _, ok := BestFit(x, []float64{5, 1, 9, 2, 7}); ok {
		t.Error("noise got a growth law")
	}
	if _, ok := BestFit([]float64{1, 2}, []float64{1, 2}); ok {
		t.Error("two points got a growth law")
	}
	if f, ok := BestFit(x, []float64{4, 4, 4.01, 4, 4}); !ok || f.Law != "constant" || math.Abs(f.A-4.002) > 1e-9 {
		t.Errorf("constant data: %+v ok=%v, want a flat line", f, ok)
	}
}

func TestKnee(t *testing.T) {
	// Flat until 400, then steep: the knee is at 400.
	x := []float64{100, 200, 300, 400, 500, 600, 700}
	y := []float64{10, 10.5, 11, 12, 40, 70, 100}
	if k, ok := Knee(x, y); !ok || k != 400 {
		t.Errorf("knee = %v ok=%v, want 400", k, ok)
	}
	if _, ok := Knee(x, []float64{100, 100, 100, 100.1, 100.5, 101, 101.5}); ok {
		t.Error("a nearly constant curve has a knee")
	}
	if _, ok := Knee(x, []float64{1, 2, 3, 4, 5, 6, 7}); ok {
		t.Error("a straight line has a knee")
	}
}
