package toolmw_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestDocsCiteExistingTests: every test, benchmark, fuzz test or example a
// document of the repository names (in backquotes: `TestX`, `BenchmarkY`)
// exists in some module's test files, or is a conformance kit's exported
// Test function (in a package named …test), so a promise never points at a
// test that was renamed or removed.
func TestDocsCiteExistingTests(t *testing.T) {
	defined := map[string]bool{}
	funcRE := regexp.MustCompile(`(?m)^func ((?:Test|Benchmark|Fuzz|Example)\w*)\(`)
	var docs []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && path != "." || d.Name() == "node_modules" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		switch {
		case strings.HasSuffix(path, "_test.go"),
			strings.HasSuffix(path, ".go") && strings.HasSuffix(filepath.Dir(path), "test"):
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, m := range funcRE.FindAllSubmatch(b, -1) {
				defined[string(m[1])] = true
			}
		case strings.HasSuffix(path, ".md"):
			docs = append(docs, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	citeRE := regexp.MustCompile("`((?:Test|Benchmark|Fuzz)[A-Z]\\w*)`")
	cited := 0
	for _, path := range docs {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var missing []string
		for _, m := range citeRE.FindAllSubmatch(b, -1) {
			cited++
			if name := string(m[1]); !defined[name] && !slices.Contains(missing, name) {
				missing = append(missing, name)
			}
		}
		if len(missing) > 0 {
			t.Errorf("%s cites tests that do not exist: %s", path, strings.Join(missing, ", "))
		}
	}
	if cited < 100 || len(defined) < 500 {
		t.Errorf("%d citations in %d documents, %d test functions: the scan found too little", cited, len(docs), len(defined))
	}
}
