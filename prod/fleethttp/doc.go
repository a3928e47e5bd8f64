// Package fleethttp serves CoreOS fleet's HTTP API v1 (CoreOS fleet's HTTP API v1) from the hub's
// Unit and Machine objects (fleet.fleetsim.io), so upstream fleetctl's API driver and scripts
// that call the API with curl keep working: routes under /fleet/v1 and /v1-alpha, the JSON
// shapes and field names, the error envelope {"error":{"code","message"}}, the status codes of
// the spec's table, and pagination with nextPageToken.
//
// Every request is authenticated (a TLS client certificate the server's client CA signed: user
// = CN, groups = O; or a bearer token checked with the API server's TokenReview) and authorised
// per verb with a SubjectAccessReview on units or machines of fleet.fleetsim.io, both through
// k8s.io/apiserver's delegating authenticator and authorizer, which cache each review for a
// TTL (Access, auth.go); the hub then acts with its own identity.
//
// Upstream bugs fixed (docs/compatibility.md): desiredState is validated on update (400 rather
// than storing junk); pages are keyset pages (the token carries the last key returned, not an
// offset), so concurrent changes never skip or repeat an item that exists throughout, and no
// empty final page is returned when the total is a multiple of the page size.
package fleethttp
