package hub

import (
	"fmt"
	"strings"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"

	mhub "github.com/fleetsim/fleetsim/model/hub"
	"github.com/fleetsim/fleetsim/model/triggers"
)

// decisionEnv is mhub.Env for one decision, of the membership controller or of the Hub's:
// records go to the log at once and are kept for Kubernetes events, fired changes and
// written Works are kept for the driver to act on once the writes are done.
type decisionEnv struct {
	now     time.Time
	log     logr.Logger
	requeue time.Duration // the soonest of requeues
	// requeues are the timed wakes the decision asked for, by controller and key: a
	// placement-wide decision runs the rollout inline, whose wait is the rollout's.
	requeues []requeue
	records  []record
	fired    []firing
	// worksWritten are the bindings whose Work the decision wrote.
	worksWritten []string
}

type record struct{ kind, subject, note string }

type requeue struct {
	c     triggers.Controller
	key   string
	after time.Duration
}

type firing struct {
	change                   triggers.Change
	key, placement, memberOf string
}

func (e *decisionEnv) Now() time.Time { return e.now }

func (e *decisionEnv) Record(kind, subject, detail string) {
	e.log.Info(kind, "subject", subject, "detail", detail)
	note := subject
	if detail != "" {
		note += ": " + detail
	}
	e.records = append(e.records, record{kind: kind, subject: subject, note: note})
}

func (e *decisionEnv) Fire(c triggers.Change, key, placement, member string) {
	e.log.V(1).Info("trigger", "change", string(c), "key", key, "placement", placement, "member", member)
	e.fired = append(e.fired, firing{change: c, key: key, placement: placement, memberOf: member})
}

func (e *decisionEnv) RequeueAfter(c triggers.Controller, key string, d time.Duration) {
	if e.requeue == 0 || d < e.requeue {
		e.requeue = d
	}
	e.requeues = append(e.requeues, requeue{c: c, key: key, after: d})
}

func (e *decisionEnv) MemberNotified(string) {}

func (e *decisionEnv) WorkWritten(w *mhub.Work) { e.worksWritten = append(e.worksWritten, w.Binding) }

// eventNoteLimit is the events API's limit on a note, in bytes.
const eventNoteLimit = 1024

// byKind folds a decision's records about one object into one record per kind, in the
// order the kinds first came: a placement's scheduler decision picks a hundred members in
// one go, and a hundred events for it would cost the API server more than the decision's
// own writes. The log keeps every record.
func byKind(recs []record) []record {
	var out []record
	count := map[string]int{}
	at := map[string]int{}
	for _, r := range recs {
		i, ok := at[r.kind]
		if !ok {
			at[r.kind] = len(out)
			out = append(out, r)
			count[r.kind] = 1
			continue
		}
		count[r.kind]++
		if n := &out[i].note; len(*n) < eventNoteLimit {
			*n += "; " + r.note
		}
	}
	for i := range out {
		if n := count[out[i].kind]; n > 1 {
			out[i].note = fmt.Sprintf("%d: %s", n, out[i].note)
		}
		if len(out[i].note) > eventNoteLimit {
			out[i].note = strings.ToValidUTF8(out[i].note[:eventNoteLimit-3], "") + "..."
		}
	}
	return out
}

// sendEvent records one of a decision's records as a Kubernetes event on obj.
func sendEvent(rec events.EventRecorder, obj runtime.Object, r record) {
	if rec != nil {
		rec.Eventf(obj, nil, corev1.EventTypeNormal, eventReason(r.kind), "Reconcile", "%s", r.note)
	}
}

// eventReason turns a record kind ("imc-created") into an event reason ("ImcCreated").
func eventReason(kind string) string {
	var b strings.Builder
	for _, w := range strings.Split(kind, "-") {
		if w != "" {
			b.WriteString(strings.ToUpper(w[:1]) + w[1:])
		}
	}
	return b.String()
}
