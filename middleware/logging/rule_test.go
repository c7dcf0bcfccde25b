package logging_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The source rule: in the layer's source, no zerolog event and no slog
// record or call that may be written above DEBUG gets text from an error.
//
// An event chain is a chain of method calls x.M1(…).M2(…)…, or a call of
// slog.NewRecord. Its level is set by its first level method: Trace, Debug
// and DebugContext are debug; Info, Warn, Error, Fatal, Panic, Err, their
// slog …Context forms, With and WithGroup (a context: its fields go on
// every line) are not; WithLevel, Log, LogAttrs and slog.NewRecord are debug
// only when their level argument is literally zerolog.DebugLevel,
// zerolog.TraceLevel or slog.LevelDebug. A chain without a level method
// rooted at a variable takes the level of every chain assigned to that
// variable (not debug if any is not); rooted anywhere else (a parameter, a
// field), a chain that uses an event method (zerolog's, or a record's
// AddAttrs) is taken as not debug.
//
// After the level method, a chain that is not debug must not:
//  1. call Err, AnErr, Errs, Stack, Interface, Any, Fields, Object,
//     EmbedObject, RawJSON, RawCBOR, Stringer, Stringers, Msgf, MsgFunc,
//     Func or UpdateContext (errors, arbitrary values, formatting); nor be
//     made by Logger.Err; nor give slog an attribute that is not built in
//     place by slog.String, Int, Int64, Uint64, Float64, Bool, Duration or
//     Time (slog.Any, slog.Group, a key-value pair, an Attr variable: any
//     of them could carry an error);
//  2. add a field whose key is not a string literal, or whose key contains
//     message, msg, err, cause, detail, reason, panic, stack, text or desc;
//  3. pass Msg, or slog as its message, anything but a string literal or a
//     package constant;
//  4. pass any method an argument that mentions a selector named Error,
//     Message, Unwrap, Cause or Fields, or calls into package fmt or errors.
//
// And the fields of the line of a finished call are filled in one place, a
// callFields literal, whose values are held to rule 4 as well:
//  5. no value in a callFields literal mentions Error, Message, Unwrap,
//     Cause, Fields, fmt or errors.
type violation struct {
	pos  token.Position
	rule string
}

func (v violation) String() string { return fmt.Sprintf("%s: %s", v.pos, v.rule) }

type ruleStats struct{ debug, other int } // event chains seen, by level

// aboveDebugTypes are the struct types whose values are written above DEBUG.
var aboveDebugTypes = set("callFields")

var (
	debugMethods = set("Trace", "Debug", "DebugContext")
	levelMethods = set("Trace", "Debug", "Info", "Warn", "Error", "Fatal", "Panic", "Log", "Err", "With", "WithLevel",
		"DebugContext", "InfoContext", "WarnContext", "ErrorContext", "LogAttrs", "WithGroup", "NewRecord")
	// levelArg is the position of the level argument of the methods that take one.
	levelArg        = map[string]int{"WithLevel": 0, "Log": 1, "LogAttrs": 1, "NewRecord": 1}
	forbiddenMethod = set("Err", "AnErr", "Errs", "Stack", "Interface", "Any", "Fields", "Object", "EmbedObject",
		"RawJSON", "RawCBOR", "Stringer", "Stringers", "Msgf", "MsgFunc", "Func", "UpdateContext")
	eventMethods = set("Str", "Strs", "Stringer", "Stringers", "Bytes", "Hex", "RawJSON", "RawCBOR", "Err", "AnErr",
		"Errs", "Stack", "Interface", "Any", "Fields", "Object", "EmbedObject", "Dict", "Array", "Msg", "Msgf", "MsgFunc",
		"Send", "Func", "Int", "Int64", "Float64", "Bool", "Dur", "Time", "Uint64", "AddAttrs")
	// slogTyped are the slog attribute constructors whose value cannot be an error.
	slogTyped = set("String", "Int", "Int64", "Uint64", "Float64", "Bool", "Duration", "Time")
	// keyed methods take a field key as their first argument.
	keyedMethods  = set("Str", "Strs", "Stringer", "Stringers", "Bytes", "Hex", "RawJSON", "RawCBOR", "AnErr", "Errs", "Interface", "Any", "Object", "Dict", "Array", "Int", "Int64", "Float64", "Bool", "Dur", "Time", "Uint64")
	textKeyParts  = []string{"message", "msg", "err", "cause", "detail", "reason", "panic", "stack", "text", "desc"}
	textSelectors = set("Error", "Message", "Unwrap", "Cause", "Fields")
	textPackages  = set("fmt", "errors")
)

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

type link struct {
	name string
	args []ast.Expr
	pos  token.Pos
}

// flatten splits a call chain into its root and its method calls, first
// call first, marking every call of the chain as seen.
func flatten(call *ast.CallExpr, seen map[*ast.CallExpr]bool) (ast.Expr, []link) {
	var links []link
	var x ast.Expr = call
	for {
		c, ok := x.(*ast.CallExpr)
		if !ok {
			break
		}
		sel, ok := c.Fun.(*ast.SelectorExpr)
		if !ok {
			break
		}
		seen[c] = true
		links = append(links, link{sel.Sel.Name, c.Args, sel.Sel.Pos()})
		x = sel.X
	}
	for i, j := 0, len(links)-1; i < j; i, j = i+1, j-1 {
		links[i], links[j] = links[j], links[i]
	}
	return x, links
}

type class int

const (
	notEvent class = iota
	debugEvent
	otherEvent
)

// classify returns the level class of a chain and the index of its first
// field method.
func classify(root ast.Expr, links []link, vars map[string]class) (class, int) {
	for i, l := range links {
		if !levelMethods[l.name] {
			continue
		}
		if debugMethods[l.name] {
			return debugEvent, i + 1
		}
		if at, ok := levelArg[l.name]; ok && len(l.args) > at && isDebugLevel(l.args[at]) {
			return debugEvent, i + 1
		}
		return otherEvent, i + 1
	}
	if id, ok := root.(*ast.Ident); ok {
		if id.Name == "slog" {
			return notEvent, 0 // an attribute or value constructor, not a line
		}
		if c, ok := vars[id.Name]; ok {
			return c, 0
		}
	}
	for _, l := range links {
		if eventMethods[l.name] {
			return otherEvent, 0
		}
	}
	return notEvent, 0
}

func isDebugLevel(e ast.Expr) bool {
	sel, ok := e.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	if !ok {
		return false
	}
	switch pkg.Name {
	case "zerolog":
		return sel.Sel.Name == "DebugLevel" || sel.Sel.Name == "TraceLevel"
	case "slog":
		return sel.Sel.Name == "LevelDebug"
	}
	return false
}

// slogArgs returns the message and the attributes a slog call takes, by
// the method's name: nil for a zerolog method, which takes neither.
func slogArgs(l link) (msg ast.Expr, attrs []ast.Expr) {
	at := func(m int) (ast.Expr, []ast.Expr) {
		if len(l.args) <= m {
			return nil, nil
		}
		return l.args[m], l.args[m+1:]
	}
	switch l.name {
	case "NewRecord":
		msg, _ = at(2)
		return msg, nil
	case "Log", "LogAttrs":
		return at(2)
	case "Info", "Warn", "Error", "Debug":
		return at(0)
	case "InfoContext", "WarnContext", "ErrorContext", "DebugContext":
		return at(1)
	case "AddAttrs", "Add", "With":
		return nil, l.args
	}
	return nil, nil
}

// checkAttr returns the rule a slog attribute on a line that is not debug
// breaks, or "".
func checkAttr(a ast.Expr) string {
	const notInPlace = "rule 1: an attribute not built in place by slog.String, slog.Int, … on a line that is not debug"
	call, ok := a.(*ast.CallExpr)
	if !ok {
		return notInPlace
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return notInPlace
	}
	if pkg, ok := sel.X.(*ast.Ident); !ok || pkg.Name != "slog" {
		return notInPlace
	}
	if !slogTyped[sel.Sel.Name] {
		return "rule 1: slog." + sel.Sel.Name + " on a line that is not debug"
	}
	if len(call.Args) == 0 {
		return notInPlace
	}
	key, ok := stringLit(call.Args[0])
	if !ok {
		return "rule 2: a field key that is not a string literal"
	}
	if part := textKeyPart(key); part != "" {
		return fmt.Sprintf("rule 2: field %q (%s) on a line that is not debug", key, part)
	}
	return ""
}

// checkFiles applies the rule to the files.
func checkFiles(fset *token.FileSet, files []*ast.File) ([]violation, map[string]ruleStats) {
	consts := map[string]bool{}
	for _, f := range files {
		for _, d := range f.Decls {
			if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.CONST {
				for _, sp := range gd.Specs {
					for _, n := range sp.(*ast.ValueSpec).Names {
						consts[n.Name] = true
					}
				}
			}
		}
	}
	// The level class of each variable assigned an event, to a fixed point.
	vars := map[string]class{}
	for changed := true; changed; {
		changed = false
		for _, f := range files {
			ast.Inspect(f, func(n ast.Node) bool {
				as, ok := n.(*ast.AssignStmt)
				if !ok || len(as.Lhs) != len(as.Rhs) {
					return true
				}
				for i, rhs := range as.Rhs {
					id, ok := as.Lhs[i].(*ast.Ident)
					call, isCall := rhs.(*ast.CallExpr)
					if !ok || !isCall {
						continue
					}
					root, links := flatten(call, map[*ast.CallExpr]bool{})
					c, _ := classify(root, links, vars)
					if c != notEvent && vars[id.Name] < c {
						vars[id.Name] = c
						changed = true
					}
				}
				return true
			})
		}
	}

	var out []violation
	stats := map[string]ruleStats{} // by file
	seen := map[*ast.CallExpr]bool{}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			report := func(pos token.Pos, rule string) {
				out = append(out, violation{fset.Position(pos), rule})
			}
			if lit, ok := n.(*ast.CompositeLit); ok {
				if id, ok := lit.Type.(*ast.Ident); ok && aboveDebugTypes[id.Name] {
					for _, elt := range lit.Elts {
						if kv, ok := elt.(*ast.KeyValueExpr); ok {
							elt = kv.Value
						}
						if what := mentionsText(elt); what != "" {
							report(elt.Pos(), "rule 5: a "+id.Name+" value mentions "+what)
						}
					}
				}
				return true
			}
			call, ok := n.(*ast.CallExpr)
			if !ok || seen[call] {
				return true
			}
			root, links := flatten(call, seen)
			c, first := classify(root, links, vars)
			file := fset.Position(call.Pos()).Filename
			st := stats[file]
			switch c {
			case debugEvent:
				st.debug++
				stats[file] = st
				return true
			case notEvent:
				return true
			}
			st.other++
			stats[file] = st
			if first > 0 && links[first-1].name == "Err" {
				report(links[first-1].pos, "rule 1: Err on an event that is not debug")
			}
			for i, l := range links {
				if i < first-1 {
					continue // before the level method: the logger, not the line
				}
				if i >= first {
					if forbiddenMethod[l.name] {
						report(l.pos, "rule 1: "+l.name+" on an event that is not debug")
					}
					if keyedMethods[l.name] && len(l.args) > 0 {
						if key, ok := stringLit(l.args[0]); !ok {
							report(l.pos, "rule 2: a field key that is not a string literal")
						} else if part := textKeyPart(key); part != "" {
							report(l.pos, fmt.Sprintf("rule 2: field %q (%s) on an event that is not debug", key, part))
						}
					}
					if l.name == "Msg" && len(l.args) == 1 && !constantString(l.args[0], consts) {
						report(l.pos, "rule 3: Msg with text that is not constant on an event that is not debug")
					}
				}
				msg, attrs := slogArgs(l)
				if msg != nil && !constantString(msg, consts) {
					report(msg.Pos(), "rule 3: a slog message that is not constant on a line that is not debug")
				}
				for _, a := range attrs {
					if rule := checkAttr(a); rule != "" {
						report(a.Pos(), rule)
					}
				}
				for _, a := range l.args {
					if what := mentionsText(a); what != "" {
						report(a.Pos(), "rule 4: an argument mentions "+what+" on an event that is not debug")
					}
				}
			}
			return true
		})
	}
	return out, stats
}

func stringLit(e ast.Expr) (string, bool) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}

func constantString(e ast.Expr, consts map[string]bool) bool {
	if _, ok := stringLit(e); ok {
		return true
	}
	id, ok := e.(*ast.Ident)
	return ok && consts[id.Name]
}

func textKeyPart(key string) string {
	k := strings.ToLower(key)
	for _, p := range textKeyParts {
		if strings.Contains(k, p) {
			return p
		}
	}
	return ""
}

func mentionsText(e ast.Expr) string {
	var what string
	ast.Inspect(e, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok || what != "" {
			return what == ""
		}
		if textSelectors[sel.Sel.Name] {
			what = "." + sel.Sel.Name
		} else if pkg, ok := sel.X.(*ast.Ident); ok && textPackages[pkg.Name] {
			what = pkg.Name + "." + sel.Sel.Name
		}
		return what == ""
	})
	return what
}

func parseSnippet(t *testing.T, body string) (*token.FileSet, []*ast.File) {
	t.Helper()
	fset := token.NewFileSet()
	src := "package p\n\nconst msgConst = \"constant\"\n\nfunc f() {\n" + body + "\n}\n"
	f, err := parser.ParseFile(fset, "snippet.go", src, 0)
	if err != nil {
		t.Fatalf("snippet does not parse: %v\n%s", err, src)
	}
	return fset, []*ast.File{f}
}

// TestSourceRuleCatches: the checker finds each kind of breach.
func TestSourceRuleCatches(t *testing.T) {
	bad := map[string]string{
		"Err on warn":               `l.logger.Warn().Err(err).Msg("x")`,
		"message key":               `l.logger.Error().Str("message", m).Msg("x")`,
		"error_text key":            `l.logger.Info().Str("error_text", s).Send()`,
		"Msg of err.Error()":        `l.logger.Info().Msg(err.Error())`,
		"Msgf":                      `l.logger.Warn().Msgf("%s", s)`,
		"Logger.Err":                `l.logger.Err(err).Msg("x")`,
		"AnErr on WithLevel":        `l.logger.WithLevel(lvl).AnErr("why", err).Send()`,
		"fmt in a value":            `l.logger.Warn().Str("code", fmt.Sprint(err)).Msg("y")`,
		"Message selector":          `l.logger.Warn().Str("code", info.Message).Msg("y")`,
		"cause through Unwrap":      `l.logger.Error().Str("code", te.Unwrap().Error()).Send()`,
		"variable of WithLevel":     "e := l.logger.WithLevel(lvl)\ne = e.Str(\"code\", info.Code)\ne.Str(\"x\", te.Message()).Msg(\"x\")",
		"variable debug then warn":  "e := l.logger.Debug()\ne = l.logger.Warn()\ne.Str(\"error\", s).Send()",
		"event of unknown level":    `ev.Str("error", err.Error()).Send()`,
		"context field":             `l.logger.With().Str("err", s).Logger()`,
		"variable key":              `l.logger.Warn().Str(key, v).Msg("x")`,
		"Interface":                 `l.logger.Warn().Interface("v", err).Send()`,
		"WithLevel of Info":         `l.logger.WithLevel(zerolog.InfoLevel).Err(err).Send()`,
		"Msg of a variable":         `l.logger.Warn().Msg(text)`,
		"Stringer of an error type": `l.logger.Warn().Stringer("v", err).Send()`,
		// slog
		"slog key-value pair":         `logger.Warn("x", "code", err)`,
		"slog.Any":                    `logger.Error("x", slog.Any("v", err))`,
		"slog.Group":                  `logger.WarnContext(ctx, "x", slog.Group("g", slog.String("a", s)))`,
		"slog message of err.Error()": `logger.Info(err.Error())`,
		"slog message variable":       `slog.ErrorContext(ctx, text)`,
		"record error key":            "e := slog.NewRecord(now, level, msgConst, 0)\ne.AddAttrs(slog.String(\"error\", s))",
		"record value of Error":       "e := slog.NewRecord(now, slog.LevelWarn, msgConst, 0)\ne.AddAttrs(slog.String(\"code\", err.Error()))",
		"record message variable":     `e := slog.NewRecord(now, level, text, 0)`,
		"record attrs not in place":   "e := slog.NewRecord(now, level, msgConst, 0)\ne.AddAttrs(attrs...)",
		"record of unknown level":     `rec.AddAttrs(slog.String("cause", s))`,
		"record debug then info":      "d := slog.NewRecord(now, slog.LevelDebug, msgConst, 0)\nd = slog.NewRecord(now, slog.LevelInfo, msgConst, 0)\nd.AddAttrs(slog.String(\"error\", s))",
		"LogAttrs at info":            `logger.LogAttrs(ctx, slog.LevelInfo, "x", slog.String("cause", c))`,
		"Log of a variable level":     `logger.Log(ctx, level, "x", slog.String("code", te.Unwrap().Error()))`,
		"slog context field":          `logger = logger.With(slog.String("msg", m))`,
		"slog variable key":           `logger.Warn("x", slog.String(key, v))`,
		"callFields of error text":    `f := callFields{tool: c.Tool, code: err.Error()}`,
		"callFields of a message":     `f := callFields{code: info.Message}`,
	}
	for name, body := range bad {
		t.Run(name, func(t *testing.T) {
			vs, _ := checkFiles(parseSnippet(t, body))
			if len(vs) == 0 {
				t.Errorf("no violation found in:\n%s", body)
			}
		})
	}
}

// TestSourceRuleAllows: debug events may carry text; other events may carry
// identifiers and numbers.
func TestSourceRuleAllows(t *testing.T) {
	good := map[string]string{
		"debug chain":       `l.logger.Debug().Err(err).Str("message", m).Msg(err.Error())`,
		"trace chain":       `l.logger.Trace().Str("cause", te.Unwrap().Error()).Send()`,
		"WithLevel(debug)":  `l.logger.WithLevel(zerolog.DebugLevel).Err(err).Send()`,
		"warn with codes":   `l.logger.Warn().Str("code", info.Code).Str("kind", string(info.Kind)).Int("attempts", 2).Msg("tool call")`,
		"constant message":  `l.logger.Error().Bool("retryable", false).Msg(msgConst)`,
		"debug variable":    "if d := l.logger.Debug(); d != nil {\nd = d.Str(\"error\", err.Error())\nd.Msg(err.Error())\n}",
		"not a log call":    `s := err.Error(); _ = fmt.Sprint(s)`,
		"WithLevel numbers": "e := l.logger.WithLevel(lvl)\ne.Float64(\"duration_ms\", ms).Msg(\"tool call\")",
		// slog
		"slog debug":             `logger.Debug(err.Error(), "error", err, slog.Any("v", err))`,
		"slog DebugContext":      `logger.DebugContext(ctx, err.Error(), slog.Group("g", slog.String("cause", c)))`,
		"LogAttrs at debug":      `logger.LogAttrs(ctx, slog.LevelDebug, "x", slog.Any("err", err))`,
		"debug record":           "d := slog.NewRecord(now, slog.LevelDebug, err.Error(), 0)\nd.AddAttrs(slog.String(\"error\", t.Message()), slog.Any(\"v\", err))",
		"record with codes":      "e := slog.NewRecord(now, level, msgConst, 0)\ne.AddAttrs(slog.String(\"code\", f.code), slog.Int(\"attempts\", 2), slog.Float64(\"duration_ms\", ms))",
		"slog warn with codes":   `logger.Warn("tool call", slog.String("code", info.Code), slog.Bool("retryable", false))`,
		"callFields of codes":    `f := callFields{tool: c.Tool, code: info.Code, kind: info.Kind}`,
		"slog attr constructors": `a := slog.Int("attempts", n); _ = a`,
	}
	for name, body := range good {
		t.Run(name, func(t *testing.T) {
			if vs, _ := checkFiles(parseSnippet(t, body)); len(vs) != 0 {
				t.Errorf("violations in allowed code %v:\n%s", vs, body)
			}
		})
	}
}

// TestSourceRule holds the layer's own source to the rule: the shared code
// (logging.go) and both backends (zerolog.go, slog.go).
func TestSourceRule(t *testing.T) {
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	vs, stats := checkFiles(fset, files)
	for _, v := range vs {
		t.Error(v)
	}
	// Not vacuous: the checker saw the call line and the detail line of
	// each backend.
	for _, file := range []string{"zerolog.go", "slog.go"} {
		if st := stats[file]; st.other == 0 || st.debug == 0 {
			t.Errorf("in %s the checker saw %d event chains that are not debug and %d debug ones; want some of each", file, st.other, st.debug)
		}
	}
}
