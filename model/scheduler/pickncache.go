// pickncache.go holds what a PickN policy's decisions derive from the index alone and
// keep while neither changes: the members the policy selects and tolerates, their affinity
// scores, their ranking order and their groups of topology domains.

package scheduler

import (
	"slices"
)

// pickNCache is what a PickN decision derives from the policy's required and preferred
// terms and tolerations and from the index alone, kept while neither changes: the members
// the required terms select and whose taints the policy tolerates, each member's affinity
// score, and those members in ranking order (affinity score, then the greater name). A
// decision then only checks eligibility and bindings, and meets candidates already ranked.
type pickNCache struct {
	ver      uint64 // the index's version it was derived from
	affinity []int32
	// static is the members the required terms select and whose taints are tolerated;
	// order is the same members best first by rankKey(affinity, false, rank), and keys
	// their keys.
	static bitset
	order  []int32
	keys   []uint64
	pos    []int32 // per member: its position in order, or -1
	// virtual is the last decision's virtual candidates (the positions of the members of
	// lastEligible, in order), kept for the next decision with the same eligible set.
	lastEligible bitset
	virtual      []int32
	// names are order's names.
	names []string
	// Under topology spread constraints whose combinations of domains are countable: the
	// combinations the members in order fall in (groups, each its domains per constraint),
	// numbered in order of first appearance; sgroup is each position's group and gindex
	// finds a group by its code in radix (see spreadCode).
	radix  []uint64
	groups [][]int32
	sgroup []int32
	gindex map[uint64]int32
	// members is each group's positions, in order.
	members [][]int32
}

// maxPickNCaches bounds the policies a Scheduler keeps a pickNCache for.
const maxPickNCaches = 64

// pickNCache returns the decision's cache, deriving it if the policy or the index changed,
// or nil, for the decision to take the unranked path: when the index changed since the
// policy's previous decision (deriving a cache costs a few decisions, so it is derived
// only once the index held still from one decision to the next: a fleet that changes
// before every decision is decided as before), or when the Scheduler already keeps
// maxPickNCaches current ones for other policies (which must not take turns evicting each
// other).
func (d *decision) pickNCache() *pickNCache {
	key := d.policy.fingerprint()
	if c := d.pcache[key]; c != nil && c.ver == d.ix.ver {
		return c
	}
	if d.pseen[key] != d.ix.ver {
		if d.pseen == nil || len(d.pseen) >= 4*maxPickNCaches {
			d.pseen = map[string]uint64{}
		}
		d.pseen[key] = d.ix.ver
		return nil
	}
	if d.pcache == nil {
		d.pcache = map[string]*pickNCache{}
	}
	delete(d.pcache, key)
	if len(d.pcache) >= maxPickNCaches {
		for k, c := range d.pcache {
			if c.ver != d.ix.ver {
				delete(d.pcache, k) // derived from an older index: never used again
			}
		}
		if len(d.pcache) >= maxPickNCaches {
			return nil
		}
	}
	n := len(d.ix.ents)
	c := &pickNCache{ver: d.ix.ver, affinity: make([]int32, n)}
	set := d.newSet()
	set.fill(n)
	d.narrow(set, true)
	d.prepareScores()
	c.static = newBitset(n)
	set.each(func(id int32) {
		c.static.set(id)
		c.affinity[id] = d.scoreOf(id)
		c.keys = append(c.keys, ^rankKey(c.affinity[id], false, d.ix.rank[id]))
	})
	// Keys are distinct (they hold the rank) and name their member (by its rank): sorting
	// the complemented keys orders the members best first without a comparison function.
	slices.Sort(c.keys)
	c.order = make([]int32, len(c.keys))
	c.names = make([]string, len(c.keys))
	c.pos = make([]int32, n)
	for i := range c.pos {
		c.pos[i] = -1
	}
	for p := range c.keys {
		c.keys[p] = ^c.keys[p]
		id := int32(c.keys[p] & 0x7fffffff) // the rank
		if !d.ix.sortedByName {
			id = d.ix.order()[id]
		}
		c.order[p], c.pos[id] = id, int32(p)
		c.names[p] = d.ix.ents[id].name
	}
	if len(d.policy.topology) > 0 {
		cols := make([]*labelColumn, len(d.policy.topology))
		for i := range cols {
			cols[i] = d.ix.column(d.policy.topology[i].key)
		}
		if radix, ok := spreadRadix(cols); ok {
			c.radix = radix
			c.sgroup = make([]int32, len(c.order))
			c.gindex = map[uint64]int32{}
			for p, id := range c.order {
				code := spreadCode(cols, radix, id)
				g, ok := c.gindex[code]
				if !ok {
					g = int32(len(c.groups))
					c.gindex[code] = g
					doms := make([]int32, len(cols))
					for i, col := range cols {
						doms[i] = col.ids[id]
					}
					c.groups = append(c.groups, doms)
				}
				c.sgroup[p] = g
			}
			c.members = make([][]int32, len(c.groups))
			for p, g := range c.sgroup {
				c.members[g] = append(c.members[g], int32(p))
			}
		}
	}
	d.pcache[key] = c
	return c
}
