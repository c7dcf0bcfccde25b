package eino

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"

	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/compose"
	einoschema "github.com/cloudwego/eino/schema"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/taxonomy"
	"github.com/toolmw/toolmw/turn"
)

// Approval is the information of an Eino interrupt made by a call that
// waits for a person's approval: what the agent's caller reads from the
// interrupt (adk.InterruptInfo.InterruptContexts, or
// compose.ExtractInterruptInfo's InterruptContexts) to have a reviewer
// decide. [Approvals] collects them. It holds no argument values: the
// request's summary is read from the approval.Desk with the ID.
type Approval struct {
	// ID is the approval request's id, for approval.Desk's Get, Approve
	// and Deny.
	ID string
	// Tool is the tool the call asks for.
	Tool string
	// CallID is the model's id of the call, as toolmw.SafeCallID makes it.
	CallID string
}

// pause is what the adapter keeps of a paused call in Eino's checkpoint
// (tool.StatefulInterrupt's state), so that the resumed call is the same
// call: the idempotency key its approval request is filed under.
type pause struct {
	Key string
}

func init() {
	einoschema.RegisterName[*Approval]("toolmw_eino_approval")
	einoschema.RegisterName[*pause]("toolmw_eino_pause")
}

// Approvals returns the approvals waiting among an interrupt's contexts (an
// adk.AgentEvent's Action.Interrupted.InterruptContexts, or those of
// compose.ExtractInterruptInfo), in order; nil when none of them is a call
// of this package waiting for approval.
func Approvals(contexts []*compose.InterruptCtx) []Approval {
	var out []Approval
	for _, c := range contexts {
		if c == nil {
			continue
		}
		if a, ok := c.Info.(*Approval); ok && a != nil {
			out = append(out, *a)
		}
	}
	return out
}

// dispatcher runs one call through a Caller, as every path of this package
// does: the box's tools, and the user's own tools under a stack.
type dispatcher struct {
	countCalls bool
}

// call runs the call (id, name, args) through caller and returns its
// answer, and the error that ends the call for Eino: nil when the answer
// is for the model; an Eino interrupt when the call waits for approval
// (so the graph pauses, and on resume makes the same call again); a
// *turn.Stop when the run should stop.
//
// The call is bound to a key that survives the pause: a key derived from
// the context's run id, tool and call id when the run has an id, else one
// made at random; kept in the interrupt's state and used again when the
// call resumes. A context without a run gets one for the call, so that the
// approval layer can file its request.
func (d dispatcher) call(ctx context.Context, caller turn.Caller, id, name string, args json.RawMessage) (turn.Answer, error) {
	ctx, st := bind(ctx, name, id)
	answers := turn.Run(ctx, caller, []turn.Call{{ID: id, Name: name, Args: args}},
		turn.Options{MaxParallel: 1, CountCalls: d.countCalls})
	a := answers[0]
	err := turn.StopOf(ctx, answers)
	if err == nil {
		return a, nil
	}
	var stop *turn.Stop
	if errors.As(err, &stop) && stop.Kind == taxonomy.KindApprovalPending && len(stop.Approvals) == 1 {
		info := &Approval{ID: stop.Approvals[0], Tool: name, CallID: toolmw.SafeCallID(id)}
		return a, tool.StatefulInterrupt(ctx, info, st)
	}
	return a, err
}

// bind returns ctx bound to the call's key, and the state to keep if the
// call pauses.
func bind(ctx context.Context, name, id string) (context.Context, *pause) {
	st := resumed(ctx)
	if st == nil {
		st = &pause{Key: newKey(ctx, name, id)}
	}
	ctx = toolmw.WithIdempotencyKey(ctx, st.Key)
	if _, ok := budget.RunFrom(ctx); !ok {
		ctx = budget.WithRun(ctx)
	}
	return ctx, st
}

// resumed returns the state the call kept when it paused, or nil when it
// is not a call resumed after a pause of this package.
func resumed(ctx context.Context) *pause {
	was, has, st := tool.GetInterruptState[*pause](ctx)
	if !was || !has || st == nil || st.Key == "" {
		return nil
	}
	return st
}

// newKey returns the idempotency key of a call: derived from the run's id,
// the tool and the model's call id when the context's run has an id and
// the call an id (the same in every process), else random.
func newKey(ctx context.Context, name, id string) string {
	if run, ok := budget.RunFrom(ctx); ok && run.ID() != "" && id != "" {
		h := sha256.New()
		h.Write([]byte("toolmw eino call key\x00"))
		h.Write([]byte(run.ID()))
		h.Write([]byte{0})
		h.Write([]byte(name))
		h.Write([]byte{0})
		h.Write([]byte(id))
		return "eino_" + hex.EncodeToString(h.Sum(nil)[:16])
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	return "eino_" + hex.EncodeToString(b[:])
}

// argsOf returns the model's arguments as the box takes them: empty
// arguments (a call of a tool without parameters) as {}.
func argsOf(s string) json.RawMessage {
	if strings.TrimSpace(s) == "" {
		return json.RawMessage("{}")
	}
	return json.RawMessage(s)
}

// UnknownTool answers a call of a tool the agent does not have, for
// compose.ToolsNodeConfig.UnknownToolsHandler: with toolmw's typed
// tool-not-found, wrapped as untrusted data (the name shown only when it
// is a valid tool name), as a tool result, so the model can correct itself
// and the run goes on. Without a handler Eino ends the run with an error.
func UnknownTool(_ context.Context, name, _ string) (string, error) {
	return toolmw.ForModel(toolmw.Result{}, turn.NotOffered(name)), nil
}
