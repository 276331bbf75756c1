package strata_test

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// noExampleYet lists the exported functions and methods of the packages
// TestEveryFunctionHasAnExample checks still without an Example, with what
// is pending. The test fails once one of them has an Example, so that the
// entry goes.
var noExampleYet = map[string]string{}

const modulePath = "github.com/stratalog/strata"

// TestEveryFunctionHasAnExample fails for an exported function or method
// without an Example (ExampleOpen, ExampleStore_Append,
// ExampleStore_Append_suffix, ...) in the root package, typed and
// stratatest. The root's type aliases (TopicID = topic.ID) count too: their
// methods, declared in the package aliased, are the root's API, and their
// Examples are the root's (ExampleTopicID_String).
func TestEveryFunctionHasAnExample(t *testing.T) {
	var missing, all []string
	for _, dir := range []string{".", "typed", "stratatest"} {
		prefix := ""
		if dir != "." {
			prefix = dir + "."
		}
		pkg, aliases := parseDoc(t, dir)
		examples := exampleNames(t, dir)
		check := func(name string) {
			name = prefix + name
			all = append(all, name)
			has := examples[strings.TrimPrefix(name, prefix)]
			switch {
			case !has && noExampleYet[name] == "":
				missing = append(missing, name)
			case has && noExampleYet[name] != "":
				t.Errorf("%s has an Example now: remove it from noExampleYet", name)
			}
		}
		for _, f := range pkg.Funcs {
			check(f.Name)
		}
		for _, typ := range pkg.Types {
			for _, f := range typ.Funcs { // constructors, such as Open
				check(f.Name)
			}
			for _, m := range typ.Methods {
				check(typ.Name + "." + m.Name)
			}
			if target, ok := aliases[typ.Name]; ok {
				for _, m := range aliasedMethods(t, target) {
					check(typ.Name + "." + m)
				}
			}
		}
	}
	for _, name := range []string{"Open", "Store.Append", "TopicID.String", "typed.NewReader", "stratatest.Open"} {
		require.Contains(t, all, name)
	}
	for name := range noExampleYet {
		require.Contains(t, all, name, "noExampleYet lists a function the packages do not have")
	}
	slices.Sort(missing)
	require.Empty(t, missing, "exported functions and methods without an Example")
}

// parseDoc returns the documentation of the package in dir, without its
// tests, and its type aliases of a type of another package of the module,
// by name: TopicID -> {"topic", "ID"}.
func parseDoc(t *testing.T, dir string) (*doc.Package, map[string][2]string) {
	t.Helper()
	fset := token.NewFileSet()
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	require.NoError(t, err)
	var files []*ast.File
	aliases := map[string][2]string{}
	for _, path := range paths {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		require.NoError(t, err)
		files = append(files, f)
		imports := map[string]string{} // name -> directory in the module
		for _, imp := range f.Imports {
			p := strings.Trim(imp.Path.Value, `"`)
			sub, ok := strings.CutPrefix(p, modulePath+"/")
			if !ok {
				continue
			}
			name := filepath.Base(sub)
			if imp.Name != nil {
				name = imp.Name.Name
			}
			imports[name] = sub
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.TYPE {
				continue
			}
			for _, s := range g.Specs {
				ts := s.(*ast.TypeSpec)
				sel, ok := ts.Type.(*ast.SelectorExpr)
				if !ts.Assign.IsValid() || !ok || !ts.Name.IsExported() {
					continue
				}
				if x, ok := sel.X.(*ast.Ident); ok && imports[x.Name] != "" {
					aliases[ts.Name.Name] = [2]string{imports[x.Name], sel.Sel.Name}
				}
			}
		}
	}
	pkg, err := doc.NewFromFiles(fset, files, modulePath)
	require.NoError(t, err)
	return pkg, aliases
}

// aliasedMethods returns the exported methods of the type target names
// ({"topic", "ID"}) in its own package.
func aliasedMethods(t *testing.T, target [2]string) []string {
	t.Helper()
	pkg, _ := parseDoc(t, target[0])
	var names []string
	for _, typ := range pkg.Types {
		if typ.Name != target[1] {
			continue
		}
		for _, m := range typ.Methods {
			names = append(names, m.Name)
		}
	}
	return names
}

// exampleNames returns the names the Examples of the tests in dir are
// for: ExampleStore_Append_suffix is for "Store.Append", ExampleOpen for
// "Open", Example for "".
func exampleNames(t *testing.T, dir string) map[string]bool {
	t.Helper()
	fset := token.NewFileSet()
	paths, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	require.NoError(t, err)
	names := map[string]bool{}
	for _, path := range paths {
		f, err := parser.ParseFile(fset, path, nil, 0)
		require.NoError(t, err)
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv != nil {
				continue
			}
			name, ok := strings.CutPrefix(fn.Name.Name, "Example")
			if !ok || (name != "" && !strings.HasPrefix(name, "_") && !ast.IsExported(name)) {
				continue
			}
			// Parts after the first that start in lower case are suffixes.
			parts := strings.Split(name, "_")
			keep := parts[:1]
			if len(parts) > 1 && parts[1] != "" && ast.IsExported(parts[1]) {
				keep = parts[:2]
			}
			names[strings.Join(keep, ".")] = true
		}
	}
	return names
}
