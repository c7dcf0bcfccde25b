// Package classify is the classification layer: it runs a mapper.Map on
// what the tool returned, so every failure leaves the layer as a typed error
// with a stable code.
//
//	classify.New()                                        // mapper.Default()
//	classify.New(classify.WithMap(mapper.Default().With(  // ... or a map of your own
//		mapper.Is(supplier.ErrSoldOut, mapper.Refusal("fare_sold_out", "the fare is sold out")),
//	)))
//
// The map is given the tool's name and idempotency from toolmw.CallFrom, so
// an outcome that is transient only for an idempotent tool (a reset
// connection, a 502) is retryable exactly when the tool's Spec says
// Idempotent (or HonoursKeys: a tool that honours idempotency keys is
// treated alike). Without a Call (a tool not made by toolmw.Wrap) the name is ""
// and the tool is taken as not idempotent.
//
// The map is also given the context the tool ran in (mapper.Map.ClassifyContext),
// so it knows whose time ran out: when that context's deadline has passed,
// a timeout is the caller's (tool-timeout/deadline_exceeded, never
// retried); when it has not, a deadline error came from a dependency — an
// http.Client or Transport timeout reports itself as
// context.DeadlineExceeded — and is tool-timeout/upstream_timeout, retried
// for an idempotent tool.
//
// As mapper.Map.ClassifyFor promises: nil stays nil, a typed error and a
// cancellation pass through unchanged, and anything else becomes a
// *taxonomy.ToolError whose message never holds the foreign text. The
// result the tool returned is passed on as it is.
//
// Put it innermost, next to the tool (after recovery in middleware.Default),
// so that retry, breaker and the telemetry layers see typed errors. The
// success path costs a nil check: no allocation and no context lookup.
package classify
