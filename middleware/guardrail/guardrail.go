package guardrail

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/taxonomy"
)

// New returns the guardrail layer: every call through it passes the
// argument guardrails ([Args]) before the tool runs, and its result the
// result guardrails ([Result]) after, each in the order given; the first
// that blocks ends the call. Without any guardrail the layer is switched
// off. An invalid option makes a [toolmw.Reject] middleware (see
// [Validate]).
//
// The Middleware and the Tools it makes are safe for concurrent use.
func New(opts ...Option) toolmw.Middleware {
	cfg := newConfig(opts)
	if cfg.err != nil {
		return toolmw.Reject(cfg.err)
	}
	if len(cfg.args)+len(cfg.results) == 0 {
		return func(next toolmw.Tool) toolmw.Tool { return next }
	}
	l := &layer{config: cfg}
	return func(next toolmw.Tool) toolmw.Tool {
		return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
			return l.call(ctx, next, args)
		}
	}
}

// ArgsCheck looks at a call's arguments before the tool runs: nil lets the
// call go on, an error blocks it. It gets the call's context and its Call
// (the zero Call when the tool was not made by toolmw.Wrap). It must be safe
// for concurrent use and must not modify args.
//
// args is the arguments' JSON as the layer read it, with every string
// decoded (keys and values, at any depth): no \uXXXX or \/ escape and no
// white space between tokens hides content from a pattern; only what JSON
// must escape stays escaped, in one form (\" \\ \b \f \n \r \t, \u00xx).
// The tool itself gets the arguments as they were sent. A check that looks
// for content across escaped characters (a tab or a newline inside a
// value) reads each string whole with [ArgStrings] instead.
type ArgsCheck func(ctx context.Context, call toolmw.Call, args json.RawMessage) error

// ResultCheck looks at what a tool returned, after a successful call: nil
// lets the result enter the run, an error blocks it. It must be safe for
// concurrent use. A JSON result (res.JSON) is given as [ArgsCheck] is given
// the arguments, with every string decoded; a text result as it is. So are
// the result's parts: a JSON part's document decoded, every other part as
// it is (res.Parts is then a copy; do not modify it).
type ResultCheck func(ctx context.Context, call toolmw.Call, res toolmw.Result) error

// StringCheck looks at one string of a call's arguments or result, decoded:
// each key and string value at any depth, each number as written, or a
// text result whole. nil lets it through, an error blocks the call. It must
// be safe for concurrent use.
type StringCheck func(ctx context.Context, call toolmw.Call, s string) error

// Stage says when a guardrail checks: before the call (its arguments) or
// after it (its result).
type Stage uint8

// The stages.
const (
	StageArgs   Stage = iota + 1 // before the call: the arguments; nothing ran
	StageResult                  // after the call: the result; the tool ran
)

// String returns "args" or "result".
func (s Stage) String() string {
	switch s {
	case StageArgs:
		return "args"
	case StageResult:
		return "result"
	}
	return fmt.Sprintf("Stage(%d)", uint8(s))
}

// Block reports a call a guardrail blocked, for debugging: it is given to
// [WithOnBlock] and to nothing else. Err and Panic are what the check
// returned or panicked with, and may quote the arguments or the result:
// treat them as the content itself.
type Block struct {
	Guardrail string // the guardrail's name
	Stage     Stage  // before or after the call
	Tool      string // the tool's name
	CallID    string // the model's call id, or ""
	Err       error  // the check's error; nil when it panicked
	Panic     any    // the check's panic value, when it panicked (a panic(nil) is a *runtime.PanicNilError)
}

type check struct {
	name    string
	args    ArgsCheck
	result  ResultCheck
	strings StringCheck         // with stage, instead of args or result
	stage   Stage               // when it checks
	blocked *taxonomy.ToolError // the error of a block, made once
}

// Args adds a guardrail over the arguments: check runs before the tool,
// and an error from it ends the call as guardrail-blocked/guardrail_args
// naming the guardrail; the tool does not run. The name says what the
// guardrail checks (no_card_numbers); it follows the rule of codes
// ([taxonomy.ValidCode]), because it reaches spans, logs, events and the
// model, and it must be unique within the layer. A malformed or repeated
// name, or a nil check, is invalid.
func Args(name string, check ArgsCheck) Option {
	return func(c *config) {
		if c.add("Args", name, check == nil) {
			c.args = append(c.args, newCheck(name, StageArgs, check, nil, nil))
		}
	}
}

// Result adds a guardrail over the result: check runs after a successful
// call, and an error from it ends the call as
// guardrail-blocked/guardrail_result naming the guardrail; the tool ran, and
// its result does not enter the run. Names follow the rule of [Args].
func Result(name string, check ResultCheck) Option {
	return func(c *config) {
		if c.add("Result", name, check == nil) {
			c.results = append(c.results, newCheck(name, StageResult, nil, check, nil))
		}
	}
}

// ArgStrings adds a guardrail over each string of the arguments, decoded:
// every key and string value at any depth, and every number as written, in
// the order they come; the first the check returns an error for blocks the
// call as guardrail-blocked/guardrail_args, as [Args] does. No escape
// hides anything from it: it reads "card\u0020\u0034556…" as "card 4556…"
// and a tab as a tab. Names follow the rule of [Args].
func ArgStrings(name string, check StringCheck) Option {
	return func(c *config) {
		if c.add("ArgStrings", name, check == nil) {
			c.args = append(c.args, newCheck(name, StageArgs, nil, nil, check))
			c.values[0] = true
		}
	}
}

// ResultStrings adds a guardrail over each string of a result, after a
// successful call: for a JSON result, every key and string value, decoded,
// and every number as written; for a text result (or a JSON one that does
// not parse), the text whole. Then, part after part, the strings of the
// result's parts: a text part's and an embedded resource's text whole, a
// JSON part's strings as a JSON result's, and each part's name and URI
// (not empty strings, never an image's, audio's or file's bytes). An error blocks the result as
// guardrail-blocked/guardrail_result, as [Result] does. Names follow the
// rule of [Args].
func ResultStrings(name string, check StringCheck) Option {
	return func(c *config) {
		if c.add("ResultStrings", name, check == nil) {
			c.results = append(c.results, newCheck(name, StageResult, nil, nil, check))
			c.values[1] = true
		}
	}
}

func newCheck(name string, stage Stage, args ArgsCheck, result ResultCheck, strings StringCheck) check {
	ch := check{name: name, stage: stage, args: args, result: result, strings: strings}
	if stage == StageArgs {
		ch.blocked = taxonomy.New(taxonomy.KindGuardrailBlocked, taxonomy.CodeGuardrailArgs,
			fmt.Sprintf("the guardrail %s blocked the call's arguments; nothing ran", name))
	} else {
		ch.blocked = taxonomy.New(taxonomy.KindGuardrailBlocked, taxonomy.CodeGuardrailResult,
			fmt.Sprintf("the guardrail %s blocked the tool's result; the tool ran, and what it returned is withheld", name))
	}
	ch.blocked = ch.blocked.WithGuardrail(name).WithFinal()
	return ch
}

type layer struct{ config }

func (l *layer) call(ctx context.Context, next toolmw.Tool, args json.RawMessage) (toolmw.Result, error) {
	call, _ := toolmw.CallFrom(ctx)
	if len(l.args) > 0 {
		// The checks read the arguments decoded, within the spec's size
		// cap and MaxDepth: one pass, linear in their size.
		if maxBytes := maxArgsBytes(call); len(args) > maxBytes {
			return toolmw.Result{}, tooLarge(maxBytes)
		}
		d, err := read(args, l.values[0])
		if err != nil {
			return toolmw.Result{}, argsError(err)
		}
		for i := range l.args {
			if err := l.run(ctx, &l.args[i], call, json.RawMessage(d.text), toolmw.Result{}, d.values); err != nil {
				return toolmw.Result{}, err
			}
		}
	}
	res, err := next(ctx, args)
	if err != nil || len(l.results) == 0 {
		return res, err
	}
	view, values := res, []string{res.Content}
	if len(res.Parts()) > 0 && res.Content == "" && !res.JSON {
		values = nil // parts alone: no content to read (toolmw.Result.AllParts)
	}
	if res.JSON {
		if d, err := read([]byte(res.Content), l.values[1]); err == nil {
			if string(d.text) != res.Content {
				view.Content = string(d.text)
			}
			values = d.values
		}
	}
	if len(res.Parts()) > 0 {
		var parts []toolmw.Part
		parts, values = readParts(res.Parts(), values, l.values[1])
		view = view.WithParts(parts...)
	}
	for i := range l.results {
		if err := l.run(ctx, &l.results[i], call, nil, view, values); err != nil {
			return toolmw.Result{}, err
		}
	}
	return res, nil
}

// errDeadline ends a call whose deadline passed while a guardrail checked
// it: a timeout, not a block.
var errDeadline = taxonomy.Timeout(taxonomy.CodeDeadlineExceeded,
	"the caller's deadline passed while a guardrail checked the call", false)

// run runs one check and returns the call's error when it blocks: the
// guardrail's fixed error, never the check's own. A check that panics
// blocks (fails closed). A check that gave up because the caller cancelled
// or ran out of time ends the call as that cancellation or deadline, not as
// a block.
func (l *layer) run(ctx context.Context, ch *check, call toolmw.Call, args json.RawMessage, res toolmw.Result, values []string) error {
	value, panicked, err := ch.do(ctx, call, args, res, values)
	if err == nil && !panicked {
		return nil
	}
	if !panicked {
		if cerr := ctx.Err(); cerr != nil && errors.Is(err, cerr) {
			if cerr == context.DeadlineExceeded {
				return errDeadline
			}
			return cerr
		}
	}
	if l.onBlock != nil {
		l.tell(ctx, Block{Guardrail: ch.name, Stage: ch.stage, Tool: call.Tool, CallID: call.ID, Err: err, Panic: value})
	}
	return ch.blocked
}

// do runs the check, reporting a panic and its value instead of letting it
// go on.
func (ch *check) do(ctx context.Context, call toolmw.Call, args json.RawMessage, res toolmw.Result, values []string) (value any, panicked bool, err error) {
	panicked = true
	defer func() {
		if panicked {
			value = recover()
		}
	}()
	switch {
	case ch.args != nil:
		err = ch.args(ctx, call, args)
	case ch.result != nil:
		err = ch.result(ctx, call, res)
	default:
		for _, s := range values {
			if err = ch.strings(ctx, call, s); err != nil {
				break
			}
		}
	}
	panicked = false
	return nil, false, err
}

func (l *layer) tell(ctx context.Context, b Block) {
	defer func() { _ = recover() }()
	l.onBlock(ctx, b)
}

// readParts returns the parts a [ResultCheck] is given, each JSON part's
// document decoded as a JSON result's is (the tool's own slice when none
// changes), and values with the strings a [StringCheck] is given of them
// appended, part after part: a text part's or an embedded resource's text
// whole, a JSON part's keys, string values and numbers decoded (its text
// whole when it does not parse), then the part's name and URI. Empty
// strings and binary data (an image's, audio's, a file's bytes) are not
// given.
func readParts(parts []toolmw.Part, values []string, wantValues bool) ([]toolmw.Part, []string) {
	view := parts
	for i, p := range parts {
		switch {
		case p.Kind == toolmw.PartJSON:
			d, err := read([]byte(p.Text), wantValues)
			if err != nil {
				values = append(values, p.Text)
				break
			}
			if string(d.text) != p.Text {
				if &view[0] == &parts[0] {
					view = append([]toolmw.Part(nil), parts...)
				}
				view[i].Text = string(d.text)
			}
			values = append(values, d.values...)
		case p.Text != "":
			values = append(values, p.Text)
		}
		for _, s := range [...]string{p.Name, p.URI} {
			if s != "" {
				values = append(values, s)
			}
		}
	}
	return view, values
}
