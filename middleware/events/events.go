package events

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/middleware/internal/panicked"
	"github.com/toolmw/toolmw/taxonomy"
)

// New returns a middleware that emits a tool_error event to sink for every
// call that returns an error. It is NewEmitter(sink, opts...).Middleware();
// use an Emitter directly to flush at shutdown or to read its Stats.
func New(sink Sink, opts ...Option) toolmw.Middleware {
	return NewEmitter(sink, opts...).Middleware()
}

// TypeToolError is the Type of the event emitted for a call that returned
// an error.
const TypeToolError = "tool_error"

// eventOverhead is what an Event costs beyond its strings, counted against
// the queue's bytes.
const eventOverhead = 128

// Event is a run event: what happened to one tool call. It carries no
// error text beyond Told, which is what the model was shown.
type Event struct {
	Type       string           `json:"type"`                  // TypeToolError
	Time       time.Time        `json:"time"`                  // when the call returned
	Tool       string           `json:"tool"`                  // the tool's name, "" when unknown
	CallID     string           `json:"call_id,omitempty"`     // the model's call id, when known
	Outcome    taxonomy.Outcome `json:"outcome"`               // failed, refused, not_permitted, timed_out, cancelled, pending, denied, blocked
	Kind       taxonomy.Kind    `json:"kind"`                  // the taxonomy kind
	Code       string           `json:"code"`                  // the taxonomy code
	Retryable  bool             `json:"retryable"`             // whether the error is retryable
	RetryAfter taxonomy.Seconds `json:"retry_after,omitempty"` // the error's retry-after hint
	Attempts   int              `json:"attempts"`              // the attempts made; 0 when the context carries no toolmw.Call
	Told       string           `json:"told"`                  // toolmw.ForModel(res, err): what the model was told, cut to WithMaxTold
	// ApprovalID names the approval request of an approval-pending or
	// approval-denied call (taxonomy.ApprovalInfo.ID, a safe token of at
	// most 128 bytes), so a run log or a UI can link the call to the
	// reviewer's decision; "" otherwise.
	ApprovalID string `json:"approval_id,omitempty"`
	// Degraded names the layer that decided the call on its local state
	// because its shared store failed or did not answer in time
	// (toolmw.Call.Degraded: "breaker", "ratelimit", "retry_budget",
	// "run_budget", "runlimit", "spend"), so a fleet running on local state shows
	// in its run events; "" otherwise.
	Degraded string `json:"degraded,omitempty"`
	// ToldCut reports that Told was longer than the Emitter keeps and was
	// cut (at a character boundary) to its first WithMaxTold bytes.
	ToldCut bool `json:"told_cut,omitempty"`
}

// size is what ev counts against the queue's bytes.
func (ev *Event) size() int {
	return eventOverhead + len(ev.Type) + len(ev.Tool) + len(ev.CallID) + len(ev.Outcome) + len(ev.Kind) + len(ev.Code) + len(ev.Told) + len(ev.ApprovalID) + len(ev.Degraded)
}

// Sink receives events. An Emitter calls Emit from one goroutine at a time,
// in the order the events happened, never on the call's goroutine and never
// under a lock; so a Sink need not be safe for concurrent use, and one that
// is slow, blocks or panics delays or loses events but never a call.
type Sink interface {
	Emit(Event)
}

// SinkFunc adapts a function to a Sink.
//
// The function is called from one delivery goroutine at a time, never from the call's goroutine.
type SinkFunc func(Event)

// Emit calls f(e).
func (f SinkFunc) Emit(e Event) { f(e) }

// Stats counts what an Emitter did with its events.
type Stats struct {
	Delivered uint64 // passed to the sink, which returned
	Panicked  uint64 // passed to the sink, which panicked
	Dropped   uint64 // dropped because the queue was full
}

// Emitter delivers events to a sink off the calls' goroutines, through a
// bounded queue drained by one goroutine. The goroutine is started when an
// event arrives and none is running, and exits as soon as the queue is
// empty, so an idle Emitter holds no goroutine. A sink that panics is
// recovered and counted; a sink that blocks holds up the goroutine, the
// queue fills and further events are dropped and counted, while the calls
// go on. An Emitter is safe for concurrent use.
type Emitter struct {
	sink Sink
	config

	mu      sync.Mutex
	queue   []Event // a ring of size entries, made with the first event
	head, n int
	bytes   int           // the size of the queued events
	running bool          // a goroutine is draining the queue
	idle    chan struct{} // closed when it stops; made by Flush

	delivered, panicked, dropped atomic.Uint64
}

// NewEmitter returns an Emitter delivering to sink. A nil sink makes an
// Emitter whose middleware returns each tool unchanged. When an option value
// is invalid (see [Validate]), its middleware is a toolmw.Reject of that
// error, which toolmw.Wrap reports at start-up.
func NewEmitter(sink Sink, opts ...Option) *Emitter {
	e := &Emitter{sink: sink, config: config{clock: clock.System, size: DefaultQueueSize,
		maxBytes: DefaultQueueBytes, maxTold: DefaultMaxTold}}
	for _, o := range opts {
		if o != nil {
			o(&e.config)
		}
	}
	return e
}

// Middleware returns the middleware that emits a tool_error event for every
// call that returns an error: failures, refusals, permission denials,
// timeouts and cancellations alike (Outcome tells them apart). A successful
// call costs nothing beyond the call.
func (e *Emitter) Middleware() toolmw.Middleware {
	if e.err != nil {
		return toolmw.Reject(e.err)
	}
	return func(next toolmw.Tool) toolmw.Tool {
		if e.sink == nil {
			return next
		}
		return func(ctx context.Context, args json.RawMessage) (res toolmw.Result, err error) {
			done := false
			defer func() {
				if !done {
					// The tool panicked; the panic goes on.
					e.record(ctx, toolmw.Result{}, panicked.Err)
				}
			}()
			res, err = next(ctx, args)
			done = true
			if err != nil {
				e.record(ctx, res, err)
			}
			return res, err
		}
	}
}

// record makes the event of a call that returned err and queues it.
func (e *Emitter) record(ctx context.Context, res toolmw.Result, err error) {
	c, _ := toolmw.CallFrom(ctx) // after the call: the attempts made
	info := taxonomy.InfoOf(err)
	ev := Event{
		Type:       TypeToolError,
		Time:       e.clock.Now(),
		Tool:       c.Tool,
		CallID:     c.ID,
		Outcome:    taxonomy.OutcomeOf(err),
		Kind:       info.Kind,
		Code:       info.Code,
		Retryable:  info.Retryable,
		RetryAfter: info.RetryAfter,
		Attempts:   c.Attempt,
		Told:       toolmw.ForModel(res, err),
		Degraded:   c.Degraded,
	}
	if info.Approval != nil {
		ev.ApprovalID = info.Approval.ID
	}
	if ev.Tool == "" {
		ev.Tool = info.Tool
	}
	if len(ev.Told) > e.maxTold {
		ev.Told, ev.ToldCut = strings.Clone(cut(ev.Told, e.maxTold)), true // a copy: the cut would pin the whole text
	}
	e.enqueue(ev)
}

func (e *Emitter) enqueue(ev Event) {
	e.mu.Lock()
	if e.queue == nil {
		e.queue = make([]Event, e.size)
	}
	size := ev.size()
	if e.n == len(e.queue) || e.bytes+size > e.maxBytes {
		e.mu.Unlock()
		e.dropped.Add(1)
		return
	}
	e.queue[(e.head+e.n)%len(e.queue)] = ev
	e.n++
	e.bytes += size
	start := !e.running
	e.running = true
	e.mu.Unlock()
	if start {
		go e.drain()
	}
}

// cut returns the first n bytes of s, less the bytes of a character n
// would split.
func cut(s string, n int) string {
	for n > 0 && n < len(s) && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// drain delivers queued events until the queue is empty.
func (e *Emitter) drain() {
	for {
		e.mu.Lock()
		if e.n == 0 {
			e.running = false
			if e.idle != nil {
				close(e.idle)
				e.idle = nil
			}
			e.mu.Unlock()
			return
		}
		ev := e.queue[e.head]
		e.queue[e.head] = Event{}
		e.head = (e.head + 1) % len(e.queue)
		e.n--
		e.bytes -= ev.size()
		e.mu.Unlock()
		e.deliver(ev)
	}
}

func (e *Emitter) deliver(ev Event) {
	defer func() {
		if recover() != nil {
			e.panicked.Add(1)
		}
	}()
	e.sink.Emit(ev)
	e.delivered.Add(1)
}

// Flush waits until every queued event has been passed to the sink and the
// sink has returned, or until ctx is done, and then returns ctx's error.
// Call it at shutdown; events of calls that end meanwhile are waited for
// too.
func (e *Emitter) Flush(ctx context.Context) error {
	e.mu.Lock()
	if !e.running {
		e.mu.Unlock()
		return nil
	}
	if e.idle == nil {
		e.idle = make(chan struct{})
	}
	idle := e.idle
	e.mu.Unlock()
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Stats returns the counts so far.
func (e *Emitter) Stats() Stats {
	return Stats{Delivered: e.delivered.Load(), Panicked: e.panicked.Load(), Dropped: e.dropped.Load()}
}
