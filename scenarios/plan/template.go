package plan

// The scenario template: its helper functions, the instrumentation that counts its steps,
// and rendering one point within MaxTemplateSteps and MaxRenderedBytes. A template is a
// program; these bounds make every one of them end, and end small.

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/fleetsim/fleetsim/scenarios"
	"math"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"text/template"
	"text/template/parse"
)

var templateLineRE = regexp.MustCompile(`^template: scenario:(\d+):(?:\d+:)? ?(.*)$`)

var startedRE = regexp.MustCompile(`started at scenario:(\d+)`)

func templateError(err error) (int, string) {
	msg := err.Error()
	if m := templateLineRE.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		if s := startedRE.FindStringSubmatch(m[2]); s != nil {
			n, _ = strconv.Atoi(s[1])
		}
		return n, m[2]
	}
	return 0, strings.TrimPrefix(msg, "template: ")
}

// stepFunc is the function the instrumentation calls once per loop iteration and template
// call; it is a name no plan is expected to use.
const stepFunc = "_step"

// funcs are the template's helpers: seq a b (the integers a..b), add, sub, mul, div and mod
// (ints, refusing overflow). seq and the step counter are replaced per render (renderState),
// since they count against the render's budget; these are for parsing.
var funcs = template.FuncMap{
	"seq":    func(a, b int) ([]int, error) { return nil, errors.New("seq outside a render") },
	stepFunc: func(int) (string, error) { return "", nil },
	"add": func(a, b int) (int, error) {
		if s := a + b; (s > a) == (b > 0) {
			return s, nil
		}
		return 0, fmt.Errorf("add %d %d: overflows an integer", a, b)
	},
	"sub": func(a, b int) (int, error) {
		if s := a - b; (s < a) == (b > 0) {
			return s, nil
		}
		return 0, fmt.Errorf("sub %d %d: overflows an integer", a, b)
	},
	"mul": func(a, b int) (int, error) {
		if a == 0 || b == 0 {
			return 0, nil
		}
		if p := a * b; p/b == a && !(a == -1 && b == math.MinInt) && !(b == -1 && a == math.MinInt) {
			return p, nil
		}
		return 0, fmt.Errorf("mul %d %d: overflows an integer", a, b)
	},
	"div": func(a, b int) (int, error) {
		switch {
		case b == 0:
			return 0, errors.New("div by zero")
		case a == math.MinInt && b == -1:
			return 0, fmt.Errorf("div %d %d: overflows an integer", a, b)
		}
		return a / b, nil
	},
	"mod": func(a, b int) (int, error) {
		if b == 0 {
			return 0, errors.New("mod by zero")
		}
		return a % b, nil
	},
}

// instrument makes every loop of the parsed template count against the render's budget:
// each range body and each template (the scenario and every one it defines) starts with
// {{_step LINE}}, LINE being where the loop or the template is in the plan (or template
// file). Ranges are the template language's only loops and template calls its only
// recursion, so a render that stays within MaxTemplateSteps ends.
func (pl *Plan) instrument() error {
	line := func(pos parse.Pos) int {
		p := min(max(int(pos), 0), len(pl.Template))
		return pl.TemplateLine + strings.Count(pl.Template[:p], "\n")
	}
	step := func(line int) (*parse.ListNode, error) {
		t, err := template.New("step").Funcs(funcs).Parse(fmt.Sprintf("{{%s %d}}", stepFunc, line))
		if err != nil {
			return nil, err
		}
		return t.Tree.Root, nil
	}
	prepend := func(l *parse.ListNode, at int) (*parse.ListNode, error) {
		s, err := step(at)
		if err != nil {
			return nil, err
		}
		if l == nil {
			return s, nil
		}
		l.Nodes = append(s.Nodes, l.Nodes...)
		return l, nil
	}
	var walk func(n parse.Node) error
	walk = func(n parse.Node) error {
		var err error
		switch n := n.(type) {
		case *parse.ListNode:
			if n == nil {
				return nil
			}
			for _, c := range n.Nodes {
				if err := walk(c); err != nil {
					return err
				}
			}
		case *parse.IfNode:
			err = errors.Join(walk(n.List), walk(n.ElseList))
		case *parse.WithNode:
			err = errors.Join(walk(n.List), walk(n.ElseList))
		case *parse.RangeNode:
			if err = errors.Join(walk(n.List), walk(n.ElseList)); err == nil {
				n.List, err = prepend(n.List, line(n.Position()))
			}
		}
		return err
	}
	for _, t := range pl.tmpl.Templates() {
		if t.Tree == nil || t.Tree.Root == nil {
			continue
		}
		if err := walk(t.Tree.Root); err != nil {
			return err
		}
		var err error
		if t.Tree.Root, err = prepend(t.Tree.Root, line(t.Tree.Root.Position())); err != nil {
			return err
		}
	}
	return nil
}

// renderState is one render's budget: the steps left, and where they ran out.
type renderState struct {
	left, limit int
	// maxString is the largest string a function may make (the render's byte bound).
	maxString int
	// overAt is the line of the loop or definition whose step found the budget spent;
	// over says a step did.
	overAt int
	over   bool
}

func (st *renderState) step(line int) (string, error) {
	if st.left <= 0 {
		st.over, st.overAt = true, line
		return "", errStepBudget
	}
	st.left--
	return "", nil
}

var errStepBudget = errors.New("step budget exceeded")

// seq returns the integers a..b (none when b < a). It counts its values against the
// render's budget before making them, with arithmetic that cannot overflow:
// seq -9223372036854775807 9223372036854775807 has 2^64 - 1 values, not a negative number.
func (st *renderState) seq(a, b int) ([]int, error) {
	if b < a {
		return nil, nil
	}
	span := uint64(b) - uint64(a) // the values' count less one; exact for any a <= b
	if span >= uint64(st.left) {
		return nil, fmt.Errorf("seq %d %d: %s values, more than the %s steps left of the %s a render may take (MaxTemplateSteps)",
			a, b, countText(float64(span)+1), countText(float64(st.left)), countText(float64(st.limit)))
	}
	n := int(span) + 1
	st.left -= n
	out := make([]int, n)
	for k := range out {
		out[k] = a + k
	}
	return out, nil
}

// bytesPerStep is how many bytes a string-making function may copy for one step.
const bytesPerStep = 4096

// made charges a string-making call whose result is estimated at est bytes: refused when
// est exceeds the bound of a rendered scenario, else one step and one per bytesPerStep.
func (st *renderState) made(name string, est int) error {
	if est > st.maxString {
		return fmt.Errorf("%s: the result could be %s bytes or more, over the %s a rendered scenario may have (MaxRenderedBytes)", name, countText(float64(est)), countText(float64(st.maxString)))
	}
	cost := 1 + est/bytesPerStep
	if cost > st.left {
		return fmt.Errorf("%s: %s steps, more than the %s left of the %s a render may take (MaxTemplateSteps)", name, countText(float64(cost)), countText(float64(st.left)), countText(float64(st.limit)))
	}
	st.left -= cost
	return nil
}

// argsSize estimates how many bytes formatting args may take, at most 10 per byte of a
// string (%q, %x and the escapers grow text by up to 6) and 32 per number, stopping once
// past limit.
func argsSize(limit int, args ...any) int {
	n := 0
	var size func(v reflect.Value, depth int)
	size = func(v reflect.Value, depth int) {
		if n > limit {
			return
		}
		switch v.Kind() {
		case reflect.String:
			n += 10 * v.Len()
		case reflect.Slice, reflect.Array:
			n += 2
			for i := 0; i < v.Len() && n <= limit; i++ {
				size(v.Index(i), depth+1)
				n++
			}
		case reflect.Map:
			n += 5
			it := v.MapRange()
			for it.Next() && n <= limit {
				size(it.Key(), depth+1)
				size(it.Value(), depth+1)
				n += 2
			}
		case reflect.Interface, reflect.Pointer:
			if depth > 32 || v.IsNil() {
				n += 5
				return
			}
			size(v.Elem(), depth+1)
		default:
			n += 32
		}
	}
	for _, a := range args {
		if a == nil {
			n += 5
			continue
		}
		size(reflect.ValueOf(a), 0)
	}
	return n
}

// formatSize estimates the bytes a printf format adds to its arguments: its own length
// and every width and precision it asks for (a * asks for up to fmt's million).
func formatSize(format string) int {
	n := len(format)
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
	spec:
		for i++; i < len(format); i++ {
			switch c := format[i]; {
			case c == '*':
				n += 1_000_000
			case c >= '0' && c <= '9':
				j := i
				for j < len(format) && format[j] >= '0' && format[j] <= '9' {
					j++
				}
				w, err := strconv.Atoi(format[i:j])
				if err != nil || w > 1_000_000 {
					w = 1_000_000 // fmt refuses wider, writing %!(BADWIDTH)
				}
				n += w
				i = j - 1
			case strings.IndexByte("+-# .[]", c) < 0:
				break spec // the verb
			}
		}
	}
	return n
}

// bounded are the builtins that make strings, bounded: each estimates its result from its
// arguments before making it (refusing one over MaxRenderedBytes) and charges it to the
// steps, so that neither one call (printf "%1000000s%1000000s...") nor straight-line
// doubling ({{$x = printf "%s%s" $x $x}} forty times) can make gigabytes.
func (st *renderState) bounded() template.FuncMap {
	return template.FuncMap{
		"print": func(args ...any) (string, error) {
			if err := st.made("print", argsSize(st.maxString, args...)+len(args)); err != nil {
				return "", err
			}
			return fmt.Sprint(args...), nil
		},
		"println": func(args ...any) (string, error) {
			if err := st.made("println", argsSize(st.maxString, args...)+len(args)+1); err != nil {
				return "", err
			}
			return fmt.Sprintln(args...), nil
		},
		"printf": func(format string, args ...any) (string, error) {
			if err := st.made("printf", formatSize(format)+argsSize(st.maxString, args...)); err != nil {
				return "", err
			}
			return fmt.Sprintf(format, args...), nil
		},
		"html": func(args ...any) (string, error) {
			if err := st.made("html", argsSize(st.maxString, args...)); err != nil {
				return "", err
			}
			return template.HTMLEscaper(args...), nil
		},
		"js": func(args ...any) (string, error) {
			if err := st.made("js", argsSize(st.maxString, args...)); err != nil {
				return "", err
			}
			return template.JSEscaper(args...), nil
		},
		"urlquery": func(args ...any) (string, error) {
			if err := st.made("urlquery", argsSize(st.maxString, args...)); err != nil {
				return "", err
			}
			return template.URLQueryEscaper(args...), nil
		},
		"seq":    st.seq,
		stepFunc: st.step,
	}
}

// cappedBuffer holds a render's output, refusing to grow beyond max bytes.
type cappedBuffer struct {
	bytes.Buffer
	max  int
	over bool
}

var errRenderedTooLarge = errors.New("rendered scenario too large")

func (b *cappedBuffer) Write(p []byte) (int, error) {
	if b.Len()+len(p) > b.max {
		b.over = true
		return 0, errRenderedTooLarge
	}
	return b.Buffer.Write(p)
}

// render executes the template for one point's data within the plan's budgets; a failure
// is a *scenarios.Error-ready (line, reason) pair, line being in the template's file.
func (pl *Plan) render(data map[string]any) ([]byte, int, string) {
	st := &renderState{left: pl.maxSteps, limit: pl.maxSteps, maxString: pl.maxRendered}
	t, err := pl.tmpl.Clone()
	if err != nil {
		return nil, pl.TemplateLine, err.Error()
	}
	t.Funcs(st.bounded())
	out := &cappedBuffer{max: pl.maxRendered}
	err = t.Execute(out, data)
	switch {
	case err == nil:
		return out.Bytes(), 0, ""
	case out.over:
		return nil, pl.TemplateLine, fmt.Sprintf("renders more than %s bytes (MaxRenderedBytes); is a loop unbounded?", countText(float64(pl.maxRendered)))
	case st.over:
		return nil, st.overAt, fmt.Sprintf("takes more than %s steps (MaxTemplateSteps: loop iterations, template calls and seq values); this loop is where the budget ran out",
			countText(float64(pl.maxSteps)))
	}
	line, reason := templateError(err)
	return nil, pl.TemplateLine + max(line, 1) - 1, reason
}

// countText prints a count as scenarios do: with thousands separators, or in scientific
// notation from 10^18.
func countText(v float64) string { return scenarios.FormatCount(v) }
