package plan

// Unused parameters: a parameter (or swept axis) the scenario template never reads changes
// nothing in the runs, so a sweep over it would report noise as an effect. The plan is
// refused instead, naming the parameter.

import (
	"text/template/parse"
)

// referenced returns the names the plan's templates read: the first field of .name,
// $.name and chains, and string arguments (index . "name").
func (pl *Plan) referenced() map[string]bool {
	ref := map[string]bool{}
	var walk func(n parse.Node)
	walk = func(n parse.Node) {
		switch n := n.(type) {
		case nil:
		case *parse.ListNode:
			if n == nil {
				return
			}
			for _, c := range n.Nodes {
				walk(c)
			}
		case *parse.ActionNode:
			walk(n.Pipe)
		case *parse.PipeNode:
			if n == nil {
				return
			}
			for _, c := range n.Cmds {
				walk(c)
			}
		case *parse.CommandNode:
			for _, a := range n.Args {
				walk(a)
			}
		case *parse.FieldNode:
			if len(n.Ident) > 0 {
				ref[n.Ident[0]] = true
			}
		case *parse.VariableNode:
			if len(n.Ident) > 1 && n.Ident[0] == "$" {
				ref[n.Ident[1]] = true
			}
		case *parse.ChainNode:
			walk(n.Node)
			if len(n.Field) > 0 {
				ref[n.Field[0]] = true
			}
		case *parse.StringNode:
			ref[n.Text] = true
		case *parse.IfNode:
			walk(n.Pipe)
			walk(n.List)
			walk(n.ElseList)
		case *parse.RangeNode:
			walk(n.Pipe)
			walk(n.List)
			walk(n.ElseList)
		case *parse.WithNode:
			walk(n.Pipe)
			walk(n.List)
			walk(n.ElseList)
		case *parse.TemplateNode:
			walk(n.Pipe)
		}
	}
	for _, t := range pl.tmpl.Templates() {
		if t.Tree != nil {
			walk(t.Tree.Root)
		}
	}
	return ref
}
