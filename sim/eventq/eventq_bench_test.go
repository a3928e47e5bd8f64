package eventq

import (
	"math/rand/v2"
	"runtime"
	"testing"
	"time"
)

// meanDelay is the mean gap between an event and the one it schedules. Its
// scale does not matter to the queue; only the relative order of times does.
const meanDelay = time.Second

// BenchmarkHold runs the classic "hold" model of an event list: the queue
// stays at N pending events and each op pops the earliest one and schedules
// a successor a random delay later, which is what the simulator's main loop
// does once a scenario is running.
func BenchmarkHold(b *testing.B) {
	queues := []struct {
		name string
		new  func() Queue[int]
	}{
		{"heap4", func() Queue[int] { return NewHeap4[int]() }},
		{"btree", func() Queue[int] { return NewBTree[int]() }},
		{"calendar", func() Queue[int] { return NewCalendar[int](meanDelay/64, 1024) }},
	}
	sizes := []struct {
		name string
		n    int
	}{
		{"10k", 10_000},
		{"1M", 1_000_000},
	}
	for _, q := range queues {
		for _, s := range sizes {
			b.Run(q.name+"/"+s.name, func(b *testing.B) {
				benchHold(b, q.new(), s.n)
			})
		}
	}
}

func benchHold(b *testing.B, q Queue[int], n int) {
	rng := rand.New(rand.NewPCG(1, uint64(n)))
	// Delays are drawn up front so the timed loop measures the queue, not the
	// random number generator. Exponential gaps are the textbook choice for
	// the hold model and give a realistic spread of ties and near-ties.
	const nDelays = 1 << 16
	delays := make([]time.Duration, nDelays)
	for i := range delays {
		delays[i] = time.Duration(rng.ExpFloat64() * float64(meanDelay))
	}
	for i := range n {
		q.Push(time.Duration(rng.ExpFloat64()*float64(meanDelay)), i)
	}
	// Collect the prefill's garbage now rather than inside the timed loop.
	runtime.GC()

	i := 0
	for b.Loop() {
		it, _ := q.Pop()
		q.Push(it.At+delays[i%nDelays], it.Value)
		i++
	}
	if q.Len() != n {
		b.Fatalf("Len() = %d, want %d", q.Len(), n)
	}
}
