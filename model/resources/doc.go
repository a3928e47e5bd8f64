// Package resources owns what a placement delivers: selecting hub resources by group,
// version, kind, name or labels (a selected namespace brings every object in it; reserved
// namespaces and kinds never travel), stripping them to user content, and the immutable,
// indexed ClusterResourceSnapshots taken whenever that content changes.
package resources
