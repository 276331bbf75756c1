package strata

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestExportedAPIIsReachable: no exported function, method, field or type
// of a package users may import (every one but internal/ and the sinks)
// names an unexported type or a type of an internal package in its
// signature, which a caller outside the module could not name or make.
func TestExportedAPIIsReachable(t *testing.T) {
	fset := token.NewFileSet()
	files := map[string][]*ast.File{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "internal" || isSink(name)) {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil && path != "." {
				return filepath.SkipDir // a nested module
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(filepath.Dir(path))
		files[pkg] = append(files[pkg], f)
		return nil
	})
	require.NoError(t, err)
	require.Contains(t, files, ".", "the walk must find the root package")
	require.Contains(t, files, "partition")
	var bad []string
	for pkg, fs := range files {
		for _, f := range fs {
			for _, b := range unreachable(f) {
				bad = append(bad, display(strings.TrimPrefix(pkg, "."))+": "+b)
			}
		}
	}
	sort.Strings(bad)
	require.Empty(t, bad)
}

// TestUnreachable checks the checker on made-up files, so that
// TestExportedAPIIsReachable can fail.
func TestUnreachable(t *testing.T) {
	tests := []struct {
		name, src string
		want      int
	}{
		{"exported types", `func F(a int, b *T, c []map[string]T, d error, e any) (T, error) { return T{}, nil }; type T struct{}`, 0},
		{"unexported parameter", `func F(x t) {}; type t int`, 1},
		{"unexported result", `func F() *t { return nil }; type t int`, 1},
		{"internal type", `import "github.com/stratalog/strata/internal/kafkadir"; func F(f kafkadir.Files) {}`, 1},
		{"public package type", `import "github.com/stratalog/strata/vfs"; func F(fsys vfs.FS) {}`, 0},
		{"method of an exported type", `type T struct{}; func (T) M(x t) {}; type t int`, 1},
		{"method of an unexported type", `type u struct{}; func (u) M(x t) {}; type t int`, 0},
		{"unexported function", `func f(x t) {}; type t int`, 0},
		{"exported field", `type T struct{ F t; g t }; type t int`, 1},
		{"interface method", `type I interface{ M() t }; type t int`, 1},
		{"func type", `type F func(t) error; type t int`, 1},
		{"variable", `var V t; type t int`, 1},
		{"type parameters", `func F[K comparable, V any](m map[K]V) []K { return nil }; type G[E any] struct{ X E }; func (g *G[E]) M(e E) E { return e }`, 0},
		{"generic instance", `func F(x G[t]) {}; type G[E any] struct{}; type t int`, 1},
		{"variadic and channels", `func F(c chan<- t, xs ...t) {}; type t int`, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := "package p\n" + strings.ReplaceAll(tt.src, "; ", "\n")
			f, err := parser.ParseFile(token.NewFileSet(), "p.go", src, parser.SkipObjectResolution)
			require.NoError(t, err)
			require.Len(t, unreachable(f), tt.want, "%v", unreachable(f))
		})
	}
}

// unreachable lists the exported declarations of f whose signatures name
// a type a caller outside the module cannot name.
func unreachable(f *ast.File) []string {
	imports := map[string]string{} // name in the file → import path
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		name := path[strings.LastIndex(path, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		imports[name] = path
	}
	var bad []string
	check := func(where string, expr ast.Expr, params map[string]bool) {
		for _, what := range hiddenTypes(expr, imports, params) {
			bad = append(bad, fmt.Sprintf("%s names %s", where, what))
		}
	}
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() {
				continue
			}
			params := typeParams(d.Type.TypeParams)
			where := d.Name.Name
			if d.Recv != nil {
				recv, rparams := receiver(d.Recv.List[0].Type)
				if !ast.IsExported(recv) {
					continue // reachable only through an interface, if at all
				}
				for p := range rparams {
					params[p] = true
				}
				where = recv + "." + where
			}
			check(where, d.Type, params)
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					if s.Name.IsExported() {
						check(s.Name.Name, s.Type, typeParams(s.TypeParams))
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.IsExported() && s.Type != nil {
							check(n.Name, s.Type, nil)
						}
					}
				}
			}
		}
	}
	return bad
}

// typeParams returns the names of a declaration's type parameters.
func typeParams(list *ast.FieldList) map[string]bool {
	out := map[string]bool{}
	if list != nil {
		for _, f := range list.List {
			for _, n := range f.Names {
				out[n.Name] = true
			}
		}
	}
	return out
}

// receiver returns the type name of a method's receiver and the names it
// gives the type's parameters.
func receiver(expr ast.Expr) (string, map[string]bool) {
	if s, ok := expr.(*ast.StarExpr); ok {
		expr = s.X
	}
	params := map[string]bool{}
	switch e := expr.(type) {
	case *ast.IndexExpr:
		if id, ok := e.Index.(*ast.Ident); ok {
			params[id.Name] = true
		}
		expr = e.X
	case *ast.IndexListExpr:
		for _, i := range e.Indices {
			if id, ok := i.(*ast.Ident); ok {
				params[id.Name] = true
			}
		}
		expr = e.X
	}
	id, _ := expr.(*ast.Ident)
	if id == nil {
		return "", params
	}
	return id.Name, params
}

// predeclared are the predeclared types an identifier may name.
var predeclared = map[string]bool{
	"any": true, "bool": true, "byte": true, "comparable": true, "complex64": true, "complex128": true,
	"error": true, "float32": true, "float64": true, "int": true, "int8": true, "int16": true,
	"int32": true, "int64": true, "rune": true, "string": true, "uint": true, "uint8": true,
	"uint16": true, "uint32": true, "uint64": true, "uintptr": true,
}

// hiddenTypes lists the types in a type expression that a caller outside
// the module cannot name: unexported ones of the package, and those of an
// internal package. Exported fields of struct types and methods of
// interface types are followed; unexported ones are the package's own.
func hiddenTypes(expr ast.Expr, imports map[string]string, params map[string]bool) []string {
	var out []string
	var walk func(ast.Expr)
	fields := func(list *ast.FieldList, exportedOnly bool) {
		if list == nil {
			return
		}
		for _, f := range list.List {
			if exportedOnly && len(f.Names) > 0 && !ast.IsExported(f.Names[0].Name) {
				continue
			}
			if exportedOnly && len(f.Names) == 0 {
				// An embedded field: promoted only if its type is exported.
				name, _ := receiver(f.Type)
				if sel, ok := f.Type.(*ast.SelectorExpr); ok {
					name = sel.Sel.Name
				}
				if !ast.IsExported(name) {
					continue
				}
			}
			walk(f.Type)
		}
	}
	walk = func(e ast.Expr) {
		switch e := e.(type) {
		case *ast.Ident:
			if !e.IsExported() && !predeclared[e.Name] && !params[e.Name] {
				out = append(out, "the unexported type "+e.Name)
			}
		case *ast.SelectorExpr:
			if x, ok := e.X.(*ast.Ident); ok {
				if path := imports[x.Name]; strings.Contains(path, "/internal/") || strings.HasPrefix(path, "internal/") {
					out = append(out, "the internal type "+x.Name+"."+e.Sel.Name)
				}
			}
		case *ast.StarExpr:
			walk(e.X)
		case *ast.ParenExpr:
			walk(e.X)
		case *ast.Ellipsis:
			walk(e.Elt)
		case *ast.ArrayType:
			walk(e.Elt)
		case *ast.MapType:
			walk(e.Key)
			walk(e.Value)
		case *ast.ChanType:
			walk(e.Value)
		case *ast.IndexExpr:
			walk(e.X)
			walk(e.Index)
		case *ast.IndexListExpr:
			walk(e.X)
			for _, i := range e.Indices {
				walk(i)
			}
		case *ast.FuncType:
			fields(e.Params, false)
			fields(e.Results, false)
		case *ast.StructType:
			fields(e.Fields, true)
		case *ast.InterfaceType:
			fields(e.Methods, true)
		}
	}
	walk(expr)
	return out
}
