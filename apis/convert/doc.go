// Package convert owns every conversion between the production hub's API objects
// (prod/apis: KubeFleet's cluster.kubernetes-fleet.io and placement.kubernetes-fleet.io
// v1beta1 kinds) and the model's types, in both directions, in this one place.
//
// Every kind has a ToModel and a FromModel function. ToModel reads an API object (as the
// API server stores it, defaults applied or not) into the model.
//
// Where the model type is the whole object (overrides, staged update strategies, runs and
// approval requests, evictions and disruption budgets carry their metadata), FromModel
// rebuilds the object from it alone and nothing is lost either way.
//
// Where the model holds a view of the object (member clusters, placements, snapshots,
// bindings, Works), FromModel also takes the object it came from as base (nil to build a new
// one) and keeps from it what the model does not carry: server metadata (uid,
// resourceVersion, creationTimestamp, owner references, foreign labels, annotations and
// finalizers), a MemberCluster's identity, drift and diff details, observation times, a
// Work's status. Where the model carries a field in a lossy form (a heartbeat period of 0
// meaning the default, a quantity written "1000m" or "1", an unset score), FromModel keeps
// base's spelling as long as it means what the model says. The contract, which the tests
// check on the documentation's manifests and on model values, is:
//
//   - FromModel(ToModel(obj), obj) == obj: nothing is lost or respelled;
//   - ToModel(FromModel(m, nil)) == m: every model field has its place in the API;
//   - FromModel(ToModel(obj), nil) differs from obj only in the fields the model does not
//     carry, which each function lists;
//   - what FromModel writes is accepted by the API server with the committed CRDs.
//
// Conversions that read labels, annotations or embedded manifests can meet values that do
// not parse (a label that is not a number, a manifest that is not a JSON object, an
// incomplete snapshot group); they return an error naming the object and the field.
//
// Well-known label and annotation names are the API package's (v1beta1.CRPTrackingLabel and
// the like); what fleetsim records beyond KubeFleet uses the fleetsim.io/ prefix.
package convert
