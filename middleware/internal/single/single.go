// Package single marks a call that must run as a single execution at a
// time: a layer that bounds a call's executions (runlimit's calls per run,
// spend's reservation) marks the calls it admits, and a layer that would
// start a second execution of a call while the first may still run (hedge)
// does not do so for a marked call. The mark travels in the call's context,
// so it holds whatever order the layers are stacked in: the hedge layer
// inside a limit sees the mark; outside it, each execution it starts passes
// through the limit on its own.
package single

import "context"

type key struct{}

// Mark returns a copy of ctx that marks the call as single-execution, on
// behalf of layer (its name, for diagnostics). A context already marked is
// returned as it is.
func Mark(ctx context.Context, layer string) context.Context {
	if _, ok := By(ctx); ok {
		return ctx
	}
	return context.WithValue(ctx, key{}, layer)
}

// By returns the name of the layer that marked the call carried by ctx as
// single-execution, and whether one did.
func By(ctx context.Context) (layer string, ok bool) {
	layer, ok = ctx.Value(key{}).(string)
	return layer, ok
}
