// Package hub runs the shared hub controllers of model/hub against a real Kubernetes API
// server through controller-runtime. Each reconcile reads the objects a controller needs,
// converts them to the model with prod/convert, runs the same controller code the simulator
// runs, and writes back only what changed.
//
// So far it runs the membership controller (MembershipReconciler): join, heartbeat health and
// leave of MemberClusters, with each member's reserved namespace and RBAC from
// prod/memberaccess. The placement controllers are not wired yet.
package hub
