// Package apitest owns the in-process stand-in for kube-apiserver that tests use to check
// objects against the committed CRDs (config/crd/bases): it runs the API server's own code
// from k8s.io/apiextensions-apiserver, without the server around it. For a CRD that is
// validation (structural schema, CEL compilation and cost budgets); for an object it is
// defaulting, pruning of unknown fields, OpenAPI schema validation and the CEL rules
// (transition rules on update). Metadata validation (names, labels) and admission webhooks
// are not run. Only tests import it.
package apitest
