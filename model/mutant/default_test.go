//go:build !fleetsim_mutants

package mutant

import (
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDefaultBuildHasNoSwitch checks what a build without the fleetsim_mutants tag (every
// production binary) compiles of this package: no package-level variable (nothing a
// mutant could be turned on with) and an On whose body is `return false`, which the
// compiler inlines so every guarded slip is dead code.
func TestDefaultBuildHasNoSwitch(t *testing.T) {
	pkg, err := build.Default.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	files := slices.Sorted(slices.Values(pkg.GoFiles))
	if diff := cmp.Diff([]string{"doc.go", "off.go"}, files); diff != "" {
		t.Errorf("files of the default build (-want +got):\n%s", diff)
	}
	fset := token.NewFileSet()
	var funcs []string
	for _, name := range files {
		f, err := parser.ParseFile(fset, filepath.Join(".", name), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.GenDecl:
				if d.Tok == token.VAR {
					t.Errorf("%s declares a package-level variable at %s: the default build must hold no switch", name, fset.Position(d.Pos()))
				}
			case *ast.FuncDecl:
				funcs = append(funcs, d.Name.Name)
				if d.Name.Name != "On" {
					continue
				}
				ret, ok := d.Body.List[0].(*ast.ReturnStmt)
				if len(d.Body.List) != 1 || !ok || len(ret.Results) != 1 {
					t.Fatalf("On in %s is not a single return statement", name)
				}
				if id, ok := ret.Results[0].(*ast.Ident); !ok || id.Name != "false" {
					t.Errorf("On in %s does not return the constant false", name)
				}
			}
		}
	}
	if diff := cmp.Diff([]string{"On"}, funcs); diff != "" {
		t.Errorf("functions of the default build (-want +got):\n%s", diff)
	}
	if On("rollout.maxUnavailablePlusOne") {
		t.Error("On is true in the default build")
	}
}
