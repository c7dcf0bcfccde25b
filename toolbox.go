package toolmw

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/toolmw/toolmw/taxonomy"
)

// Toolbox holds registered tools and calls them by name. Middlewares given
// to NewToolbox wrap every tool registered after; those given to Register
// wrap one tool, inside the box's. A Toolbox is safe for concurrent use; no
// lock is held while a tool runs.
type Toolbox struct {
	mws   []Middleware
	mu    sync.RWMutex
	tools map[string]Tool
	specs []Spec
}

// NewToolbox returns an empty Toolbox whose tools are all wrapped with mws
// (the first outermost).
func NewToolbox(mws ...Middleware) *Toolbox {
	return &Toolbox{mws: mws, tools: make(map[string]Tool)}
}

// Register validates and wraps tool (see [Wrap]) and adds it under
// spec.Name. A name already registered is a duplicate-tool error; a bad spec
// a tool-definition-invalid one.
func (b *Toolbox) Register(spec Spec, tool Tool, mws ...Middleware) error {
	all := make([]Middleware, 0, len(b.mws)+len(mws))
	all = append(append(all, b.mws...), mws...)
	wrapped, err := Wrap(spec, tool, all...)
	if err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.tools == nil {
		b.tools = make(map[string]Tool)
	}
	if _, dup := b.tools[spec.Name]; dup {
		return taxonomy.New(taxonomy.KindDuplicateTool, taxonomy.CodeDuplicateTool,
			"a tool named "+spec.Name+" is already registered").WithTool(spec.Name)
	}
	b.tools[spec.Name] = wrapped
	b.specs = append(b.specs, spec)
	return nil
}

// Call calls the tool registered under name. An unknown name is a
// tool-not-found error. Pass the model's call id with [WithCallID].
func (b *Toolbox) Call(ctx context.Context, name string, args json.RawMessage) (Result, error) {
	b.mu.RLock()
	tool, ok := b.tools[name]
	b.mu.RUnlock()
	if !ok {
		return Result{}, notFound(name)
	}
	return tool(ctx, args)
}

// Specs returns the registered specs in registration order, to describe the
// tools to the model. The slice is a copy.
func (b *Toolbox) Specs() []Spec {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return append([]Spec(nil), b.specs...)
}

// notFound names the requested tool only when it is a valid tool name: the
// name comes from the model and is otherwise withheld.
func notFound(name string) error {
	if !ValidName(name) {
		return taxonomy.New(taxonomy.KindNotFound, taxonomy.CodeToolNotFound, "no tool has the requested name")
	}
	return taxonomy.New(taxonomy.KindNotFound, taxonomy.CodeToolNotFound, "no tool named "+name).WithTool(name)
}
