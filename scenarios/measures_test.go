package scenarios

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

const groupHead = "name: t\nduration: 1h\nmembers:\n  - name: eu-{1..3}\n    labels: {region: eu}\n  - name: us-{1..2}\n    labels: {region: us}\n" // lines 1-7

const crpApply = `  - at: 1m
    name: create
    apply: |
      apiVersion: placement.kubernetes-fleet.io/v1beta1
      kind: ClusterResourcePlacement
      metadata: {name: app}
      spec:
        resourceSelectors: [{group: "", kind: Namespace, version: v1, name: app}]
`

// TestGroupSteps: every member step takes a name pattern or a label selector in place of
// a member name; the step keeps the group in Select and leaves the member name empty.
func TestGroupSteps(t *testing.T) {
	for _, tc := range []struct {
		name   string
		step   string
		action ActionKind
		want   *MemberSelector
		member string
	}{
		{"fail by pattern", "  - at: 1m\n    fail: {member: eu-*, mode: partition}\n", ActionFail, &MemberSelector{Pattern: "eu-*"}, ""},
		{"heal by selector", "  - at: 1m\n    heal: {selector: region=eu}\n", ActionHeal, &MemberSelector{Labels: "region=eu"}, ""},
		{"taint by pattern and selector", "  - at: 1m\n    taint: {member: 'eu-[12]', selector: region=eu, key: k}\n", ActionTaint, &MemberSelector{Pattern: "eu-[12]", Labels: "region=eu"}, ""},
		{"untaint by set selector", "  - at: 1m\n    untaint: {selector: 'region in (eu,us)', key: k}\n", ActionUntaint, &MemberSelector{Labels: "region in (eu,us)"}, ""},
		{"label by pattern", "  - at: 1m\n    label: {member: 'us-?', set: {tier: a}}\n", ActionLabel, &MemberSelector{Pattern: "us-?"}, ""},
		{"skew by selector", "  - at: 1m\n    skew: {selector: '!missing', offset: -10m}\n", ActionSkew, &MemberSelector{Labels: "!missing"}, ""},
		{"workload by selector", "  - at: 1m\n    workload: {selector: region=us, kind: Deployment, name: d, behavior: unavailable}\n", ActionWorkload, &MemberSelector{Labels: "region=us"}, ""},
		{"partition by selector", "  - at: 1m\n    partition: {selector: region=eu, for: 10m}\n", ActionPartition, &MemberSelector{Labels: "region=eu"}, ""},
		{"memberHealth by selector", "  - at: 1m\n    memberHealth: {selector: region=eu, healthy: false}\n", ActionMemberHealth, &MemberSelector{Labels: "region=eu"}, ""},
		{"memberHealth of one member", "  - at: 1m\n    memberHealth: {member: us-1, healthy: true}\n", ActionMemberHealth, nil, "us-1"},
		{"partition of one member", "  - at: 1m\n    partition: {member: us-1}\n", ActionPartition, nil, "us-1"},
		{"one member as before", "  - at: 1m\n    fail: {member: eu-2}\n", ActionFail, nil, "eu-2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse("t.yaml", []byte(groupHead+"timeline:\n"+tc.step))
			if err != nil {
				t.Fatal(err)
			}
			st := s.Timeline[0]
			if st.Action != tc.action {
				t.Fatalf("action %s, want %s", st.Action, tc.action)
			}
			if diff := cmp.Diff(tc.want, st.Select, cmpopts.IgnoreUnexported(MemberSelector{})); diff != "" {
				t.Errorf("Select (-want +got):\n%s", diff)
			}
			member := map[ActionKind]func() string{
				ActionFail: func() string { return st.Fail.Member }, ActionHeal: func() string { return st.Heal.Member },
				ActionTaint: func() string { return st.Taint.Member }, ActionUntaint: func() string { return st.Untaint.Member },
				ActionLabel: func() string { return st.Label.Member }, ActionSkew: func() string { return st.Skew.Member },
				ActionWorkload: func() string { return st.Workload.Member }, ActionPartition: func() string { return st.Partition.Member },
				ActionMemberHealth: func() string { return st.MemberHealth.Member },
			}[tc.action]()
			if member != tc.member {
				t.Errorf("member %q, want %q", member, tc.member)
			}
		})
	}
	s, err := Parse("t.yaml", []byte(groupHead+"timeline:\n  - at: 1m\n    partition: {selector: region=eu, for: 10m}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Timeline[0].Partition.For; got != 10*time.Minute {
		t.Errorf("partition for %s, want 10m", got)
	}
}

// TestMemberSelectorMatches: a pattern and a selector both have to match.
func TestMemberSelectorMatches(t *testing.T) {
	s, err := Parse("t.yaml", []byte(groupHead+"timeline:\n  - at: 1m\n    fail: {member: 'eu-[12]', selector: 'region=eu'}\n  - at: 1m\n    fail: {selector: 'region notin (eu)'}\n"))
	if err != nil {
		t.Fatal(err)
	}
	both, notEU := s.Timeline[0].Select, s.Timeline[1].Select
	for _, tc := range []struct {
		sel    *MemberSelector
		name   string
		labels map[string]string
		want   bool
	}{
		{both, "eu-1", map[string]string{"region": "eu"}, true},
		{both, "eu-3", map[string]string{"region": "eu"}, false},
		{both, "eu-1", map[string]string{"region": "us"}, false},
		{notEU, "us-1", map[string]string{"region": "us"}, true},
		{notEU, "x", nil, true},
		{notEU, "eu-1", map[string]string{"region": "eu"}, false},
	} {
		if got := tc.sel.Matches(tc.name, tc.labels); got != tc.want {
			t.Errorf("%s matches %s %v = %v, want %v", tc.sel, tc.name, tc.labels, got, tc.want)
		}
	}
}

// TestMeasuredExpectations: rollout, peakUnavailable and unhealthy as parsed.
func TestMeasuredExpectations(t *testing.T) {
	src := groupHead + "timeline:\n" + crpApply + `expect:
  - rollout: {placement: app, from: create, within: 5m}
  - rollout: {placement: app, from: 2m, by: 30m}
  - peakUnavailable: {placement: app, atMost: 25%}
  - peakUnavailable: {selector: region=eu, atMost: 2, from: 1m, until: 20m}
  - peakUnavailable: {atMost: 3}
  - unhealthy: {members: eu-*, atMost: 10m}
`
	s, err := Parse("t.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var got []any
	for _, e := range s.Expect {
		switch {
		case e.Rollout != nil:
			got = append(got, *e.Rollout)
		case e.Peak != nil:
			got = append(got, *e.Peak)
		case e.Unhealthy != nil:
			got = append(got, *e.Unhealthy)
		}
	}
	want := []any{
		RolloutExpectation{Placement: "app", From: time.Minute, FromStep: "create", Within: 5 * time.Minute},
		RolloutExpectation{Placement: "app", From: 2 * time.Minute, By: 30 * time.Minute, HasBy: true},
		PeakExpectation{Placement: "app", Percent: 25, IsPercent: true, Until: time.Hour},
		PeakExpectation{Group: &MemberSelector{Labels: "region=eu"}, AtMost: 2, From: time.Minute, Until: 20 * time.Minute},
		PeakExpectation{AtMost: 3, Until: time.Hour},
		UnhealthyExpectation{Group: &MemberSelector{Pattern: "eu-*"}, AtMost: 10 * time.Minute},
	}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreUnexported(MemberSelector{})); diff != "" {
		t.Errorf("expectations (-want +got):\n%s", diff)
	}
}

// TestGroupAndMeasureErrors: bad patterns, selectors, windows and limits are refused with
// line, field and reason.
func TestGroupAndMeasureErrors(t *testing.T) {
	withCRP := groupHead + "timeline:\n" + crpApply // lines 1-16
	for _, tc := range []struct {
		name string
		src  string
		want wantError
	}{
		{"a pattern matching nothing", groupHead + "timeline:\n  - at: 1m\n    fail: {member: ap-*}\n",
			wantError{10, "timeline[0].fail.member", `pattern "ap-*" matches no member`}},
		{"a malformed pattern", groupHead + "timeline:\n  - at: 1m\n    heal: {member: 'eu-[1'}\n",
			wantError{10, "timeline[0].heal.member", "not a valid name pattern"}},
		{"a malformed selector", groupHead + "timeline:\n  - at: 1m\n    heal: {selector: 'region in eu'}\n",
			wantError{10, "timeline[0].heal.selector", "is not a label selector"}},
		{"neither member nor selector", groupHead + "timeline:\n  - at: 1m\n    partition: {for: 1m}\n",
			wantError{10, "timeline[0].partition.member", "required"}},
		{"a partition for no time", groupHead + "timeline:\n  - at: 1m\n    partition: {member: eu-1, for: 0s}\n",
			wantError{10, "timeline[0].partition.for", "must be greater than 0"}},
		{"a step name used twice", groupHead + "timeline:\n  - at: 1m\n    name: a\n    heal: {member: eu-1}\n  - at: 2m\n    name: a\n    heal: {member: eu-1}\n",
			wantError{13, "timeline[1].name", `step name "a" is already used by the step at line 10`}},
		{"a rollout of a placement never created", withCRP + "expect:\n  - rollout: {placement: web, within: 1m}\n",
			wantError{18, "expect[0].rollout.placement", `no apply step of the timeline creates ClusterResourcePlacement "web"`}},
		{"a rollout from an unknown step", withCRP + "expect:\n  - rollout: {placement: app, from: update, within: 1m}\n",
			wantError{18, "expect[0].rollout.from", `"update" is neither the name of a timeline step`}},
		{"a rollout with within and by", withCRP + "expect:\n  - rollout: {placement: app, within: 1m, by: 5m}\n",
			wantError{18, "expect[0].rollout", "either within or by"}},
		{"a rollout by before from", withCRP + "expect:\n  - rollout: {placement: app, from: 10m, by: 5m}\n",
			wantError{18, "expect[0].rollout.by", "is before from"}},
		{"a measured expectation with at", withCRP + "expect:\n  - at: 5m\n    rollout: {placement: app, within: 1m}\n",
			wantError{18, "expect[0].at", "measured over the whole run and take no at"}},
		{"a peak of a placement and a group", withCRP + "expect:\n  - peakUnavailable: {placement: app, selector: a=b, atMost: 1}\n",
			wantError{18, "expect[0].peakUnavailable", "not both"}},
		{"a peak without a limit", withCRP + "expect:\n  - peakUnavailable: {placement: app}\n",
			wantError{18, "expect[0].peakUnavailable.atMost", "required"}},
		{"a peak percentage over 100", withCRP + "expect:\n  - peakUnavailable: {atMost: 120%}\n",
			wantError{18, "expect[0].peakUnavailable.atMost", "not a percentage"}},
		{"a peak count that is not a number", withCRP + "expect:\n  - peakUnavailable: {atMost: many}\n",
			wantError{18, "expect[0].peakUnavailable.atMost", "neither a count of clusters"}},
		{"a peak window upside down", withCRP + "expect:\n  - peakUnavailable: {atMost: 1, from: 20m, until: 10m}\n",
			wantError{18, "expect[0].peakUnavailable.until", "is before from"}},
		{"unhealthy without a group", withCRP + "expect:\n  - unhealthy: {atMost: 1m}\n",
			wantError{18, "expect[0].unhealthy", "needs members"}},
		{"unhealthy of a pattern matching nothing", withCRP + "expect:\n  - unhealthy: {members: ap-*, atMost: 1m}\n",
			wantError{18, "expect[0].unhealthy.members", `pattern "ap-*" matches no member`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, parseError(t, tc.src, tc.want)); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}
