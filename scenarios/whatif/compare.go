package whatif

import (
	"fmt"
	"slices"
)

// Compare lists where an outcome differs from a prediction: a placement's clusters, a
// binding's state, or the manifests a cluster receives. Reasons and readiness are left
// out: a hub keeps the reason of the decision that first picked a cluster, and readiness
// depends on when the outcome is read.
func Compare(predicted, actual State) []string {
	var out []string
	names := sortedKeys(predicted.Placements)
	for _, n := range sortedKeys(actual.Placements) {
		if _, ok := predicted.Placements[n]; !ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	for _, name := range slices.Compact(names) {
		p, a := predicted.Placements[name], actual.Placements[name]
		switch {
		case p == nil:
			out = append(out, fmt.Sprintf("placement %s: exists, not predicted", name))
			continue
		case a == nil:
			out = append(out, fmt.Sprintf("placement %s: predicted, does not exist", name))
			continue
		}
		pc, ac := predicted.Clusters(name), actual.Clusters(name)
		if !slices.Equal(pc, ac) {
			out = append(out, fmt.Sprintf("placement %s: clusters %v, predicted %v", name, ac, pc))
		}
		for _, c := range pc {
			x, y := p.Clusters[c], a.Clusters[c]
			if y == nil {
				continue
			}
			if x.Binding != y.Binding {
				out = append(out, fmt.Sprintf("placement %s on %s: binding %s, predicted %s", name, c, y.Binding, x.Binding))
			}
			if d := diffManifests(c+" (predicted)", c+" (actual)", x.Manifests, y.Manifests); d != "" {
				out = append(out, fmt.Sprintf("placement %s on %s: manifests differ from the prediction:\n%s", name, c, d))
			}
		}
	}
	return out
}
