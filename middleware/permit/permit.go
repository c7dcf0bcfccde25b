package permit

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/taxonomy"
)

// New returns the permission middleware: each call runs only if policy
// allows it. See the package documentation for how a denial is reported.
func New(policy Policy) toolmw.Middleware {
	if policy == nil {
		policy = denyAll
	}
	return func(next toolmw.Tool) toolmw.Tool {
		return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
			call, _ := toolmw.CallFrom(ctx)
			if err := policy(ctx, call); err != nil {
				return toolmw.Result{}, denial(ctx, err)
			}
			return next(ctx, args)
		}
	}
}

// Policy decides whether a call may run: nil allows it, an error denies it.
// It gets the call's context and its Call (the zero Call, with Tool "", when
// the tool was not made by toolmw.Wrap). A Policy must be safe for
// concurrent use.
type Policy func(ctx context.Context, call toolmw.Call) error

// errDenied is the denial of Allow and Deny, and of any untyped policy error.
var errDenied = taxonomy.NotPermitted(taxonomy.CodeNotPermitted, "the call is not permitted by policy")

// errDeadline is the error of a policy that gave up because the caller's
// deadline passed: a timeout, not a denial.
var errDeadline = taxonomy.Timeout(taxonomy.CodeDeadlineExceeded, "the caller's deadline passed", false)

// denial turns the policy's error into the call's error.
func denial(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil && errors.Is(err, cerr) {
		// The caller gave up or ran out of time: not a denial.
		if cerr == context.DeadlineExceeded {
			return errDeadline.WithCause(err)
		}
		return err
	}
	te, ok := taxonomy.From(err)
	if !ok || te.Kind() != taxonomy.KindNotPermitted {
		return errDenied.WithCause(err)
	}
	if e, ok := err.(*taxonomy.ToolError); ok {
		return e
	}
	return taxonomy.NotPermitted(te.Code(), errDenied.Message()).WithCause(err)
}

func denyAll(context.Context, toolmw.Call) error { return errDenied }

// Allow returns a policy that permits only the tools named.
func Allow(names ...string) Policy {
	set := toSet(names)
	return func(_ context.Context, call toolmw.Call) error {
		if _, ok := set[call.Tool]; ok {
			return nil
		}
		return errDenied
	}
}

// Deny returns a policy that permits every tool except those named.
func Deny(names ...string) Policy {
	set := toSet(names)
	return func(_ context.Context, call toolmw.Call) error {
		if _, ok := set[call.Tool]; ok {
			return errDenied
		}
		return nil
	}
}

func toSet(names []string) map[string]struct{} {
	set := make(map[string]struct{}, len(names))
	for _, n := range names {
		set[n] = struct{}{}
	}
	return set
}
