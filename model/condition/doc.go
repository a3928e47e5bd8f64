// Package condition owns the status-condition vocabulary every decision reports in: a
// condition as data (type, status, reason, message) and the type and reason names KubeFleet
// users read in `kubectl get` and `describe`. Drivers add timestamps and generations.
package condition
