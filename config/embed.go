package config

import "embed"

// HubCRDs are the CRDs a hub API server serves (crd/bases/*.yaml).
//
//go:embed crd/bases/*.yaml
var HubCRDs embed.FS

// MemberCRDs are the CRDs a member cluster serves for its agent (member/crd/*.yaml).
//
//go:embed member/crd/*.yaml
var MemberCRDs embed.FS
