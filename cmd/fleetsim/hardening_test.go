package main

import (
	"strings"
	"testing"
)

// TestValidateRefusesBadFleetctlSteps: validate refuses a unit the run would refuse, with
// file:line: field: reason and exit 2.
func TestValidateRefusesBadFleetctlSteps(t *testing.T) {
	bad := write(t, "bad-unit.yaml", `name: bad-unit
duration: 10m
members:
  - name: m1
    kind: Machine
timeline:
  - at: 1m
    fleetctl:
      command: start
      unit: ../etc/passwd.service
      file: "[Service]\nExecStart=/bin/true\n"
`)
	code, out, errOut := run(t, "validate", bad)
	if code != exitInvalid || !strings.Contains(errOut, "bad-unit.yaml:10: timeline[0].fleetctl.unit: invalid unit name") {
		t.Errorf("validate = exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
}
