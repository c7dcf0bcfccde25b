package middleware

import (
	"fmt"
	"strings"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/taxonomy"
)

// Layer is one named middleware of a Stack.
type Layer struct {
	Name       string            // unique within a stack, e.g. "retry"
	Middleware toolmw.Middleware // the layer itself
}

// Stack is an ordered list of named layers, the first outermost. A Stack is
// an immutable value: Replace, Remove, InsertBefore and InsertAfter return a
// new Stack and leave the receiver as it was, so a shared default can be
// varied per tool. It is safe for concurrent use.
type Stack struct {
	layers []Layer
}

// NewStack returns a Stack of the given layers, the first outermost. A nil
// middleware, an empty name or a name used twice is a
// tool-definition-invalid error.
func NewStack(layers ...Layer) (Stack, error) {
	s := Stack{layers: make([]Layer, 0, len(layers))}
	for _, l := range layers {
		if err := s.check(l); err != nil {
			return Stack{}, err
		}
		s.layers = append(s.layers, l)
	}
	return s, nil
}

func (s Stack) check(l Layer) error {
	switch {
	case l.Name == "":
		return stackError(taxonomy.CodeOptionInvalid, "a layer needs a name")
	case l.Middleware == nil:
		return stackError(taxonomy.CodeMiddlewareNil, fmt.Sprintf("layer %q has a nil middleware", l.Name))
	case s.index(l.Name) >= 0:
		return stackError(taxonomy.CodeOptionInvalid, fmt.Sprintf("the stack already has a layer named %q", l.Name))
	}
	return nil
}

func (s Stack) index(name string) int {
	for i, l := range s.layers {
		if l.Name == name {
			return i
		}
	}
	return -1
}

func (s Stack) find(name string) (int, error) {
	i := s.index(name)
	if i < 0 {
		return -1, stackError(taxonomy.CodeOptionInvalid, fmt.Sprintf("the stack has no layer named %q (it has %s)", name, strings.Join(s.Names(), ", ")))
	}
	return i, nil
}

// with returns a copy of s with layers[i:j] replaced by ls.
func (s Stack) with(i, j int, ls ...Layer) Stack {
	out := make([]Layer, 0, len(s.layers)-(j-i)+len(ls))
	out = append(out, s.layers[:i]...)
	out = append(out, ls...)
	out = append(out, s.layers[j:]...)
	return Stack{layers: out}
}

// Replace returns a copy of s in which the layer called name runs mw instead,
// keeping its place and name.
func (s Stack) Replace(name string, mw toolmw.Middleware) (Stack, error) {
	i, err := s.find(name)
	if err != nil {
		return s, err
	}
	if mw == nil {
		return s, stackError(taxonomy.CodeMiddlewareNil, fmt.Sprintf("replacement for %q is nil", name))
	}
	return s.with(i, i+1, Layer{Name: name, Middleware: mw}), nil
}

// Remove returns a copy of s without the layer called name.
func (s Stack) Remove(name string) (Stack, error) {
	i, err := s.find(name)
	if err != nil {
		return s, err
	}
	return s.with(i, i+1), nil
}

// InsertBefore returns a copy of s with l placed just outside the layer
// called name.
func (s Stack) InsertBefore(name string, l Layer) (Stack, error) {
	return s.insert(name, 0, l)
}

// InsertAfter returns a copy of s with l placed just inside the layer called
// name.
func (s Stack) InsertAfter(name string, l Layer) (Stack, error) {
	return s.insert(name, 1, l)
}

func (s Stack) insert(name string, offset int, l Layer) (Stack, error) {
	i, err := s.find(name)
	if err != nil {
		return s, err
	}
	if err := s.check(l); err != nil {
		return s, err
	}
	return s.with(i+offset, i+offset, l), nil
}

// Layers returns the layers, outermost first. The slice is a copy.
func (s Stack) Layers() []Layer {
	return append([]Layer(nil), s.layers...)
}

// Names returns the layer names, outermost first.
func (s Stack) Names() []string {
	names := make([]string, len(s.layers))
	for i, l := range s.layers {
		names[i] = l.Name
	}
	return names
}

// String describes the order, outermost first: "tracing → logging → … →
// tool". A stack with a layer named [Chaos] (fault injection) says so at
// the end: "… → classify → chaos → tool (chaos: injects faults)", so a
// stack printed at start-up never hides that it may fail on purpose.
func (s Stack) String() string {
	d := strings.Join(append(s.Names(), "tool"), " → ")
	if s.index(Chaos) >= 0 {
		d += chaosNote
	}
	return d
}

// chaosNote ends the String of a stack with a chaos layer.
const chaosNote = " (chaos: injects faults)"

// Middleware returns the stack as one middleware, for toolmw.Wrap or
// toolmw.NewToolbox. Each tool it wraps gets its own per-tool state (its own
// breaker, limiter, retry budget) from every layer, unless a layer was given
// a shared one.
func (s Stack) Middleware() toolmw.Middleware {
	mws := make([]toolmw.Middleware, len(s.layers))
	for i, l := range s.layers {
		mws[i] = l.Middleware
	}
	return toolmw.Chain(mws...)
}

// Wrap validates spec and returns tool wrapped in the stack; see toolmw.Wrap.
func (s Stack) Wrap(spec toolmw.Spec, tool toolmw.Tool) (toolmw.Tool, error) {
	return toolmw.Wrap(spec, tool, s.Middleware())
}

func stackError(code, msg string) error {
	return taxonomy.New(taxonomy.KindDefinitionInvalid, code, "middleware stack: "+msg)
}
