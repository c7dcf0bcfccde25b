package genkit

import (
	"maps"

	"github.com/firebase/genkit/go/ai"
	"github.com/toolmw/toolmw/taxonomy"
)

// The keys of a paused call's interrupt metadata.
const (
	interruptKind     = "toolmw"   // taxonomy.KindApprovalPending
	interruptApproval = "approval" // the approval id
)

func pendingMetadata(id string) map[string]any {
	return map[string]any{interruptKind: string(taxonomy.KindApprovalPending), interruptApproval: id}
}

// Pending reports whether p is a tool request this package interrupted
// because the call waits for a person's approval, and returns the
// approval's id: the reviewer reads the request with approval.Desk.Get and
// decides it. p is one of ai.ModelResponse.Interrupts(), or a part of the
// last message of a saved history (its metadata survives a JSON round
// trip).
func Pending(p *ai.Part) (approvalID string, ok bool) {
	if !p.IsInterrupt() {
		return "", false
	}
	m, _ := p.Metadata["interrupt"].(map[string]any)
	if m[interruptKind] != string(taxonomy.KindApprovalPending) {
		return "", false
	}
	id, _ := m[interruptApproval].(string)
	return id, id != ""
}

// Restarts returns, for ai.WithToolRestarts, the tool requests of
// history's last message that wait for an approval ([Pending]), to run
// again once the reviewer has decided: the same tool, arguments and ref,
// so the same call (given the same run id in the context,
// budget.WithID) finds its decision and runs once if approved. history
// is the conversation of the paused generation (ai.ModelResponse.History,
// as saved), which the resumed genkit.Generate is given with
// ai.WithMessages. Interrupts of other origins (a tool's own
// ToolContext.Interrupt) are left to the caller, who answers them with
// ai.WithToolResponses or ai.WithToolRestarts as Genkit requires.
func Restarts(history []*ai.Message) []*ai.Part {
	if len(history) == 0 || history[len(history)-1] == nil {
		return nil
	}
	var out []*ai.Part
	for _, p := range history[len(history)-1].Content {
		if _, ok := Pending(p); ok {
			out = append(out, restart(p, nil))
		}
	}
	return out
}

// restart does what ai.ToolAction.Restart does: a copy of the tool
// request part p, marked resumed, its interrupt metadata dropped.
func restart(p *ai.Part, opts *ai.RestartOptions) *ai.Part {
	if p == nil || !p.IsToolRequest() || p.ToolRequest == nil {
		return nil
	}
	if opts == nil {
		opts = &ai.RestartOptions{}
	}
	input := p.ToolRequest.Input
	meta := maps.Clone(p.Metadata)
	if meta == nil {
		meta = map[string]any{}
	}
	meta["resumed"] = true
	if opts.ResumedMetadata != nil {
		meta["resumed"] = opts.ResumedMetadata
	}
	if opts.ReplaceInput != nil {
		meta["replacedInput"] = input
		input = opts.ReplaceInput
	}
	delete(meta, "interrupt")
	out := ai.NewToolRequestPart(&ai.ToolRequest{Name: p.ToolRequest.Name, Ref: p.ToolRequest.Ref, Input: input})
	out.Metadata = meta
	return out
}
