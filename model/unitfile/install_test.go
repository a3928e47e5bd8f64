package unitfile

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseInstall(t *testing.T) {
	tests := []struct {
		name, text string
		has        bool
		want       Install
		pulledBy   map[string]bool
	}{
		{name: "no section", text: "[Service]\nExecStart=/bin/true\n", pulledBy: map[string]bool{"a.service": false}},
		{name: "wanted by one unit", text: "[Service]\nExecStart=/bin/true\n\n[Install]\nWantedBy=my.service\n", has: true,
			want: Install{WantedBy: []string{"my.service"}}, pulledBy: map[string]bool{"my.service": true, "other.service": false}},
		{name: "lists, repeats and a reset", text: "[Install]\nWantedBy=a.target b.service\nWantedBy=\nWantedBy=c.service d.service\nRequiredBy=e.service\nAlias=x.service y.service\nAlso=z.socket\n", has: true,
			want:     Install{WantedBy: []string{"c.service", "d.service"}, RequiredBy: []string{"e.service"}, Alias: []string{"x.service", "y.service"}, Also: []string{"z.socket"}},
			pulledBy: map[string]bool{"a.target": false, "d.service": true, "e.service": true, "x.service": false}},
		{name: "other keys only", text: "[Install]\nDefaultInstance=1\n", has: true, pulledBy: map[string]bool{"1": false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse(tt.text)
			if err != nil {
				t.Fatal(err)
			}
			if got := HasInstall(f); got != tt.has {
				t.Errorf("HasInstall = %v, want %v", got, tt.has)
			}
			got := ParseInstall(f)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseInstall (-want +got):\n%s", diff)
			}
			for n, want := range tt.pulledBy {
				if got.PulledInBy(n) != want {
					t.Errorf("PulledInBy(%s) = %v, want %v", n, !want, want)
				}
			}
		})
	}
	if HasInstall(nil) {
		t.Error("HasInstall(nil) = true")
	}
}
