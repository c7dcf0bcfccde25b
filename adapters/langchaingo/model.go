package langchaingo

import (
	"context"

	"github.com/tmc/langchaingo/llms"
)

// Model returns m so that the functions an agent declares for the box's
// tools carry their real input schemas. langchaingo's OpenAI functions
// agent (agents.NewOpenAIFunctionsAgent) declares every tool as a
// function of one string, "__arg1", and passes the model's string on as
// the tool's input; through Model, each function of llms.WithFunctions
// whose name is one of the box's tools goes to m with the box's
// description, its schema in the profile of [WithProfile] and Strict under
// schema.OpenAIStrict, so the model writes the arguments themselves (which
// the agent then passes on whole, and replays in the conversation as the
// model wrote them). Other functions, and llms.WithTools, are left as they
// are.
//
// The returned model has m's GenerateContent and Call only: an interface
// m has beyond llms.Model (llms.ReasoningModel …) is not visible through
// it.
func (t *Tools) Model(m llms.Model) llms.Model {
	return &model{inner: m, t: t}
}

type model struct {
	inner llms.Model
	t     *Tools
}

var _ llms.Model = (*model)(nil)

// GenerateContent asks the wrapped model, with the box's functions given
// their schemas.
func (m *model) GenerateContent(ctx context.Context, messages []llms.MessageContent, options ...llms.CallOption) (*llms.ContentResponse, error) {
	opts := append(append(make([]llms.CallOption, 0, len(options)+1), options...), m.withSchemas)
	return m.inner.GenerateContent(ctx, messages, opts...)
}

// Call asks the wrapped model with a single prompt.
func (m *model) Call(ctx context.Context, prompt string, options ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, options...)
}

// withSchemas replaces the functions of the box's tools with the box's
// definitions, in a new slice.
func (m *model) withSchemas(o *llms.CallOptions) {
	if len(o.Functions) == 0 {
		return
	}
	fns := make([]llms.FunctionDefinition, len(o.Functions))
	for i, f := range o.Functions {
		fns[i] = f
		for j := range m.t.defs {
			if d := &m.t.defs[j]; d.name == f.Name {
				fns[i] = *d.function(m.t.opts.profile)
				break
			}
		}
	}
	o.Functions = fns
}
