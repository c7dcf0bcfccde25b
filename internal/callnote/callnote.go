// Package callnote lets the packages that package toolmw itself imports
// (budget) write a note in the call record, which they cannot reach through
// toolmw without an import cycle.
package callnote

import "context"

// Degraded is toolmw.SetDegraded: package toolmw sets it when it is
// initialised, before any call can run. Until then it does nothing.
var Degraded = func(ctx context.Context, layer string) {}
