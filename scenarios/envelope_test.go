package scenarios

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetsim/fleetsim/model/resources"
)

// TestParseEnvelopes: an applied envelope is checked against its CRD's rules on data, as the
// API server checks it (ENV-CRDS, ENV-MAX-ENTRIES): at most resources.MaxEnvelopeEntries
// (50) entries, data present, each entry a manifest. What an envelope wraps is the work
// generator's to refuse (a reserved namespace, the wrong scope): the API server accepts such
// an envelope, and so does the parser.
func TestParseEnvelopes(t *testing.T) {
	envelope := func(kind, ns string, n int) string {
		var b strings.Builder
		b.WriteString("      apiVersion: placement.kubernetes-fleet.io/v1beta1\n      kind: " + kind + "\n      metadata: {name: env")
		if ns != "" {
			b.WriteString(", namespace: " + ns)
		}
		b.WriteString("}\n      data:\n")
		for i := range n {
			fmt.Fprintf(&b, "        e%05d.yaml: {apiVersion: v1, kind: ConfigMap, metadata: {name: c%d}}\n", i, i)
		}
		return b.String()
	}
	const head = "name: t\nduration: 1h\ntimeline:\n  - at: 0s\n    apply: |\n" // the manifest starts on line 6
	cases := []struct {
		name string
		src  string
		want string // the error; "" for none
	}{
		{"ResourceEnvelope of 20,000 entries", head + envelope("ResourceEnvelope", "app", 20000),
			"t.yaml:9: timeline[0].apply[0] (ResourceEnvelope env): data: Too many: 20000: must have at most 50 items"},
		{"ClusterResourceEnvelope of 51 entries", head + envelope("ClusterResourceEnvelope", "", resources.MaxEnvelopeEntries+1),
			"t.yaml:9: timeline[0].apply[0] (ClusterResourceEnvelope env): data: Too many: 51: must have at most 50 items"},
		{"ClusterResourceEnvelope of 50 entries", head + envelope("ClusterResourceEnvelope", "", resources.MaxEnvelopeEntries), ""},
		{"at v1beta1 only, data required", head + "      apiVersion: placement.kubernetes-fleet.io/v1beta1\n      kind: ResourceEnvelope\n      metadata: {name: env, namespace: app}\n",
			"t.yaml:6: timeline[0].apply[0] (ResourceEnvelope env): data: Required value"},
		{"an entry as text", head + "      apiVersion: placement.kubernetes-fleet.io/v1beta1\n      kind: ResourceEnvelope\n      metadata: {name: env, namespace: app}\n      data:\n        a.yaml: {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n        b.yaml: \"kind: ConfigMap\"\n",
			`t.yaml:11: timeline[0].apply[0] (ResourceEnvelope env): data[b.yaml]: Invalid value: "string": must be of type object: a manifest`},
		{"wrapping into kube-system is for the work generator to refuse", head + "      apiVersion: placement.kubernetes-fleet.io/v1beta1\n      kind: ResourceEnvelope\n      metadata: {name: env, namespace: app}\n      data:\n        a.yaml: {apiVersion: v1, kind: ConfigMap, metadata: {name: a, namespace: kube-system}}\n", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("t.yaml", []byte(tc.src))
			got := ""
			if err != nil {
				got = err.Error()
				var perr *Error
				if !errors.As(err, &perr) {
					t.Errorf("Parse() error %v is not an *Error", err)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Parse() error (-want +got):\n%s", diff)
			}
		})
	}
}
