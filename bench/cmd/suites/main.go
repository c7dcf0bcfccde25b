// Command suites measures scrub on other secret scanners' test data, read from checkouts of
// their repositories: trufflehog's detector tests (the input and the wanted findings of every
// test case in pkg/detectors/*/*_test.go, evaluated from the Go source: string literals,
// constants, +, fmt.Sprintf), Nosey Parker's rule examples and negative examples
// (crates/noseyparker/data/default/builtin/rules/*.yml) and secretlint's rule snapshots
// (packages/@secretlint/secretlint-rule-*/test/snapshots/*/output.json) and Kingfisher's rule
// examples (data/rules/*.yml), and ripsecrets' test files (test/one_per_line/*, one secret a
// line; test/one_per_file/*, one a file; test/none, none a line). None of them is in this
// repository; fetch them first (git clone, or the tool library's fetch).
//
//	cd bench
//	go run ./cmd/suites -trufflehog ~/src/trufflehog -noseyparker ~/src/noseyparker -secretlint ~/src/secretlint -kingfisher ~/src/kingfisher -ripsecrets ~/src/ripsecrets [-v]
//
// For each suite it prints what scrub finds, the way the suite counts:
//   - trufflehog: of the wanted values written verbatim in their input (at least 8 bytes), how
//     many are gone from scrub's output ("whole") and how many leave no 8-byte piece ("no
//     piece"). Values the detectors build from several parts are not counted.
//   - Nosey Parker: how many examples scrub changes, and how many negative examples it leaves
//     as they are. An example holds a secret; a negative example may still hold something
//     scrub redacts by design (a placeholder-free value after a secret-ish key).
//   - secretlint: of the findings its snapshots expect, how many leave no 8-byte piece in
//     scrub's output (a piece may remain in a negative sample of the same file), and how many
//     of its "ok" snapshots come back unchanged.
//   - Kingfisher: the value its rule's pattern captures in each example (the pattern's verbose
//     syntax turned into Go's; rules whose pattern Go's regexp cannot compile, or that match
//     nothing in the example, are counted apart), how many leave no 8-byte piece in scrub's
//     output (the whole value if shorter), split into the rules Kingfisher reports and those it
//     keeps hidden (visible: false: identifiers another rule depends on, not secrets); and how
//     many negative examples come back unchanged.
//   - ripsecrets: how many of its secrets (lines, files) scrub changes, and how many lines of
//     its file of non-secrets it leaves as they are (some hold what scrub redacts by design: a
//     URL's password, an e-mail address, a keyed value that repeats a pattern).
//
// -v prints each value missed and each negative sample changed.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf16"

	"gopkg.in/yaml.v3"

	"github.com/toolmw/toolmw/scrub"
)

var verbose = flag.Bool("v", false, "print each miss and each changed negative sample")

func main() {
	th := flag.String("trufflehog", "", "a checkout of github.com/trufflesecurity/trufflehog")
	np := flag.String("noseyparker", "", "a checkout of github.com/praetorian-inc/noseyparker")
	sl := flag.String("secretlint", "", "a checkout of github.com/secretlint/secretlint")
	kf := flag.String("kingfisher", "", "a checkout of github.com/mongodb/kingfisher")
	rs := flag.String("ripsecrets", "", "a checkout of github.com/sirwart/ripsecrets")
	flag.Parse()
	if *th == "" && *np == "" && *sl == "" && *kf == "" && *rs == "" {
		flag.Usage()
		os.Exit(2)
	}
	if *th != "" {
		trufflehog(filepath.Join(*th, "pkg", "detectors"))
	}
	if *np != "" {
		noseyParker(filepath.Join(*np, "crates", "noseyparker", "data", "default", "builtin", "rules"))
	}
	if *sl != "" {
		secretlint(filepath.Join(*sl, "packages", "@secretlint"))
	}
	if *kf != "" {
		kingfisher(filepath.Join(*kf, "data", "rules"))
	}
	if *rs != "" {
		ripsecrets(filepath.Join(*rs, "test"))
	}
}

// ripsecrets reads its test files: every line of test/one_per_line/* and every file of
// test/one_per_file/* holds a secret, no line of test/none does.
func ripsecrets(dir string) {
	read := func(path string) string {
		b, err := os.ReadFile(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, "suites:", err)
			os.Exit(1)
		}
		return string(b)
	}
	var pos, changed, neg, kept int
	try := func(name, s string) {
		pos++
		if scrub.String(s) != s {
			changed++
		} else if *verbose {
			fmt.Printf("ripsecrets miss %s %q\n", name, short(s))
		}
	}
	lines, _ := filepath.Glob(filepath.Join(dir, "one_per_line", "*"))
	for _, path := range lines {
		for _, l := range strings.Split(read(path), "\n") {
			if strings.TrimSpace(l) != "" {
				try(filepath.Base(path), l)
			}
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "one_per_file", "*"))
	for _, path := range files {
		try(filepath.Base(path), read(path))
	}
	for _, l := range strings.Split(read(filepath.Join(dir, "none")), "\n") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		neg++
		if out := scrub.String(l); out == l {
			kept++
		} else if *verbose {
			fmt.Printf("ripsecrets negative changed %q -> %q\n", short(l), short(out))
		}
	}
	if len(lines)+len(files) == 0 {
		fmt.Fprintln(os.Stderr, "suites: no ripsecrets test files in", dir)
		os.Exit(1)
	}
	fmt.Printf("ripsecrets: %d secrets (lines, files), changed %d (%.1f%%); %d lines without one, unchanged %d\n",
		pos, changed, pct(changed, pos), neg, kept)
}

// placeholders are scrub's placeholders in an output ([REDACTED:family]), which leak reads
// past: a family's name ("rubygems" in [REDACTED:rubygems_token]) is no piece of a value.
var placeholders = regexp.MustCompile(`\[REDACTED:[a-z0-9_]+\]`)

// leak returns an 8-byte piece of v that out still holds outside scrub's placeholders, or "".
func leak(out, v string) string {
	out = placeholders.ReplaceAllString(out, "\x00")
	for k := 0; k+8 <= len(v); k++ {
		if strings.Contains(out, v[k:k+8]) {
			return v[k : k+8]
		}
	}
	return ""
}

func short(s string) string {
	if len(s) > 160 {
		return s[:160] + "…"
	}
	return s
}

// trufflehog reads the test cases of every detector: composite literals with an input (or
// data, payload) field and a want (or expected) list, and functions that assign input and want.
func trufflehog(dir string) {
	var n, whole, noPiece, cases int
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || !strings.HasSuffix(p, "_test.go") || strings.Contains(p, "integration") {
			return nil
		}
		for _, c := range testCases(p) {
			cases++
			out := scrub.String(c.input)
			for _, w := range c.want {
				if len(w) < 8 || !strings.Contains(c.input, w) {
					continue
				}
				n++
				if !strings.Contains(out, w) {
					whole++
				}
				if l := leak(out, w); l == "" {
					noPiece++
				} else if *verbose {
					fmt.Printf("trufflehog miss %s %q in %q\n", filepath.Base(filepath.Dir(p)), short(w), short(out))
				}
			}
		}
		return nil
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	fmt.Printf("trufflehog: %d test cases; %d wanted values written verbatim: gone whole %d (%.1f%%), no 8-byte piece left %d (%.1f%%)\n",
		cases, n, whole, pct(whole, n), noPiece, pct(noPiece, n))
}

func pct(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

type testCase struct {
	input string
	want  []string
}

// testCases evaluates the test cases of one Go test file, as far as its string expressions
// are literals, constants and variables, +, fmt.Sprintf and strings.Repeat.
func testCases(path string) []testCase {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		return nil
	}
	vars := map[string]string{}
	for _, d := range f.Decls {
		if gd, ok := d.(*ast.GenDecl); ok {
			for _, sp := range gd.Specs {
				if vs, ok := sp.(*ast.ValueSpec); ok {
					for i, name := range vs.Names {
						if i < len(vs.Values) {
							if s, ok := eval(vs.Values[i], vars); ok {
								vars[name.Name] = s
							}
						}
					}
				}
			}
		}
	}
	var out []testCase
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		local := map[string]string{}
		for k, v := range vars {
			local[k] = v
		}
		var fn testCase
		haveIn, haveWant := false, false
		ast.Inspect(fd.Body, func(node ast.Node) bool {
			switch x := node.(type) {
			case *ast.AssignStmt:
				for i, l := range x.Lhs {
					id, ok := l.(*ast.Ident)
					if !ok || i >= len(x.Rhs) {
						continue
					}
					if s, ok := eval(x.Rhs[i], local); ok {
						local[id.Name] = s
						if id.Name == "input" {
							fn.input, haveIn = s, true
						}
					}
					if id.Name == "want" {
						if w, ok := evalList(x.Rhs[i], local); ok {
							fn.want, haveWant = w, true
						}
					}
				}
			case *ast.CompositeLit:
				var c testCase
				okIn, okWant := false, false
				for _, el := range x.Elts {
					kv, ok := el.(*ast.KeyValueExpr)
					if !ok {
						continue
					}
					key, ok := kv.Key.(*ast.Ident)
					if !ok {
						continue
					}
					switch key.Name {
					case "input", "data", "payload":
						c.input, okIn = eval(kv.Value, local)
					case "want", "expected":
						c.want, okWant = evalList(kv.Value, local)
					}
				}
				if okIn && okWant {
					out = append(out, c)
				}
			}
			return true
		})
		if haveIn && haveWant {
			out = append(out, fn)
		}
	}
	return out
}

func eval(e ast.Expr, vars map[string]string) (string, bool) {
	switch x := e.(type) {
	case *ast.BasicLit:
		if x.Kind == token.STRING {
			s, err := strconv.Unquote(x.Value)
			return s, err == nil
		}
		return x.Value, x.Kind == token.INT
	case *ast.Ident:
		s, ok := vars[x.Name]
		return s, ok
	case *ast.ParenExpr:
		return eval(x.X, vars)
	case *ast.BinaryExpr:
		if x.Op != token.ADD {
			return "", false
		}
		a, ok1 := eval(x.X, vars)
		b, ok2 := eval(x.Y, vars)
		return a + b, ok1 && ok2
	case *ast.CallExpr:
		sel, ok := x.Fun.(*ast.SelectorExpr)
		if !ok {
			return "", false
		}
		pkg, ok := sel.X.(*ast.Ident)
		if !ok {
			return "", false
		}
		var args []string
		for _, a := range x.Args {
			s, ok := eval(a, vars)
			if !ok {
				return "", false
			}
			args = append(args, s)
		}
		switch pkg.Name + "." + sel.Sel.Name {
		case "fmt.Sprintf":
			if len(args) == 0 {
				return "", false
			}
			rest := make([]any, len(args)-1)
			for i, a := range args[1:] {
				rest[i] = a
			}
			return fmt.Sprintf(strings.ReplaceAll(args[0], "%q", "%s"), rest...), true
		case "strings.Repeat":
			n, err := strconv.Atoi(args[1])
			return strings.Repeat(args[0], n), err == nil && n < 1<<16
		}
	}
	return "", false
}

func evalList(e ast.Expr, vars map[string]string) ([]string, bool) {
	cl, ok := e.(*ast.CompositeLit)
	if !ok {
		return nil, false
	}
	var out []string
	for _, el := range cl.Elts {
		s, ok := eval(el, vars)
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

// A rule of Nosey Parker's or Kingfisher's (a fork of it) rule files, whose format they share.
type rule struct {
	ID       string   `yaml:"id"`
	Pattern  string   `yaml:"pattern"`
	Visible  *bool    `yaml:"visible"`
	Examples []string `yaml:"examples"`
	Negative []string `yaml:"negative_examples"`
}

// readRules returns the rules of every *.yml file in dir; a file that does not read or parse is
// skipped.
func readRules(dir string) []rule {
	files, _ := filepath.Glob(filepath.Join(dir, "*.yml"))
	var rules []rule
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var doc struct {
			Rules []rule `yaml:"rules"`
		}
		if yaml.Unmarshal(b, &doc) != nil {
			continue
		}
		rules = append(rules, doc.Rules...)
	}
	return rules
}

// negatives counts r's negative examples into *neg and those scrub leaves unchanged into
// *kept, printing each changed one with -v.
func negatives(suite string, r rule, neg, kept *int) {
	for _, e := range r.Negative {
		*neg++
		if out := scrub.String(e); out == e {
			*kept++
		} else if *verbose {
			fmt.Printf("%s negative changed %s %q -> %q\n", suite, r.ID, short(e), short(out))
		}
	}
}

// noseyParker reads every rule's examples and negative examples.
func noseyParker(dir string) {
	var pos, changed, neg, kept int
	for _, r := range readRules(dir) {
		for _, e := range r.Examples {
			pos++
			if scrub.String(e) != e {
				changed++
			} else if *verbose {
				fmt.Printf("noseyparker miss %s %q\n", r.ID, short(e))
			}
		}
		negatives("noseyparker", r, &neg, &kept)
	}
	fmt.Printf("noseyparker: %d examples, changed %d (%.1f%%); %d negative examples, unchanged %d (%.1f%%)\n",
		pos, changed, pct(changed, pos), neg, kept, pct(kept, neg))
}

// secretlint reads the rule packages' snapshots; the ranges of its findings count UTF-16
// code units, as JavaScript's strings do.
func secretlint(dir string) {
	files, _ := filepath.Glob(filepath.Join(dir, "secretlint-rule-*", "test", "snapshots", "*", "output.json"))
	var n, found, ok, kept int
	for _, f := range files {
		rule := strings.TrimPrefix(f, dir)
		if strings.Contains(rule, "internal-test") || strings.Contains(rule, "preset") || strings.Contains(rule, "example") ||
			strings.Contains(rule, "rule-pattern") || strings.Contains(rule, "filter-comments") {
			continue // (test and composition packages, not rules of their own)
		}
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var o struct {
			Messages []struct {
				Range [2]int `json:"range"`
			} `json:"messages"`
			Source string `json:"sourceContent"`
		}
		if json.Unmarshal(b, &o) != nil || o.Source == "" {
			continue
		}
		out := scrub.String(o.Source)
		if len(o.Messages) == 0 {
			ok++
			if out == o.Source {
				kept++
			} else if *verbose {
				fmt.Printf("secretlint ok snapshot changed %s\n", rule)
			}
			continue
		}
		u := utf16.Encode([]rune(o.Source))
		for _, m := range o.Messages {
			if m.Range[0] < 0 || m.Range[1] > len(u) || m.Range[0] > m.Range[1] {
				continue
			}
			v := string(utf16.Decode(u[m.Range[0]:m.Range[1]]))
			n++
			if l := leak(out, v); l == "" {
				found++
			} else if *verbose {
				fmt.Printf("secretlint miss %s %q (%q left)\n", rule, short(v), l)
			}
		}
	}
	fmt.Printf("secretlint: %d expected findings, no 8-byte piece left %d (%.1f%%); %d ok snapshots, unchanged %d\n",
		n, found, pct(found, n), ok, kept)
}

// kingfisher reads every rule's pattern, examples and negative examples.
func kingfisher(dir string) {
	var n, gone, hidden, hiddenGone, noRegexp, noMatch, neg, kept int
	for _, r := range readRules(dir) {
		re, err := regexp.Compile(unverbose(r.Pattern))
		for _, e := range r.Examples {
			if err != nil {
				noRegexp++
				continue
			}
			v := captured(re, e)
			if v == "" {
				noMatch++
				continue
			}
			out := scrub.String(e)
			l := leak(out, v)
			if len(v) < 8 && strings.Contains(out, v) {
				l = v
			}
			if r.Visible != nil && !*r.Visible {
				hidden++
				if l == "" {
					hiddenGone++
				}
				continue
			}
			n++
			if l == "" {
				gone++
			} else if *verbose {
				fmt.Printf("kingfisher miss %s %q (%q left)\n", r.ID, short(e), l)
			}
		}
		negatives("kingfisher", r, &neg, &kept)
	}
	fmt.Printf("kingfisher: %d values of reported rules, no 8-byte piece left %d (%.1f%%); %d of hidden rules, %d (%.1f%%); "+
		"%d examples of rules Go cannot compile, %d their pattern does not match; %d negative examples, unchanged %d\n",
		n, gone, pct(gone, n), hidden, hiddenGone, pct(hiddenGone, hidden), noRegexp, noMatch, neg, kept)
}

// captured returns the first non-empty group of re's first match in s, or the whole match if
// re has no group.
func captured(re *regexp.Regexp, s string) string {
	m := re.FindStringSubmatch(s)
	if m == nil {
		return ""
	}
	for _, g := range m[1:] {
		if g != "" {
			return g
		}
	}
	return m[0]
}

// verboseFlag is a group of flags that sets x.
var verboseFlag = regexp.MustCompile(`\(\?([a-wyzA-Z]*)x([a-zA-Z]*)\)`)

// unverbose turns a pattern in Rust's verbose syntax ((?x): blanks ignored, '#' to the end
// of the line a comment, outside classes) into one Go's regexp reads.
func unverbose(p string) string {
	m := verboseFlag.FindStringSubmatchIndex(p)
	if m == nil {
		return p
	}
	flags := p[m[2]:m[3]] + p[m[4]:m[5]]
	if flags != "" {
		flags = "(?" + flags + ")"
	}
	p = p[:m[0]] + flags + p[m[1]:]
	var b strings.Builder
	class := 0
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '\\' && i+1 < len(p):
			if class == 0 && (p[i+1] == ' ' || p[i+1] == '#') {
				b.WriteByte(p[i+1]) // an escaped blank or '#' is itself
			} else {
				b.WriteString(p[i : i+2])
			}
			i++
			continue
		case class > 0:
			if c == '[' {
				class++
			} else if c == ']' {
				class--
			}
		case c == '[':
			class++
			if i+1 < len(p) && p[i+1] == ']' {
				b.WriteString("[]")
				i++
				continue
			}
			if i+2 < len(p) && p[i+1] == '^' && p[i+2] == ']' {
				b.WriteString("[^]")
				i += 2
				continue
			}
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			continue
		case c == '#':
			for i < len(p) && p[i] != '\n' {
				i++
			}
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}
