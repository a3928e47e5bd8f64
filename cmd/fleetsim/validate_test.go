package main

import (
	"strings"
	"testing"
)

// TestValidateRefusesWhatRunRefuses: a scenario `fleetsim run` would stop at because of
// what the file says (a fleetctl step the steps before it make invalid, a memberEdit on a
// Machine or with two objects) is refused by `fleetsim validate` too, and by run before it
// runs: exit 2 with file, line and field.
func TestValidateRefusesWhatRunRefuses(t *testing.T) {
	const head = "name: t\nduration: 10m\nmembers:\n  - name: c1\n  - name: db\n    kind: Machine\ntimeline:\n" // lines 1-7
	for _, tc := range []struct {
		name, steps, want string
	}{
		{"stop of a unit never submitted", "  - at: 1m\n    fleetctl: {command: stop, unit: a.service}\n",
			"t.yaml:9: timeline[0].fleetctl.unit: at 1m0s: cannot stop a.service (desired state none): unit does not exist; no earlier step submits it"},
		{"another file under a name in use", "  - at: 1m\n    fleetctl: {command: submit, unit: a.service, file: \"[Service]\\nExecStart=/bin/true\\n\"}\n" +
			"  - at: 2m\n    fleetctl: {command: submit, unit: a.service, file: \"[Service]\\nExecStart=/bin/false\\n\"}\n",
			"t.yaml:11: timeline[1].fleetctl.file: at 2m0s: unit a.service already exists with hash"},
		{"memberEdit on a Machine", "  - at: 1m\n    memberEdit: {member: db, object: \"{apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\"}\n",
			`t.yaml:9: timeline[0].memberEdit.member: member "db" is a Machine (members[1], line 5)`},
		{"memberEdit with two objects", "  - at: 1m\n    memberEdit:\n      member: c1\n      object: |\n        {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n        ---\n        {apiVersion: v1, kind: ConfigMap, metadata: {name: b}}\n",
			"t.yaml:14: timeline[0].memberEdit.object: a second YAML document starts at line 3 of the object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := write(t, "t.yaml", head+tc.steps)
			for _, cmd := range []string{"validate", "run"} {
				code, out, errOut := run(t, cmd, file)
				if code != exitInvalid || !strings.Contains(errOut, tc.want) {
					t.Errorf("fleetsim %s = exit %d, want %d and %q\nstdout: %s\nstderr: %s", cmd, code, exitInvalid, tc.want, out, errOut)
				}
			}
		})
	}
}
