package plan

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// Level is the confidence level of every interval in a report.
const Level = 0.95

// Estimate is a statistic with a confidence interval (Lo = Hi = Value when none could be
// given, e.g. from a single sample).
type Estimate struct {
	Value float64 `json:"value"`
	Lo    float64 `json:"lo"`
	Hi    float64 `json:"hi"`
}

// pooledQuantile is the q-quantile of the runs' samples pooled, run i counted mult[i]
// times (nil: once) and each of its samples standing for N/len(Values) samples: the value
// where the pooled empirical CDF reaches q, found by bisection.
func pooledQuantile(runs []Sketch, mult []int, q float64) float64 {
	lo, hi := math.Inf(1), math.Inf(-1)
	total := 0.0
	for i, r := range runs {
		if len(r.Values) == 0 || (mult != nil && mult[i] == 0) {
			continue
		}
		lo, hi = min(lo, r.Values[0]), max(hi, r.Values[len(r.Values)-1])
		total += weight(r, mult, i) * float64(len(r.Values))
	}
	if total == 0 {
		return math.NaN()
	}
	cdf := func(x float64) float64 {
		c := 0.0
		for i, r := range runs {
			if len(r.Values) == 0 || (mult != nil && mult[i] == 0) {
				continue
			}
			c += weight(r, mult, i) * float64(sort.SearchFloat64s(r.Values, math.Nextafter(x, math.Inf(1))))
		}
		return c / total
	}
	if cdf(lo) >= q {
		return lo
	}
	for range 60 {
		mid := lo + (hi-lo)/2
		if mid <= lo || mid >= hi {
			break
		}
		if cdf(mid) >= q {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

func weight(r Sketch, mult []int, i int) float64 {
	w := float64(r.N) / float64(len(r.Values))
	if mult != nil {
		w *= float64(mult[i])
	}
	return w
}

// Quantile is the q-quantile of sorted samples, linearly interpolated (gonum's LinInterp).
func Quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	return stat.Quantile(q, stat.LinInterp, sorted, nil)
}

// OrderStatisticCI is the distribution-free confidence interval of the q-quantile of n
// independent samples (sorted): [x(l), x(u)] with l and u chosen from the Binomial(n, q)
// distribution of the number of samples below the quantile, so that the interval covers
// the true quantile with probability at least level (when n allows it).
func OrderStatisticCI(sorted []float64, q, level float64) Estimate {
	n := len(sorted)
	est := Estimate{Value: Quantile(sorted, q)}
	if n == 0 {
		est.Lo, est.Hi = math.NaN(), math.NaN()
		return est
	}
	b := distuv.Binomial{N: float64(n), P: q}
	alpha := (1 - level) / 2
	// l: the largest rank with P(B <= l-1) <= alpha; u: the smallest with P(B <= u-1) >= 1-alpha.
	l, u := 0, n+1
	for k := 1; k <= n; k++ {
		if b.CDF(float64(k-1)) <= alpha {
			l = k
		}
		if b.CDF(float64(k-1)) >= 1-alpha {
			u = k
			break
		}
	}
	est.Lo, est.Hi = sorted[0], sorted[n-1]
	if l >= 1 {
		est.Lo = sorted[l-1]
	}
	if u <= n {
		est.Hi = sorted[u-1]
	}
	return est
}

// bootstrapRuns is how many resamples a bootstrap interval takes.
const bootstrapRuns = 1000

// QuantileOverRuns estimates the q-quantile of the runs' pooled samples. With two runs or
// more, the interval is a percentile bootstrap over runs (whole runs are resampled, so
// samples of one run, which are not independent, stay together); with one run it is the
// order-statistic interval of that run's samples. seed fixes the resampling.
func QuantileOverRuns(sks []Sketch, q float64, seed uint64) Estimate {
	var runs []Sketch
	for _, s := range sks {
		if s.N > 0 {
			runs = append(runs, s)
		}
	}
	switch len(runs) {
	case 0:
		return Estimate{Value: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
	case 1:
		if runs[0].N == len(runs[0].Values) {
			return OrderStatisticCI(runs[0].Values, q, Level)
		}
	}
	est := Estimate{Value: pooledQuantile(runs, nil, q)}
	if len(runs) == 1 {
		est.Lo, est.Hi = est.Value, est.Value
		return est
	}
	r := rand.New(rand.NewPCG(seed, 0x626f6f74))
	bs := make([]float64, bootstrapRuns)
	mult := make([]int, len(runs))
	for i := range bs {
		clear(mult)
		for range runs {
			mult[r.IntN(len(runs))]++
		}
		bs[i] = pooledQuantile(runs, mult, q)
	}
	sort.Float64s(bs)
	alpha := (1 - Level) / 2
	est.Lo = stat.Quantile(alpha, stat.LinInterp, bs, nil)
	est.Hi = stat.Quantile(1-alpha, stat.LinInterp, bs, nil)
	return est
}

// MeanCI is the mean of xs with a Student-t confidence interval.
func MeanCI(xs []float64, level float64) Estimate {
	n := len(xs)
	if n == 0 {
		return Estimate{Value: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
	}
	m := stat.Mean(xs, nil)
	if n == 1 {
		return Estimate{Value: m, Lo: m, Hi: m}
	}
	se := stat.StdDev(xs, nil) / math.Sqrt(float64(n))
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 1)}.Quantile(1 - (1-level)/2)
	return Estimate{Value: m, Lo: m - t*se, Hi: m + t*se}
}

// Fit is a growth law fitted to (x, y) points.
type Fit struct {
	// Law is "linear" (y = A + B·x), "power" (y = A·x^B) or "constant" (y = A, the values
	// staying within 2% of their mean).
	Law string  `json:"law"`
	A   float64 `json:"a"`
	B   float64 `json:"b"`
	R2  float64 `json:"r2"`
}

// Predict evaluates the fit at x.
func (f Fit) Predict(x float64) float64 {
	if f.Law == "power" {
		return f.A * math.Pow(x, f.B)
	}
	return f.A + f.B*x
}

// FitLinear fits y = A + B·x by least squares (gonum's LinearRegression) with its R².
func FitLinear(x, y []float64) Fit {
	a, b := stat.LinearRegression(x, y, nil, false)
	r2 := stat.RSquared(x, y, nil, a, b)
	if math.IsNaN(r2) { // constant y: a flat line fits exactly
		r2 = 1
	}
	return Fit{Law: "linear", A: a, B: b, R2: r2}
}

// FitPower fits y = A·x^B by least squares on log y against log x; R² is on the original
// scale. It needs positive x and y (ok false otherwise).
func FitPower(x, y []float64) (Fit, bool) {
	lx, ly := make([]float64, len(x)), make([]float64, len(y))
	for i := range x {
		if x[i] <= 0 || y[i] <= 0 {
			return Fit{}, false
		}
		lx[i], ly[i] = math.Log(x[i]), math.Log(y[i])
	}
	a, b := stat.LinearRegression(lx, ly, nil, false)
	f := Fit{Law: "power", A: math.Exp(a), B: b}
	pred := make([]float64, len(x))
	for i := range x {
		pred[i] = f.Predict(x[i])
	}
	f.R2 = stat.RSquaredFrom(pred, y, nil)
	return f, true
}

// MinFitR2 is the R² a growth law needs to be reported.
const MinFitR2 = 0.9

// BestFit fits both laws and returns the better one by R², preferring the linear law
// unless the power law is clearly better (R² higher by 0.01); ok is false with fewer than
// three distinct x values or when neither law reaches MinFitR2.
func BestFit(x, y []float64) (Fit, bool) {
	if distinct(x) < 3 {
		return Fit{}, false
	}
	// Within 2% of its mean everywhere: constant, whatever a fit's R² says about noise.
	if mean := stat.Mean(y, nil); slices.Max(y)-slices.Min(y) <= 0.02*math.Abs(mean) {
		return Fit{Law: "constant", A: mean, R2: 1}, true
	}
	best := FitLinear(x, y)
	if p, ok := FitPower(x, y); ok && p.R2 > best.R2+0.01 {
		best = p
	}
	return best, best.R2 >= MinFitR2
}

func distinct(x []float64) int {
	s := slices.Clone(x)
	slices.Sort(s)
	return len(slices.Compact(s))
}

// Knee finds where a growing curve bends upwards most (the Kneedle method): x and y are
// scaled to [0, 1] and the knee is the point farthest below the chord from the first point
// to the last. ok is false with fewer than three points, or when no point lies below the
// chord by more than 0.1 (no marked knee), or when the curve ends lower than it starts.
// x must be increasing.
func Knee(x, y []float64) (float64, bool) {
	n := len(x)
	if n < 3 {
		return 0, false
	}
	x0, x1 := x[0], x[n-1]
	y0, y1 := slices.Min(y), slices.Max(y)
	if x1 <= x0 || y1 <= y0 || y[n-1] <= y[0] {
		return 0, false // not growing: no knee to speak of
	}
	if y1-y0 <= 0.02*math.Abs(stat.Mean(y, nil)) {
		return 0, false // constant within 2%
	}
	best, at := 0.0, -1
	for i := 1; i < n-1; i++ {
		xs := (x[i] - x0) / (x1 - x0)
		ys := (y[i] - y0) / (y1 - y0)
		chord := (y[0]-y0)/(y1-y0) + xs*((y[n-1]-y[0])/(y1-y0))
		if d := chord - ys; d > best {
			best, at = d, i
		}
	}
	if at < 0 || best < 0.1 {
		return 0, false
	}
	return x[at], true
}
