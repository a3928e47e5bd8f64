// Package unitfile is the pure model of a CoreOS-fleet style systemd unit file.
//
// It owns:
//
//   - parsing unit file text into a [File] with the rules fleet used (sections, "#" and ";"
//     comment lines, trailing-backslash continuations, duplicate keys kept in order, the
//     2048-byte line limit), with errors of type [*ParseError] that carry a line number;
//   - refusing, in [Parse] and [File.Validate], the names and values that the real systemd
//     would read otherwise than fleet once the agent writes the file (systemd.go): what the
//     API shows is what systemd runs;
//   - the canonical serialization ([Serialize]) and the SHA1 unit hash ([File.Hash]) that
//     agents compare and the registry uses as a content address;
//   - unit name rules: [ValidateName], and templates ("foo@.service") and instances
//     ("foo@bar.service") through [SplitName], [IsTemplate], [IsInstance], [TemplateOf] and
//     [Instantiate];
//   - the systemd specifiers %n, %N, %p and %i ([ExpandSpecifiers]), which fleet applies to
//     [X-Fleet] values only;
//   - the [X-Fleet] section as a typed [XFleet] ([ParseXFleet]): MachineID, MachineMetadata,
//     MachineOf, Conflicts, Global and Replaces, the deprecated X-Condition* and X-Conflicts
//     keys, precedence between keys, and the combinations fleet rejects; plus the matching
//     helpers the scheduler and agents share ([Metadata.Matches], [MachineIDMatches],
//     [Conflicts], [Replaces]).
//
// It does not schedule, talk to systemd, or store anything: those decisions live in the
// engine, agent and API packages, which call into this one. Everything here is a pure,
// deterministic function of its arguments: no I/O, no clock, no package-level mutable state.
//
// The behaviour follows CoreOS fleet's unit files ("Unit file parsing"). Deliberate
// differences from upstream fleet are listed on the functions concerned.
package unitfile
