// score.go holds scoring and ranking of PickN candidates: a candidate's affinity score
// from the score plugins of the table in plugins.go, its ranking key, and the candidates
// as the ranking sees them.

package scheduler

// prepareScores makes every score plugin ready to score members (PickN).
func (d *decision) prepareScores() {
	for i := range plugins {
		if p := &plugins[i]; p.prepare != nil {
			p.prepare(d)
		}
	}
}

// scoreOf is the member's affinity score: its scores from every score plugin, added up.
func (d *decision) scoreOf(id int32) int32 {
	var total int32
	for i := range plugins {
		if p := &plugins[i]; p.score != nil {
			total += p.score(d, id)
		}
	}
	return total
}

// scoreCandidate computes a candidate's affinity score and ranking key (PickN).
func (d *decision) scoreCandidate(mm *memo) {
	mm.affinity = d.scoreOf(mm.id)
	mm.key = rankKey(mm.affinity, mm.obsolete, mm.rank)
}

// better ranks candidates: topology score, affinity score, an existing obsolete binding
// (less churn), then the greater name (SCHED-SORT, DC-2).
func (d *decision) better(a, b int32) bool {
	ma, mb := &d.memos[a], &d.memos[b]
	if ma.topo != mb.topo {
		return ma.topo > mb.topo
	}
	return ma.key > mb.key
}

// rankedCands is the candidates that are still candidates and not picked, as the ranking
// sees them.
func (d *decision) rankedCands() []ranked {
	d.ranked = d.ranked[:0]
	for _, i := range d.cands {
		if mm := &d.memos[i]; !mm.picked && mm.code == codeCandidate {
			d.ranked = append(d.ranked, ranked{topo: mm.topo, mi: i, key: mm.key})
		}
	}
	return d.ranked
}
