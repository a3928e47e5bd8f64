// Package v1beta1 owns the production hub's cluster.kubernetes-fleet.io/v1beta1 API: the
// MemberCluster and InternalMemberCluster kinds as Go types, field for field as KubeFleet's,
// so KubeFleet manifests are accepted unchanged. The kubebuilder markers on the types are
// the API server's validation (enums, ranges, defaults), printer columns and short names;
// hack/generate.sh turns them into zz_generated.deepcopy.go and the CRDs under
// config/crd/bases. The types carry no behaviour: conversion to and from the model's
// member and hub types lives in prod/convert, decisions in model/.
//
// +kubebuilder:object:generate=true
// +groupName=cluster.kubernetes-fleet.io
package v1beta1
