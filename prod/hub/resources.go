package hub

import (
	"context"
	"fmt"
	"slices"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	toolscache "k8s.io/client-go/tools/cache"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetsim/fleetsim/model/placement"
	"github.com/fleetsim/fleetsim/model/resources"
)

// ResourceLister reads the hub objects placements may select: the cluster-scoped objects of
// the kinds their selectors name and, for the namespaces they select, every propagatable
// namespaced object in those namespaces (the kinds come from discovery).
//
// With Informers set, Reader is the manager's cache: the first selection of a kind starts
// its informer, and OnChange then hears of every change to objects of that kind.
type ResourceLister struct {
	Reader    client.Reader
	Mapper    meta.RESTMapper
	Discovery discovery.DiscoveryInterface
	Informers ctrlcache.Informers
	OnChange  func(ctx context.Context, old, new client.Object)

	mu      sync.Mutex
	watched map[schema.GroupVersionKind]bool
}

// watch registers OnChange on the informer of gvk, once.
func (l *ResourceLister) watch(ctx context.Context, gvk schema.GroupVersionKind) error {
	if l.Informers == nil || l.OnChange == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.watched[gvk] {
		return nil
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	inf, err := l.Informers.GetInformer(ctx, u)
	if err != nil {
		return fmt.Errorf("informer for %s: %w", gvk, err)
	}
	obj := func(o any) client.Object {
		if d, ok := o.(toolscache.DeletedFinalStateUnknown); ok {
			o = d.Obj
		}
		c, _ := o.(client.Object)
		return c
	}
	bg := context.WithoutCancel(ctx)
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerDetailedFuncs{
		// The objects an informer lists when it starts are no change: it starts on a
		// placement's first selection, which reads them through it, or when the hub
		// starts, which decides every placement again (HubStarted). Waking the placements
		// that may select each of them cost a restarted hub seconds of its start at 1,000
		// placements (each object checked against every placement's selectors).
		AddFunc: func(o any, initial bool) {
			if !initial {
				l.OnChange(bg, nil, obj(o))
			}
		},
		UpdateFunc: func(o, n any) { l.OnChange(bg, obj(o), obj(n)) },
		DeleteFunc: func(o any) { l.OnChange(bg, obj(o), nil) },
	}); err != nil {
		return fmt.Errorf("watch %s: %w", gvk, err)
	}
	if l.watched == nil {
		l.watched = map[schema.GroupVersionKind]bool{}
	}
	l.watched[gvk] = true
	return nil
}

// Warm starts the informers of every namespaced kind a namespace selection lists, so the
// first placement that selects a namespace does not wait for two dozen informers to list
// and sync. Without Informers it does nothing.
func (l *ResourceLister) Warm(ctx context.Context) error {
	if l.Informers == nil || l.OnChange == nil {
		return nil
	}
	kinds, err := l.namespacedKinds()
	if err != nil {
		return err
	}
	for _, gvk := range kinds {
		if err := l.watch(ctx, gvk); err != nil {
			return err
		}
	}
	return nil
}

// perNamespaceDefaults are what the API server's controllers create in every namespace; a
// placement carries the namespace, and each member makes its own.
var perNamespaceDefaults = map[schema.GroupKind]string{
	{Kind: "ConfigMap"}:      "kube-root-ca.crt",
	{Kind: "ServiceAccount"}: "default",
}

// derivedKinds are kept by each cluster's own controllers from other objects (a Service's
// endpoints), so they are never placed.
var derivedKinds = map[schema.GroupKind]bool{
	{Kind: "Endpoints"}: true, {Group: "discovery.k8s.io", Kind: "EndpointSlice"}: true,
}

// Refresh forgets what discovery said, so kinds added since are listed too. It reports
// whether the namespaced kinds changed.
func (l *ResourceLister) Refresh() bool {
	before, _ := l.namespacedKinds()
	if c, ok := l.Discovery.(discovery.CachedDiscoveryInterface); ok {
		c.Invalidate()
	}
	after, err := l.namespacedKinds()
	return err == nil && !slices.Equal(before, after)
}

// List returns the objects the selectors can pick from.
func (l *ResourceLister) List(ctx context.Context, selectors []placement.ResourceSelector) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	seen := map[schema.GroupVersionKind]bool{}
	var nsSelectors []placement.ResourceSelector
	// names[gvk] are the objects of gvk the selectors name, unless one selects by labels
	// (nil): only those are read, not every object of the kind (a hub with a thousand
	// members holds two thousand namespaces).
	names := map[schema.GroupVersionKind][]string{}
	for _, sel := range selectors {
		gvk := schema.GroupVersionKind{Group: sel.Group, Version: sel.Version, Kind: sel.Kind}
		if ns, ok := names[gvk]; sel.Name != "" && (ns != nil || !ok) {
			names[gvk] = append(ns, sel.Name)
		} else {
			names[gvk] = nil
		}
	}
	for _, sel := range selectors {
		gvk := schema.GroupVersionKind{Group: sel.Group, Version: sel.Version, Kind: sel.Kind}
		if sel.Group == "" && sel.Kind == "Namespace" {
			nsSelectors = append(nsSelectors, sel)
		}
		if seen[gvk] || !resources.Propagatable(gvk) {
			continue
		}
		seen[gvk] = true
		mapping, err := l.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if meta.IsNoMatchError(err) {
			continue // a kind the hub does not serve selects nothing
		}
		if err != nil {
			return nil, err
		}
		if mapping.Scope.Name() != meta.RESTScopeNameRoot {
			continue // selectors pick cluster-scoped objects only
		}
		var objs []*unstructured.Unstructured
		if named := names[gvk]; named != nil {
			objs, err = l.get(ctx, gvk, named)
		} else {
			objs, err = l.list(ctx, gvk, "")
		}
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
	if len(nsSelectors) == 0 {
		return out, nil
	}
	var namespaces []*unstructured.Unstructured
	for _, o := range out {
		if o.GetKind() == "Namespace" && o.GroupVersionKind().Group == "" {
			namespaces = append(namespaces, o)
		}
	}
	picked, err := resources.Select(nsSelectors, namespaces)
	if err != nil || len(picked) == 0 {
		return out, nil // the placement controller reports selection errors itself
	}
	kinds, err := l.namespacedKinds()
	if err != nil {
		return nil, err
	}
	for _, ns := range picked {
		for _, gvk := range kinds {
			objs, err := l.list(ctx, gvk, ns.GetName())
			if err != nil {
				return nil, err
			}
			out = append(out, objs...)
		}
	}
	return out, nil
}

func (l *ResourceLister) list(ctx context.Context, gvk schema.GroupVersionKind, namespace string) ([]*unstructured.Unstructured, error) {
	if err := l.watch(ctx, gvk); err != nil {
		return nil, err
	}
	ul := &unstructured.UnstructuredList{}
	ul.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err := l.Reader.List(ctx, ul, client.InNamespace(namespace)); err != nil {
		return nil, fmt.Errorf("list %s: %w", gvk, err)
	}
	var out []*unstructured.Unstructured
	for i := range ul.Items {
		o := &ul.Items[i]
		if name, ok := perNamespaceDefaults[gvk.GroupKind()]; ok && o.GetName() == name {
			continue
		}
		o.SetGroupVersionKind(gvk)
		out = append(out, o)
	}
	return out, nil
}

// get reads the named cluster-scoped objects of gvk; those that do not exist are left out.
func (l *ResourceLister) get(ctx context.Context, gvk schema.GroupVersionKind, names []string) ([]*unstructured.Unstructured, error) {
	if err := l.watch(ctx, gvk); err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	for _, name := range slices.Compact(slices.Sorted(slices.Values(names))) {
		o := &unstructured.Unstructured{}
		o.SetGroupVersionKind(gvk)
		if err := l.Reader.Get(ctx, client.ObjectKey{Name: name}, o); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return nil, fmt.Errorf("get %s %s: %w", gvk, name, err)
		}
		o.SetGroupVersionKind(gvk)
		out = append(out, o)
	}
	return out, nil
}

// namespacedKinds are the preferred versions of every listable, propagatable namespaced kind.
func (l *ResourceLister) namespacedKinds() ([]schema.GroupVersionKind, error) {
	lists, err := l.Discovery.ServerPreferredNamespacedResources()
	if err != nil {
		// Also when only some groups failed: selecting without their kinds would snapshot
		// a namespace without its objects of those kinds, and members would delete them.
		if c, ok := l.Discovery.(discovery.CachedDiscoveryInterface); ok {
			c.Invalidate()
		}
		return nil, fmt.Errorf("discover namespaced kinds: %w", err)
	}
	var out []schema.GroupVersionKind
	for _, rl := range lists {
		gv, err := schema.ParseGroupVersion(rl.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range rl.APIResources {
			gvk := gv.WithKind(r.Kind)
			if !resources.Propagatable(gvk) || !canList(r) || derivedKinds[gvk.GroupKind()] {
				continue
			}
			out = append(out, gvk)
		}
	}
	return out, nil
}

func canList(r metav1.APIResource) bool {
	for _, v := range r.Verbs {
		if v == "list" {
			return true
		}
	}
	return false
}
