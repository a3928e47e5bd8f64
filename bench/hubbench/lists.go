package hubbench

// The API server's list workload: the LIST of each kind a restarted hub's informers list
// (bindings, Works, policy snapshots with their decisions, resource snapshots), timed at two
// sizes, since the cost per object moves with the size of the answer. Calibrate runs it on a
// fresh API server, before the write workload stores more of the same kinds.

import (
	"context"
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
)

// listKind is one kind of the list workload: its list, and how to store object i of a round
// as the hub leaves it (a policy snapshot with its decisions written).
type listKind struct {
	name  string
	list  func() client.ObjectList
	store func(ctx context.Context, wl *writeLoad, round int64, n int) error
}

// listKinds are the list workload's kinds, in the order they run.
var listKinds = []listKind{
	{"bindings", func() client.ObjectList { return &v1beta1.ClusterResourceBindingList{} },
		func(ctx context.Context, wl *writeLoad, r int64, n int) error {
			_, err := createAll(ctx, wl.c, n, func(i int) *v1beta1.ClusterResourceBinding { return benchBinding(r, i) })
			return err
		}},
	{"Works", func() client.ObjectList { return &v1beta1.WorkList{} },
		func(ctx context.Context, wl *writeLoad, r int64, n int) error {
			_, err := createAll(ctx, wl.c, n, func(i int) *v1beta1.Work { return benchWork(r, i) })
			return err
		}},
	{"policy snapshots", func() client.ObjectList { return &v1beta1.ClusterSchedulingPolicySnapshotList{} },
		func(ctx context.Context, wl *writeLoad, r int64, n int) error {
			objs, err := createAll(ctx, wl.c, n, func(i int) *v1beta1.ClusterSchedulingPolicySnapshot {
				return benchPolicySnapshot(r, i, wl.clusters())
			})
			if err != nil {
				return err
			}
			_, err = measureWrites(n, benchWriters, func(i int) error {
				objs[i].Status = benchPolicyStatus(objs[i].Generation, wl.clusters())
				return wl.c.Status().Update(ctx, objs[i])
			})
			return err
		}},
	{"resource snapshots", func() client.ObjectList { return &v1beta1.ClusterResourceSnapshotList{} },
		func(ctx context.Context, wl *writeLoad, r int64, n int) error {
			_, err := createAll(ctx, wl.c, n, func(i int) *v1beta1.ClusterResourceSnapshot { return benchResourceSnapshot(r, i) })
			return err
		}},
}

// listRepeats: each LIST is timed this many times and the median kept.
const listRepeats = 3

// listFigures are one kind's LIST cost per object in ms at the two sizes.
type listFigures struct{ small, large float64 }

// measureList stores small objects of kind k, times its LIST, stores more up to large and
// times it again. The LIST asks for resourceVersion 0, as an informer's first list does.
func measureList(ctx context.Context, wl *writeLoad, k listKind, small, large int) (listFigures, error) {
	var f listFigures
	stored := 0
	for _, size := range []int{small, large} {
		if err := k.store(ctx, wl, wl.round.Add(1), size-stored); err != nil {
			return f, fmt.Errorf("storing %d %s: %w", size, k.name, err)
		}
		stored = size
		// A LIST at resourceVersion 0 is served from the API server's watch cache, which
		// may not hold the last creates yet: wait until it does, untimed (a restarted hub
		// lists objects stored long before).
		rv0 := &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: "0"}}
		for deadline := time.Now().Add(time.Minute); ; {
			l := k.list()
			if err := wl.c.List(ctx, l, rv0); err != nil {
				return f, fmt.Errorf("LIST %s: %w", k.name, err)
			}
			if meta.LenList(l) == size {
				break
			}
			if time.Now().After(deadline) {
				return f, fmt.Errorf("LIST %s: %d objects after a minute, want the %d stored", k.name, meta.LenList(l), size)
			}
			time.Sleep(20 * time.Millisecond)
		}
		var ds []float64
		for range listRepeats {
			l := k.list()
			start := time.Now()
			if err := wl.c.List(ctx, l, rv0); err != nil {
				return f, fmt.Errorf("LIST %s: %w", k.name, err)
			}
			elapsed := time.Since(start)
			if got := meta.LenList(l); got != size {
				return f, fmt.Errorf("LIST %s: %d objects, want the %d stored", k.name, got, size)
			}
			ds = append(ds, float64(elapsed.Microseconds())/1000/float64(size))
		}
		slices.Sort(ds)
		if size == small {
			f.small = ds[len(ds)/2]
		} else {
			f.large = ds[len(ds)/2]
		}
	}
	return f, nil
}
