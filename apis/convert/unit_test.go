package convert_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/fleetsim/fleetsim/apis/convert"
)

func TestObjectName(t *testing.T) {
	seen := map[string]string{}
	for _, n := range []string{"web@.service", "web@1.service", "Web@1.service", "a.service", "-x-.service", "a..b.service",
		"foo_bar:baz\\x2d.service", "@.service", strings.Repeat("long", 60) + ".service", "UPPER.timer"} {
		o := convert.UnitObjectName(n)
		if errs := validation.IsDNS1123Subdomain(o); len(errs) > 0 {
			t.Errorf("UnitObjectName(%q) = %q: %v", n, o, errs)
		}
		if prev, ok := seen[o]; ok {
			t.Errorf("UnitObjectName(%q) = UnitObjectName(%q) = %q", n, prev, o)
		}
		seen[o] = n
		if convert.UnitObjectName(n) != o {
			t.Errorf("UnitObjectName(%q) is not stable", n)
		}
	}
	if got := convert.UnitObjectName("web@1.service"); !strings.HasPrefix(got, "web-1.service-") {
		t.Errorf("UnitObjectName(web@1.service) = %q, want a readable prefix", got)
	}
}
