package eino

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/cloudwego/eino/compose"
	einoschema "github.com/cloudwego/eino/schema"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/taxonomy"
	"github.com/toolmw/toolmw/turn"
)

// The envelope a streamed result is forwarded in: toolmw.ForModel's of a
// text result, opened with the first chunk and closed when the call ends.
var envelopeOpen, envelopeClose = func() (string, string) {
	empty := toolmw.ForModel(toolmw.Text(""), nil)
	i := strings.Index(empty, "</")
	return empty[:i], empty[i:]
}()

// escape returns s as toolmw.ForModel writes it inside the envelope, so
// that the chunks of a stream, escaped one by one, join into the envelope
// of their whole text.
func escape(s string) string {
	if s == "" {
		return ""
	}
	return strings.TrimSuffix(strings.TrimPrefix(toolmw.ForModel(toolmw.Text(s), nil), envelopeOpen), envelopeClose)
}

// escaper escapes a stream's chunks, holding back the bytes of a character
// a chunk ends inside until the next chunk completes it: escaping is per
// character, and a look-alike of the envelope's brackets split across two
// chunks must be escaped whole.
type escaper struct{ carry string }

func (e *escaper) write(s string) string {
	s = e.carry + s
	cut := len(s)
	for i := len(s) - 1; i >= 0 && i >= len(s)-utf8.UTFMax+1; i-- {
		if utf8.RuneStart(s[i]) {
			if !utf8.FullRuneInString(s[i:]) {
				cut = i
			}
			break
		}
	}
	e.carry = s[cut:]
	return escape(s[:cut])
}

func (e *escaper) flush() string {
	s := e.carry
	e.carry = ""
	return escape(s)
}

// drain reads sr to its end, handing each chunk to f until f returns
// false, and returns nil, the stream's error, or ctx's error once ctx is
// done: a stream that blocks does not hold the call past its context. The
// stream is read on a goroutine of its own, which closes sr and ends when
// the stream's next Recv returns (at once for a producer that stops when
// its context ends or its reader closes).
func drain[T any](ctx context.Context, sr *einoschema.StreamReader[T], f func(T) bool) error {
	type item struct {
		v   T
		err error
	}
	items := make(chan item)
	done := make(chan struct{})
	defer close(done)
	go func() {
		defer sr.Close()
		for {
			v, err := sr.Recv()
			select {
			case items <- item{v, err}:
			case <-done:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case it := <-items:
			switch {
			case errors.Is(it.err, io.EOF):
				return nil
			case it.err != nil:
				return it.err
			case !f(it.v):
				return nil
			}
		}
	}
}

// forwarder is one call of a streamable tool through the stack: it
// forwards the attempt's chunks to Eino's reader as they come, and ends
// the stream when the stack is done with the call.
//
// The first attempt to forward a chunk owns the stream; once it has, the
// tool is never called again for this call: a retry or a hedge the stack
// makes then gets the owner's failure, final. The chunks go to the reader
// through a queue and a writer goroutine, so a slow reader never holds an
// attempt past its deadline.
type forwarder struct {
	w      *einoschema.StreamWriter[string]
	cancel context.CancelFunc // the call's context
	first  chan struct{}      // closed when the first chunk is forwarded
	result chan outcome       // the outcome of a call that forwarded nothing

	mu       sync.Mutex
	wake     *sync.Cond
	owner    *attempt
	failed   error // the owner's failure, once it failed after forwarding
	finished bool  // the stack is done: nothing more is forwarded
	ended    bool  // the stream's tail is queued
	gone     bool  // the reader closed the stream
	esc      escaper
	queue    []chunk
}

type attempt struct{ _ byte }

type chunk struct {
	text string
	err  error
}

// outcome is how a call that forwarded nothing ended, for the endpoint.
type outcome struct {
	a        turn.Answer
	err      error
	panicked bool
	p        any
}

func newForwarder(w *einoschema.StreamWriter[string], cancel context.CancelFunc) *forwarder {
	f := &forwarder{w: w, cancel: cancel, first: make(chan struct{}), result: make(chan outcome, 1)}
	f.wake = sync.NewCond(&f.mu)
	return f
}

// errOverlap answers an attempt that started while another one owned the
// stream (a hedge).
var errOverlap = taxonomy.New(taxonomy.KindFailed, taxonomy.Declare("stream_in_progress"),
	"another attempt of the call is streaming its result").WithFinal()

// run is the innermost tool of a streamable call: one attempt.
func (f *forwarder) run(ctx context.Context, inv *invocation, in *compose.ToolInput) (toolmw.Result, error) {
	f.mu.Lock()
	owned, failed := f.owner != nil, f.failed
	f.mu.Unlock()
	if owned {
		if failed == nil {
			return toolmw.Result{}, errOverlap
		}
		return toolmw.Result{}, taxonomy.InfoOf(failed).Err().WithCause(failed).WithFinal()
	}
	out, err := inv.stream(ctx, in)
	if err != nil {
		return toolmw.Result{}, inv.toolErr(err)
	}
	if out == nil || out.Result == nil {
		return toolmw.Result{}, nil
	}
	me := new(attempt)
	var all strings.Builder
	lost := false
	err = drain(ctx, out.Result, func(c string) bool {
		all.WriteString(c)
		if !f.send(me, c) {
			lost = true
			return false
		}
		return true
	})
	f.mu.Lock()
	mine, gone := f.owner == me, f.gone
	f.mu.Unlock()
	switch {
	case lost && !mine:
		return toolmw.Result{}, errOverlap
	case err == nil && lost && gone:
		err = context.Canceled // the reader went away: the call is over
	}
	if err != nil {
		err = inv.toolErr(err)
		if mine {
			f.fail(err)
		}
		return toolmw.Result{}, err
	}
	return toolmw.Text(all.String()), nil
}

// send forwards a chunk of attempt me, and reports whether the attempt
// may go on: false when the call is over, the reader is gone, or another
// attempt owns the stream.
func (f *forwarder) send(me *attempt, c string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	open := ""
	switch {
	case f.finished || f.gone:
		return false
	case f.owner == nil:
		f.owner = me
		close(f.first)
		go f.write()
		open = envelopeOpen
	case f.owner != me:
		return false
	}
	if s := open + f.esc.write(c); s != "" {
		f.push(chunk{text: s})
	}
	return true
}

func (f *forwarder) fail(err error) {
	f.mu.Lock()
	if f.failed == nil {
		f.failed = err
	}
	f.mu.Unlock()
}

// push queues a chunk for the writer; f.mu is held.
func (f *forwarder) push(c chunk) {
	if !f.gone {
		f.queue = append(f.queue, c)
		f.wake.Signal()
	}
}

// finish ends the call with the stack's answer and error (see
// dispatcher.call). When nothing was forwarded, the endpoint gets them.
// Otherwise the stream is ended: the envelope closed; then, when the
// call failed after forwarding (or something stood in for the streamed
// result), toolmw.ForModel's text of the answer as a second envelope; and
// when the run must stop, the error as the stream's last item.
func (f *forwarder) finish(o outcome) {
	f.mu.Lock()
	f.finished = true
	if f.owner == nil {
		f.mu.Unlock()
		f.w.Close()
		f.result <- o
		return
	}
	tail := f.esc.flush() + envelopeClose
	switch {
	case o.panicked:
		tail += toolmw.ForModel(toolmw.Result{}, taxonomy.Failure(taxonomy.CodeToolPanicked, "the tool panicked"))
	case o.a.Err != nil || f.failed != nil:
		tail += o.a.Text
	}
	f.push(chunk{text: tail})
	if o.err != nil {
		f.push(chunk{err: o.err})
	}
	f.ended = true
	f.wake.Signal()
	f.mu.Unlock()
}

// write sends the queued chunks to the reader, and closes the stream once
// its tail is sent. When the reader closes the stream, the rest is dropped
// and the call cancelled.
func (f *forwarder) write() {
	for {
		f.mu.Lock()
		for len(f.queue) == 0 && !f.ended {
			f.wake.Wait()
		}
		q, ended := f.queue, f.ended
		f.queue = nil
		f.mu.Unlock()
		for _, c := range q {
			if f.w.Send(c.text, c.err) {
				f.mu.Lock()
				f.gone, f.queue = true, nil
				f.mu.Unlock()
				f.cancel()
				break
			}
		}
		if ended {
			f.mu.Lock()
			rest := len(f.queue)
			f.mu.Unlock()
			if rest == 0 {
				f.w.Close()
				return
			}
		}
	}
}

// streamable runs a streamable tool's calls through the stack: the
// endpoint returns Eino's reader once the first chunk is forwarded (or,
// when the call ends before any, what it ended with), while the stack goes
// on with the call on a goroutine of its own until the stream ends.
func (s *stack) streamable(next compose.StreamableToolEndpoint) compose.StreamableToolEndpoint {
	return func(ctx context.Context, input *compose.ToolInput) (*compose.StreamToolOutput, error) {
		sr, sw := einoschema.Pipe[string](0)
		ctx, cancel := context.WithCancel(ctx)
		f := newForwarder(sw, cancel)
		inv := &invocation{input: input, stream: next, forward: f}
		go func() {
			defer cancel()
			var o outcome
			defer func() {
				if p := recover(); p != nil {
					o = outcome{panicked: true, p: p}
				}
				f.finish(o)
			}()
			o.a, o.err = s.run(ctx, inv)
		}()
		select {
		case <-f.first:
			// A reader Eino drops unread (its ToolsNode does when another
			// call of the turn fails) is closed when collected, so the
			// writer and the call end.
			sr.SetAutomaticClose()
			return &compose.StreamToolOutput{Result: sr}, nil
		case o := <-f.result:
			if o.panicked {
				panic(o.p)
			}
			if o.err != nil {
				return nil, o.err
			}
			return &compose.StreamToolOutput{Result: einoschema.StreamReaderFromArray([]string{o.a.Text})}, nil
		}
	}
}
