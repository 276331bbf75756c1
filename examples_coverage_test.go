package strata_test

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// noExampleYet lists the exported functions and methods of the root
// package still without an Example, with what is pending. The test fails
// once one of them has an Example, so that the entry goes.
var noExampleYet = map[string]string{}

// TestEveryFunctionHasAnExample fails for an exported function or method
// of the root package that has no Example (ExampleOpen, ExampleStore_Append,
// ExampleStore_Append_suffix, ...).
func TestEveryFunctionHasAnExample(t *testing.T) {
	fset := token.NewFileSet()
	paths, err := filepath.Glob("*.go")
	require.NoError(t, err)
	var files []*ast.File
	for _, path := range paths {
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		require.NoError(t, err)
		files = append(files, f)
	}
	pkg, err := doc.NewFromFiles(fset, files, "github.com/stratalog/strata")
	require.NoError(t, err)

	var missing, all []string
	check := func(name string, examples []*doc.Example) {
		all = append(all, name)
		switch {
		case len(examples) == 0 && noExampleYet[name] == "":
			missing = append(missing, name)
		case len(examples) > 0 && noExampleYet[name] != "":
			t.Errorf("%s has an Example now: remove it from noExampleYet", name)
		}
	}
	for _, f := range pkg.Funcs {
		check(f.Name, f.Examples)
	}
	for _, typ := range pkg.Types {
		for _, f := range typ.Funcs { // constructors, such as Open
			check(f.Name, f.Examples)
		}
		for _, m := range typ.Methods {
			check(typ.Name+"."+m.Name, m.Examples)
		}
	}
	require.Contains(t, all, "Open")
	require.Contains(t, all, "Store.Append")
	for name := range noExampleYet {
		require.Contains(t, all, name, "noExampleYet lists a function the package does not have")
	}
	slices.Sort(missing)
	require.Empty(t, missing, "exported functions and methods without an Example")
}
