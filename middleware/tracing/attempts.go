package tracing

import (
	"context"
	"encoding/json"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/middleware/internal/panicked"
	"github.com/toolmw/toolmw/taxonomy"
)

// NewAttempts returns a middleware meant to sit just inside the retry layer,
// so that it runs once per attempt. It adds one span event named
// "toolmw.attempt" to the span in the context (the one New started) per
// attempt, with the attempt's number, its outcome and, on error, its code
// (toolmw.error.code), kind and retryability — never error.type, which
// belongs to how the call ended: a call that recovered after failed
// attempts is no error; and it counts attempts in the toolmw.tool.attempts
// counter by tool, outcome and code, so that attempts per call can be
// watched against calls. Events are added only when that span is
// recording, stamped by the layer's clock ([WithClock]) when it is not the
// system clock, else by the tracer.
//
// The attempts are events rather than child spans: they are sequential parts of
// one call, an event costs far less than a span, and the call's span then
// tells the whole story without a sampler splitting it. WithTracerProvider
// does not apply to NewAttempts.
func NewAttempts(opts ...Option) toolmw.Middleware {
	if err := Validate(opts...); err != nil {
		return toolmw.Reject(err)
	}
	return func(next toolmw.Tool) toolmw.Tool {
		cfg := newConfig(opts)
		meter := newMeter(cfg.mp)
		a := &attempts{next: next, cfg: cfg, count: int64Counter(meter, MetricAttempts,
			metric.WithDescription("Number of tool call attempts."),
			metric.WithUnit("{attempt}"))}
		return a.call
	}
}

// attempts is the per-tool state of Attempts.
type attempts struct {
	next   toolmw.Tool
	cfg    config
	count  metric.Int64Counter
	labels atomic.Pointer[labels]
}

func (a *attempts) call(ctx context.Context, args json.RawMessage) (res toolmw.Result, err error) {
	c, known := toolmw.CallFrom(ctx)
	span := trace.SpanFromContext(ctx)
	done := false
	defer func() {
		if !done {
			// The tool panicked; the panic goes on.
			a.finish(ctx, span, c, known, panicked.Err)
		}
	}()
	res, err = a.next(ctx, args)
	done = true
	a.finish(ctx, span, c, known, err)
	return res, err
}

func (a *attempts) finish(ctx context.Context, span trace.Span, c toolmw.Call, known bool, err error) {
	recording := span.IsRecording()
	counted := a.count.Enabled(ctx)
	if !recording && !counted {
		return
	}
	outcome := taxonomy.OutcomeOf(err)
	var info taxonomy.Info
	if err != nil {
		info = taxonomy.InfoOf(err)
		info.Code = a.cfg.bounded(info.Code)
	}
	if recording {
		var kv [5]attribute.KeyValue
		n := 0
		if known {
			kv[n] = KeyAttempt.Int(c.Attempt)
			n++
		}
		kv[n] = KeyOutcome.String(string(outcome))
		n++
		if err != nil {
			kv[n] = KeyErrorCode.String(info.Code)
			kv[n+1] = KeyErrorKind.String(string(info.Kind))
			kv[n+2] = KeyRetryable.Bool(info.Retryable)
			n += 3
		}
		if a.cfg.clock != clock.System {
			span.AddEvent(EventAttempt, trace.WithTimestamp(a.cfg.clock.Now()), trace.WithAttributes(kv[:n]...))
		} else {
			span.AddEvent(EventAttempt, trace.WithAttributes(kv[:n]...))
		}
	}
	if !counted {
		return
	}
	lb := cachedLabels(&a.labels, &a.cfg, c, a.cfg.agentOf(ctx))
	if err == nil {
		a.count.Add(ctx, 1, lb.okAdd...)
		return
	}
	a.count.Add(ctx, 1, metric.WithAttributeSet(lb.set(outcome, info.Code)))
}
