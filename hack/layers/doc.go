// Command layers checks the import arrows of docs/architecture.md and fails (exit 1) naming
// every import that breaks them. `make lint` runs it:
//
//	go run ./hack/layers
//
// The rules are one table (rules.go): a rule names the packages it binds (an import-path
// prefix of this module) and the imports they may not have (prefixes of this module or of
// any module). A second check reads what the production binaries link (every package they
// depend on, not only their direct imports) so that test harnesses stay out of them.
package main
