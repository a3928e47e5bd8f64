// Package triggers owns the table of what wakes each hub controller: which change to which
// object queues which controller, for which keys. The simulator turns each entry into an
// event after a processing delay; the production hub turns the same entries into
// controller-runtime watches and event handlers. Keeping the table here means the two
// worlds cannot drift apart on when a decision is re-made.
package triggers
