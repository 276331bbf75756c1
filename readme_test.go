package strata_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReadmeQuickstart checks that the README's first Go code block is
// ExampleOpen, which go test runs: the example's body from strata.Open on,
// with the README's directory "data" for the temporary one and the
// example's "// Output:" line left out.
func TestReadmeQuickstart(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	src, err := os.ReadFile("example_test.go")
	require.NoError(t, err)
	require.Equal(t, quickstartFromExample(t, string(src)), firstGoBlock(t, string(readme)),
		"the README's quickstart must be ExampleOpen (example_test.go): change both")
}

// TestReadmeQuickstartFails checks that the comparison tells a README that
// drifted from the example.
func TestReadmeQuickstartFails(t *testing.T) {
	src, err := os.ReadFile("example_test.go")
	require.NoError(t, err)
	want := quickstartFromExample(t, string(src))
	drifted := strings.Replace(want, `"order-1"`, `"order-2"`, 1)
	require.NotEqual(t, want, firstGoBlock(t, "# x\n\n```go\n"+drifted+"```\n"))
	require.Equal(t, want, firstGoBlock(t, "# x\n\n```go\n"+want+"```\n"))
}

// firstGoBlock returns the body of the first ```go block of a Markdown text.
func firstGoBlock(t *testing.T, md string) string {
	t.Helper()
	_, rest, ok := strings.Cut(md, "\n```go\n")
	require.True(t, ok, "no ```go block")
	block, _, ok := strings.Cut(rest, "\n```\n")
	require.True(t, ok, "an unterminated ```go block")
	return block + "\n"
}

// quickstartFromExample returns ExampleOpen's body as the README shows it.
func quickstartFromExample(t *testing.T, src string) string {
	t.Helper()
	_, body, ok := strings.Cut(src, "\nfunc ExampleOpen() {\n")
	require.True(t, ok, "no ExampleOpen")
	body, _, ok = strings.Cut(body, "\n}\n")
	require.True(t, ok)
	var b strings.Builder
	started := false
	for line := range strings.SplitSeq(body, "\n") {
		line = strings.TrimPrefix(line, "\t")
		if strings.Contains(line, "strata.Open(dir, ") {
			started = true
			line = strings.Replace(line, "strata.Open(dir, ", `strata.Open("data", `, 1)
		}
		if !started || line == "// Output:" {
			continue
		}
		b.WriteString(line + "\n")
	}
	require.True(t, started, "ExampleOpen does not call strata.Open(dir, …)")
	return b.String()
}

// TestReadmeErrorsListEverySentinel checks that the README's Errors section
// names every exported Err variable of the root package, and no Err name
// the package does not export.
func TestReadmeErrorsListEverySentinel(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(readme), "\n## Errors\n")
	require.True(t, ok, "no Errors section")
	section, _, _ = strings.Cut(section, "\n## ")
	listed := map[string]bool{}
	for _, m := range regexp.MustCompile("`(Err[A-Za-z]+)`").FindAllStringSubmatch(section, -1) {
		listed[m[1]] = true
	}

	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	exported := map[string]bool{}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		require.NoError(t, err)
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			for _, s := range g.Specs {
				for _, n := range s.(*ast.ValueSpec).Names {
					if strings.HasPrefix(n.Name, "Err") && n.IsExported() {
						exported[n.Name] = true
					}
				}
			}
		}
	}
	require.NotEmpty(t, exported)
	require.Equal(t, exported, listed, "README ## Errors must list exactly the root package's Err variables")
}
