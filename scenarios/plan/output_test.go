package plan

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/fleetsim/fleetsim/scenarios/input"
)

// outputPlan has 1 point (small) × 2 repetitions of a one-minute scenario.
const outputPlan = `name: out
repetitions: 2
sweep:
  members: [1, 2]
small:
  sweep: {members: [1]}
scenario: |
  name: s
  duration: 1m
  members:
    - name: m-{1..{{.members}}}
`

// TestTerminalSafeOutput: text from a plan file reaches the JSON, HTML and Markdown reports
// without control characters a terminal would obey; the JSON still means the same.
func TestTerminalSafeOutput(t *testing.T) {
	name := "evil\x1b]0;title\x07\u009b2J\u202e\x7f"
	text := strings.Replace(outputPlan, "name: out", "name: \"evil\\e]0;title\\a\\u009b2J\\u202e\\x7f\"\nquestion: \"why\\e[2J?\"", 1)
	pl, err := ParseWith("evil.yaml", []byte(text), ParseOptions{Small: true})
	if err != nil {
		t.Fatal(err)
	}
	if pl.Name != name {
		t.Fatalf("name %q, want %q", pl.Name, name)
	}
	res, err := pl.Execute(Options{})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Build(pl, res)
	if err != nil {
		t.Fatal(err)
	}
	var js, shard, html, md bytes.Buffer
	for _, err := range []error{rep.WriteJSON(&js), res.WriteJSON(&shard), rep.WriteHTML(&html, nil), rep.WriteMarkdown(&md, nil)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	for what, b := range map[string][]byte{"report JSON": js.Bytes(), "shard JSON": shard.Bytes(), "HTML": html.Bytes(), "Markdown": md.Bytes()} {
		if input.Printable(string(b)) != string(b) {
			t.Errorf("%s holds control characters: %q", what, b[:min(len(b), 200)])
		}
	}
	var back Results
	if err := json.Unmarshal(shard.Bytes(), &back); err != nil || back.Plan != name {
		t.Errorf("shard JSON reads back as plan %q (%v), want %q", back.Plan, err, name)
	}
	if !strings.Contains(md.String(), `evil\x1b]0;title\a\u009b2J\u202e\x7f`) {
		t.Errorf("Markdown does not show the name escaped:\n%s", md.String()[:200])
	}
}
