// bitset.go holds bitset, a set of member positions, one bit each.

package scheduler

import (
	"math"
	"math/bits"
)

// bitset is a set of member positions.
type bitset []uint64

func newBitset(n int) bitset { return make(bitset, (n+63)/64) }

func (b bitset) resize(n int) bitset {
	w := (n + 63) / 64
	if cap(b) < w {
		return make(bitset, w)
	}
	return b[:w]
}

func (b bitset) set(i int32)      { b[i>>6] |= 1 << (i & 63) }
func (b bitset) clear(i int32)    { b[i>>6] &^= 1 << (i & 63) }
func (b bitset) has(i int32) bool { return b[i>>6]&(1<<(i&63)) != 0 }
func (b bitset) zero()            { clear(b) }

func (b bitset) fill(n int) {
	for i := range b {
		b[i] = math.MaxUint64
	}
	if r := n % 64; r != 0 {
		b[len(b)-1] = 1<<r - 1
	}
}

func (b bitset) or(o bitset) {
	for i := range b {
		b[i] |= o[i]
	}
}

func (b bitset) and(o bitset) {
	for i := range b {
		b[i] &= o[i]
	}
}

// each calls f with every member in the set, in position order.
func (b bitset) each(f func(i int32)) {
	for w, word := range b {
		for ; word != 0; word &= word - 1 {
			f(int32(w*64 + bits.TrailingZeros64(word)))
		}
	}
}
