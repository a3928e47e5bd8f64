package scenarios

// Decoding a scenario file into its one YAML document, with the YAML library's panics
// and syntax errors turned into Errors at the right line. Separate from nodes.go, which
// reads values from the decoded nodes, because it alone deals with yaml.v3's failure
// modes.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// document decodes the single YAML document of a scenario file and returns its root node.
func (p *parser) document(data []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	err := safely(func() error { return dec.Decode(&doc) })
	if errors.Is(err, io.EOF) {
		return nil, p.errorf(0, "", "the scenario is empty")
	}
	if err != nil {
		line, reason := yamlError(err)
		return nil, p.errorf(max(line, 1), "", "%s", reason)
	}
	var next yaml.Node
	switch err := safely(func() error { return dec.Decode(&next) }); {
	case errors.Is(err, io.EOF):
	case err != nil:
		line, reason := yamlError(err)
		return nil, p.errorf(max(line, 1), "", "%s", reason)
	default:
		return nil, p.errorf(max(next.Line, 1), "", "a scenario file holds one YAML document; found a second one (manifests go in a timeline step's apply)")
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, p.errorf(0, "", "the scenario is empty")
	}
	return resolve(doc.Content[0]), nil
}

// safely runs a call into a YAML or JSON library, turning a panic into an error, so that Parse
// never panics whatever the input.
func safely(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("yaml: the YAML library failed on this input: %v", r)
		}
	}()
	return f()
}

var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// parserProblems are the messages of yaml.v3's parser (as opposed to its scanner). For
// them yaml.v3 reports the 0-based line of the construct being parsed, one less than its
// 1-based line, so yamlError adds one.
var parserProblems = map[string]bool{
	"did not find expected ',' or ']'":       true,
	"did not find expected ',' or '}'":       true,
	"did not find expected '-' indicator":    true,
	"did not find expected <document start>": true,
	"did not find expected <stream-start>":   true,
	"did not find expected key":              true,
	"did not find expected node content":     true,
	"found duplicate %TAG directive":         true,
	"found duplicate %YAML directive":        true,
	"found incompatible YAML document":       true,
	"found undefined tag handle":             true,
}

// yamlError splits a YAML syntax error into its line (0 when it has none) and a reason.
func yamlError(err error) (int, string) {
	msg := strings.TrimSpace(err.Error())
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		if parserProblems[m[2]] {
			line++
		}
		return line, "invalid YAML: " + m[2]
	}
	return 0, "invalid YAML: " + strings.TrimPrefix(msg, "yaml: ")
}
