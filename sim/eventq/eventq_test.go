package eventq

import (
	stdcmp "cmp"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"pgregory.net/rapid"
)

type impl[T any] struct {
	name string
	new  func() Queue[T]
}

func impls[T any]() []impl[T] {
	return []impl[T]{
		{"heap4", func() Queue[T] { return NewHeap4[T]() }},
		{"btree", func() Queue[T] { return NewBTree[T]() }},
		// Narrow buckets and small rings, so that tests' times spread over the current
		// heap, the ring and the far heap.
		{"calendar/7x8", func() Queue[T] { return NewCalendar[T](7, 8) }},
		{"calendar/1x2", func() Queue[T] { return NewCalendar[T](1, 2) }},
		{"calendar/100x64", func() Queue[T] { return NewCalendar[T](100, 64) }},
		{"New", New[T]},
	}
}

type push struct {
	at time.Duration
	v  string
}

// drain pops until the queue reports empty.
func drain[T any](q Queue[T]) []Item[T] {
	var out []Item[T]
	for {
		it, ok := q.Pop()
		if !ok {
			return out
		}
		out = append(out, it)
	}
}

func TestPushPopOrder(t *testing.T) {
	tests := []struct {
		name   string
		pushes []push
		want   []Item[string]
	}{
		{
			name: "empty",
		},
		{
			name:   "single",
			pushes: []push{{5 * time.Second, "a"}},
			want:   []Item[string]{{5 * time.Second, 0, "a"}},
		},
		{
			name:   "ascending",
			pushes: []push{{1, "a"}, {2, "b"}, {3, "c"}},
			want:   []Item[string]{{1, 0, "a"}, {2, 1, "b"}, {3, 2, "c"}},
		},
		{
			name:   "descending",
			pushes: []push{{3, "a"}, {2, "b"}, {1, "c"}},
			want:   []Item[string]{{1, 2, "c"}, {2, 1, "b"}, {3, 0, "a"}},
		},
		{
			name:   "equal times pop in insertion order",
			pushes: []push{{7, "a"}, {7, "b"}, {7, "c"}, {7, "d"}, {7, "e"}, {7, "f"}},
			want: []Item[string]{
				{7, 0, "a"}, {7, 1, "b"}, {7, 2, "c"}, {7, 3, "d"}, {7, 4, "e"}, {7, 5, "f"},
			},
		},
		{
			name:   "ties interleaved with other times",
			pushes: []push{{2, "a"}, {1, "b"}, {2, "c"}, {0, "d"}, {1, "e"}, {2, "f"}},
			want: []Item[string]{
				{0, 3, "d"}, {1, 1, "b"}, {1, 4, "e"}, {2, 0, "a"}, {2, 2, "c"}, {2, 5, "f"},
			},
		},
		{
			name:   "time zero sorts first",
			pushes: []push{{0, "a"}, {time.Hour, "b"}, {0, "c"}},
			want:   []Item[string]{{0, 0, "a"}, {0, 2, "c"}, {time.Hour, 1, "b"}},
		},
	}
	for _, im := range impls[string]() {
		for _, tc := range tests {
			t.Run(im.name+"/"+tc.name, func(t *testing.T) {
				q := im.new()
				for i, p := range tc.pushes {
					if seq := q.Push(p.at, p.v); seq != uint64(i) {
						t.Errorf("Push(%v, %q) = %d, want %d", p.at, p.v, seq, i)
					}
				}
				if got, want := q.Len(), len(tc.pushes); got != want {
					t.Errorf("Len() = %d, want %d", got, want)
				}
				if diff := cmp.Diff(tc.want, drain(q)); diff != "" {
					t.Errorf("Pop order mismatch (-want +got):\n%s", diff)
				}
			})
		}
	}
}

func TestEmpty(t *testing.T) {
	for _, im := range impls[string]() {
		t.Run(im.name, func(t *testing.T) {
			q := im.new()
			check := func(when string) {
				t.Helper()
				if got, ok := q.Pop(); ok {
					t.Errorf("%s: Pop() = %v, true, want false", when, got)
				}
				if got, ok := q.Peek(); ok {
					t.Errorf("%s: Peek() = %v, true, want false", when, got)
				}
				if got := q.Len(); got != 0 {
					t.Errorf("%s: Len() = %d, want 0", when, got)
				}
			}
			check("new queue")
			q.Push(1, "a")
			q.Pop()
			check("after draining")
		})
	}
}

func TestPeekDoesNotRemove(t *testing.T) {
	for _, im := range impls[string]() {
		t.Run(im.name, func(t *testing.T) {
			q := im.new()
			q.Push(2, "late")
			q.Push(1, "early")
			want := Item[string]{1, 1, "early"}
			for range 2 {
				got, ok := q.Peek()
				if !ok {
					t.Fatalf("Peek() = _, false, want true")
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("Peek() = %v, want %v (-want +got):\n%s", got, want, diff)
				}
			}
			if got := q.Len(); got != 2 {
				t.Errorf("Len() = %d, want 2", got)
			}
			got, _ := q.Pop()
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Pop() = %v, want %v (-want +got):\n%s", got, want, diff)
			}
		})
	}
}

// TestSeqContinuesAcrossPops checks that sequence numbers are never reused,
// so an event pushed after a pop cannot overtake an earlier one at equal time.
func TestSeqContinuesAcrossPops(t *testing.T) {
	for _, im := range impls[string]() {
		t.Run(im.name, func(t *testing.T) {
			q := im.new()
			q.Push(5, "a")
			q.Push(5, "b")
			q.Pop()
			if seq := q.Push(5, "c"); seq != 2 {
				t.Errorf("Push after Pop = %d, want 2", seq)
			}
			want := []Item[string]{{5, 1, "b"}, {5, 2, "c"}}
			if diff := cmp.Diff(want, drain(q)); diff != "" {
				t.Errorf("Pop order mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// reference is the obviously correct model: an unsorted slice, sorted by
// (At, Seq) whenever the minimum is needed.
type reference struct {
	items []Item[int]
	seq   uint64
}

func (r *reference) push(at time.Duration, v int) uint64 {
	r.items = append(r.items, Item[int]{At: at, Seq: r.seq, Value: v})
	r.seq++
	return r.seq - 1
}

func (r *reference) sorted() {
	slices.SortFunc(r.items, func(a, b Item[int]) int {
		return stdcmp.Or(stdcmp.Compare(a.At, b.At), stdcmp.Compare(a.Seq, b.Seq))
	})
}

func (r *reference) pop() (Item[int], bool) {
	if len(r.items) == 0 {
		return Item[int]{}, false
	}
	r.sorted()
	it := r.items[0]
	r.items = r.items[1:]
	return it, true
}

func (r *reference) peek() (Item[int], bool) {
	if len(r.items) == 0 {
		return Item[int]{}, false
	}
	r.sorted()
	return r.items[0], true
}

type result struct {
	Item Item[int]
	OK   bool
}

func TestMatchesReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ref := &reference{}
		queues := map[string]Queue[int]{}
		names := []string{}
		for _, im := range impls[int]() {
			queues[im.name] = im.new()
			names = append(names, im.name)
		}
		// A narrow time range forces many ties, which is where FIFO matters.
		maxAt := rapid.Int64Range(0, 1000).Draw(t, "maxAt")
		genAt := rapid.Int64Range(0, maxAt)
		next := 0

		pushOne := func(t *rapid.T) {
			at := time.Duration(genAt.Draw(t, "at"))
			want := ref.push(at, next)
			for _, n := range names {
				if got := queues[n].Push(at, next); got != want {
					t.Fatalf("%s: Push(%v, %d) = %d, want %d", n, at, next, got, want)
				}
			}
			next++
		}
		t.Repeat(map[string]func(*rapid.T){
			"push": pushOne,
			"pushMany": func(t *rapid.T) {
				// Bursts build heaps several levels deep.
				for range rapid.IntRange(1, 100).Draw(t, "burst") {
					pushOne(t)
				}
			},
			"pop": func(t *rapid.T) {
				it, ok := ref.pop()
				want := result{it, ok}
				for _, n := range names {
					it, ok := queues[n].Pop()
					if got := (result{it, ok}); !cmp.Equal(got, want) {
						t.Fatalf("%s: Pop() = %v, want %v", n, got, want)
					}
				}
			},
			"replaceMin": func(t *rapid.T) {
				// ReplaceMin behaves exactly as Pop followed by Push.
				at := time.Duration(genAt.Draw(t, "at"))
				ref.pop()
				want := ref.push(at, next)
				for _, n := range names {
					if got := queues[n].ReplaceMin(at, next); got != want {
						t.Fatalf("%s: ReplaceMin(%v, %d) = %d, want %d", n, at, next, got, want)
					}
				}
				next++
			},
			"peek": func(t *rapid.T) {
				it, ok := ref.peek()
				want := result{it, ok}
				for _, n := range names {
					it, ok := queues[n].Peek()
					if got := (result{it, ok}); !cmp.Equal(got, want) {
						t.Fatalf("%s: Peek() = %v, want %v", n, got, want)
					}
				}
			},
			"": func(t *rapid.T) {
				for _, n := range names {
					if got, want := queues[n].Len(), len(ref.items); got != want {
						t.Fatalf("%s: Len() = %d, want %d", n, got, want)
					}
				}
			},
		})

		ref.sorted()
		for _, n := range names {
			if diff := cmp.Diff(ref.items, drain(queues[n]), cmpopts.EquateEmpty()); diff != "" {
				t.Fatalf("%s: drain mismatch (-want +got):\n%s", n, diff)
			}
		}
	})
}
