package r4c_test

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"io/fs"
	"strings"
	"testing"
)

// TestEveryExportedNameIsDocumented parses the library's packages (those of the other modules
// too: it only reads their files) and fails on any exported
// type, function, method, constant or variable without a doc comment.
func TestEveryExportedNameIsDocumented(t *testing.T) {
	// The public packages of every module, and the internal ones the integrations share.
	for _, dir := range []string{".", "r4ctest", "r4chttp", "r4cprom", "r4cotel", "r4cgrpc",
		"internal/metrics", "internal/metricstest", "internal/edge"} {
		fset := token.NewFileSet()
		pkgs, err := parser.ParseDir(fset, dir, func(fi fs.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, pkg := range pkgs {
			files := make([]*ast.File, 0, len(pkg.Files))
			for _, f := range pkg.Files {
				files = append(files, f)
			}
			p, err := doc.NewFromFiles(fset, files, "example.com/"+pkg.Name)
			if err != nil {
				t.Fatal(err)
			}
			if p.Doc == "" {
				t.Errorf("package %s has no doc comment", pkg.Name)
			}
			check := func(kind, name, text string) {
				if ast.IsExported(name) && strings.TrimSpace(text) == "" {
					t.Errorf("%s: %s %s has no doc comment", dir, kind, name)
				}
			}
			values := func(vs []*doc.Value) {
				for _, v := range vs {
					for _, n := range v.Names {
						check("value", n, v.Doc)
					}
				}
			}
			values(p.Consts)
			values(p.Vars)
			for _, f := range p.Funcs {
				check("func", f.Name, f.Doc)
			}
			for _, typ := range p.Types {
				check("type", typ.Name, typ.Doc)
				values(typ.Consts)
				values(typ.Vars)
				for _, f := range typ.Funcs {
					check("func", f.Name, f.Doc)
				}
				for _, m := range typ.Methods {
					check("method", typ.Name+"."+m.Name, m.Doc)
				}
			}
		}
	}
}
