package difftest

// The hub objects compared beside bindings, placements and members: Works, staged update
// runs, approval requests and evictions. Each side converts its own objects to these with
// the shared model types (apis/convert on the production side), so the comparison sees
// decisions, not representations.

import (
	"encoding/json"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	mcondition "github.com/fleetsim/fleetsim/model/condition"
	mhub "github.com/fleetsim/fleetsim/model/hub"
	"github.com/fleetsim/fleetsim/model/resources"
	"github.com/fleetsim/fleetsim/model/staged"
)

// Work is a Work as compared: its member and its manifests after overrides.
type Work struct {
	Member    string
	Manifests []Manifest
}

// Manifest is one manifest of a Work: its identity (group/version/kind/namespace/name, with
// the envelope it came in, if any) and its content as canonical JSON values.
type Manifest struct {
	ID      string
	Content any
}

// workState is a model Work as compared, keyed by member/name: Works are compared by name,
// so a change in how Works are named and split flows through both worlds.
func workState(w *mhub.Work) (string, Work) {
	out := Work{Member: w.Member, Manifests: []Manifest{}}
	for i, o := range w.Manifests {
		id := resources.Identifier(o)
		key := resourceID(id.Group, id.Version, id.Kind, id.Namespace, id.Name)
		if i < len(w.Envelopes) && w.Envelopes[i] != nil {
			key += " in envelope " + w.Envelopes[i].Namespace + "/" + w.Envelopes[i].Name
		}
		out.Manifests = append(out.Manifests, Manifest{ID: key, Content: canonical(o)})
	}
	slices.SortFunc(out.Manifests, func(a, b Manifest) int { return strings.Compare(a.ID, b.ID) })
	return w.Member + "/" + w.Name, out
}

// canonical is an object's content as plain JSON values (maps, slices, float64, string,
// bool), which compare equal whatever produced them.
func canonical(o *unstructured.Unstructured) any {
	raw, err := json.Marshal(o.Object)
	if err != nil {
		return "unencodable: " + err.Error()
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return "undecodable: " + err.Error()
	}
	return v
}

// project keeps of got only what want has: the API server adds what the simulator's store
// never holds (defaulted fields, uid, resourceVersion, creationTimestamp, managedFields),
// and those are no decision of the hub's. What want has and got lacks, or holds
// differently, stays a difference.
func project(want, got any) any {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return got
		}
		out := map[string]any{}
		for k, wv := range w {
			if gv, ok := g[k]; ok {
				out[k] = project(wv, gv)
			}
		}
		return out
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return got
		}
		out := make([]any, len(g))
		for i := range g {
			out[i] = project(w[i], g[i])
		}
		return out
	}
	return got
}

// projectWorks is got with every manifest projected on want's manifest of the same Work
// and identity.
func projectWorks(want, got map[string]Work) map[string]Work {
	out := make(map[string]Work, len(got))
	for name, g := range got {
		w, ok := want[name]
		if !ok {
			out[name] = g
			continue
		}
		byID := map[string]any{}
		for _, m := range w.Manifests {
			byID[m.ID] = m.Content
		}
		p := Work{Member: g.Member, Manifests: make([]Manifest, len(g.Manifests))}
		for i, m := range g.Manifests {
			p.Manifests[i] = m
			if wc, ok := byID[m.ID]; ok {
				p.Manifests[i].Content = project(wc, m.Content)
			}
		}
		out[name] = p
	}
	return out
}

// Run is a staged update run's status as compared.
type Run struct {
	Placement  string
	Conditions Conditions
	// Stages, in order, then the deletion stage.
	Stages []Stage
}

// Stage is one stage's status.
type Stage struct {
	Name       string
	Conditions Conditions
	Clusters   map[string]Conditions
	// Tasks are the before- and after-stage tasks: "before Approval x" or "after TimedWait".
	Tasks map[string]Conditions
}

func runState(placementName string, s staged.StagedUpdateRunStatus) Run {
	r := Run{Placement: placementName, Conditions: timedConditions(s.Conditions), Stages: []Stage{}}
	stage := func(st staged.StageUpdatingStatus) Stage {
		x := Stage{Name: st.StageName, Conditions: timedConditions(st.Conditions), Clusters: map[string]Conditions{}, Tasks: map[string]Conditions{}}
		for _, c := range st.Clusters {
			x.Clusters[c.ClusterName] = timedConditions(c.Conditions)
		}
		for when, ts := range map[string][]staged.AfterStageTaskStatus{"before": st.BeforeStageTaskStatus, "after": st.AfterStageTaskStatus} {
			for _, t := range ts {
				x.Tasks[strings.TrimSpace(when+" "+string(t.Type)+" "+t.ApprovalRequestName)] = timedConditions(t.Conditions)
			}
		}
		return x
	}
	for _, st := range s.StagesStatus {
		r.Stages = append(r.Stages, stage(st))
	}
	if s.DeletionStageStatus != nil {
		r.Stages = append(r.Stages, stage(*s.DeletionStageStatus))
	}
	return r
}

func timedConditions(cs []mcondition.Timed) Conditions {
	out := Conditions{}
	for _, c := range cs {
		out[c.Type] = condition(string(c.Status), c.Reason)
	}
	return out
}
