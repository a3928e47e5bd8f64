package fuzz

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDigestJSON: a summary's digest is a hex string in JSON (a number above 2^53 loses its
// last digits in most JSON readers), read back exactly; a number (older summaries) is read
// too, and anything else is refused.
func TestDigestJSON(t *testing.T) {
	out, err := json.Marshal(&Summary{Digest: 0xfedcba9876543210})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `"digest":"fedcba9876543210"`) {
		t.Errorf("summary JSON %s lacks the hex digest", out)
	}
	tests := []struct {
		in      string
		want    HexDigest
		wantErr bool
	}{
		{in: `"fedcba9876543210"`, want: 0xfedcba9876543210},
		{in: `"00000000000000ff"`, want: 0xff},
		{in: `18364758544493064720`, want: 0xfedcba9876543210},
		{in: `"xyz"`, wantErr: true},
		{in: `""`, wantErr: true},
		{in: `"1fedcba9876543210"`, wantErr: true},
		{in: `true`, wantErr: true},
	}
	for _, tc := range tests {
		var d HexDigest
		err := json.Unmarshal([]byte(tc.in), &d)
		if (err != nil) != tc.wantErr {
			t.Errorf("%s: error %v, want error %t", tc.in, err, tc.wantErr)
			continue
		}
		if diff := cmp.Diff(tc.want, d); !tc.wantErr && diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.in, diff)
		}
	}
}
