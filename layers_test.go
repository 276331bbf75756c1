package strata

import (
	"fmt"
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

const modulePath = "github.com/stratalog/strata"

// layers is the layer table (the README's Layers): a package may import only
// module packages on lower rows. vfs sits below index because the index's
// memory mapping goes through the file-system seam.
var layers = map[string]int{
	"vfs":                 0,
	"internal/murmur2vec": 0, // test data: Kafka's murmur2 golden vectors
	"internal/wire":       0, // the field reader of the group and txn record formats
	"internal/cputime":    0, // benchmarks: the process's CPU time
	"internal/bubble":     0, // test helper: the goroutines of a synctest bubble
	"log":                 1,
	"index":               1,
	"segment":             2,
	"internal/kafkadir":   2, // test helper: Kafka-written partition directories
	"compaction":          3,
	"retention":           3,
	"partition":           4,
	"topic":               5,
	"group":               5,
	"txn":                 5, // transaction coordinator state and its record format
	"":                    6, // the root package strata
	"stratatest":          7, // test helpers over the root package
	"typed":               7, // Go values over the root package's records
}

// sinks are folders of the module whose packages nothing may import (bench/
// is a module of its own, outside the walk).
var sinks = []string{"examples"}

// TestLayers enforces the import direction of README's Layers: every module package
// has a row, imports only rows below its own, never imports a sink, and never
// imports the standard library's log package (the module's own log package
// shares its name; logging goes through log/slog).
func TestLayers(t *testing.T) {
	imports := moduleImports(t)
	require.Contains(t, imports, "", "the walk must find the root package")
	require.Empty(t, layerViolations(imports))
}

// TestLayerViolations checks the checker on made-up import graphs, so that
// TestLayers can fail.
func TestLayerViolations(t *testing.T) {
	tests := []struct {
		name    string
		imports map[string][]string
		want    int
	}{
		{"downward", map[string][]string{"segment": {modulePath + "/log", modulePath + "/index", "os"}}, 0},
		{"upward", map[string][]string{"segment": {modulePath + "/partition"}}, 1},
		{"same row", map[string][]string{"log": {modulePath + "/index"}}, 1},
		{"unknown package", map[string][]string{"util": nil}, 1},
		{"unknown import", map[string][]string{"partition": {modulePath + "/util"}}, 1},
		{"standard log", map[string][]string{"segment": {"log"}}, 1},
		{"sink imported", map[string][]string{"": {modulePath + "/examples/quickstart"}}, 1},
		{"sink imports anything", map[string][]string{"examples/quickstart": {modulePath}}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Len(t, layerViolations(tt.imports), tt.want)
		})
	}
}

// layerViolations lists every import that breaks the layer table.
func layerViolations(imports map[string][]string) []string {
	var bad []string
	for pkg, deps := range imports {
		if isSink(pkg) {
			continue
		}
		row, ok := layers[pkg]
		if !ok {
			bad = append(bad, fmt.Sprintf("package %q has no row in the layer table (layers_test.go, README Layers)", display(pkg)))
			continue
		}
		for _, dep := range deps {
			if dep == "log" {
				bad = append(bad, fmt.Sprintf("package %q imports the standard log package; use log/slog", display(pkg)))
				continue
			}
			rel, inModule := strings.CutPrefix(dep, modulePath)
			if !inModule {
				continue
			}
			rel = strings.TrimPrefix(rel, "/")
			depRow, known := layers[rel]
			switch {
			case isSink(rel):
				bad = append(bad, fmt.Sprintf("package %q imports the sink %q", display(pkg), rel))
			case !known:
				bad = append(bad, fmt.Sprintf("package %q imports %q, which has no row in the layer table", display(pkg), display(rel)))
			case depRow >= row:
				bad = append(bad, fmt.Sprintf("package %q (row %d) imports %q (row %d): imports must point to lower rows",
					display(pkg), row, display(rel), depRow))
			}
		}
	}
	sort.Strings(bad)
	return bad
}

func display(pkg string) string {
	if pkg == "" {
		return "strata"
	}
	return pkg
}

func isSink(pkg string) bool {
	first, _, _ := strings.Cut(pkg, "/")
	for _, s := range sinks {
		if first == s {
			return true
		}
	}
	return false
}

// moduleImports maps every package folder of the module (relative to the
// root, "" for the root) to the imports of its non-test files.
func moduleImports(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != "." && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			if path != "." {
				if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
					return filepath.SkipDir // a nested module (comparison benchmarks)
				}
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(filepath.Dir(path))
		if pkg == "." {
			pkg = ""
		}
		for _, imp := range f.Imports {
			p, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				return err
			}
			out[pkg] = append(out[pkg], p)
		}
		if _, ok := out[pkg]; !ok {
			out[pkg] = nil
		}
		return nil
	})
	require.NoError(t, err)
	for pkg := range out {
		sort.Strings(out[pkg])
	}
	return out
}

// TestLayerPrefixesNameEveryLayer: the prefixes storeErr drops are those of
// every package below the root (the layer table's rows, but for internal/
// helpers), so that a new layer's prefix cannot reach a Store's messages
// unnoticed.
func TestLayerPrefixesNameEveryLayer(t *testing.T) {
	for pkg, row := range layers {
		if row >= layers[""] || strings.HasPrefix(pkg, "internal/") {
			continue
		}
		require.Contains(t, layerPrefixes, pkg, "storeErr's layerPrefixes lack package %s", pkg)
	}
	require.Contains(t, layerPrefixes, "strata")
}
