package events

import (
	"fmt"

	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/taxonomy"
)

// Defaults of the queue's bounds: however slow or stuck the sink, an
// Emitter holds at most this many events, of at most this many bytes in
// all, plus the one event the sink is handling.
const (
	DefaultQueueSize  = 256     // events waiting for the sink; WithQueueSize
	DefaultQueueBytes = 1 << 20 // bytes of the events waiting; WithQueueBytes
	DefaultMaxTold    = 8 << 10 // bytes of one event's Told; WithMaxTold
)

// Option configures an Emitter.
type Option func(*config)

// config is what the Options set.
type config struct {
	clock    clock.Clock
	size     int   // events the queue holds at most
	maxBytes int   // bytes the queue holds at most
	maxTold  int   // bytes of one event's Told
	err      error // the first invalid option
}

// WithQueueSize sets how many events may wait for the sink; when that many
// wait, new events are dropped and counted. 0 means DefaultQueueSize; a
// negative size is invalid.
func WithQueueSize(n int) Option {
	return func(e *config) {
		switch {
		case n < 0:
			e.reject(fmt.Sprintf("WithQueueSize(%d): the size must not be negative", n))
		case n > 0:
			e.size = n
		}
	}
}

// WithQueueBytes sets how many bytes the events waiting for the sink may
// hold in all (their strings plus a fixed overhead each); an event that
// does not fit is dropped and counted. 0 means DefaultQueueBytes; a negative
// value is invalid.
func WithQueueBytes(n int) Option {
	return func(e *config) {
		switch {
		case n < 0:
			e.reject(fmt.Sprintf("WithQueueBytes(%d): the size must not be negative", n))
		case n > 0:
			e.maxBytes = n
		}
	}
}

// WithMaxTold sets how many bytes of what the model was told an event
// keeps; a longer Told is cut at a character boundary and the event says
// ToldCut. 0 means DefaultMaxTold; a negative value is invalid.
func WithMaxTold(n int) Option {
	return func(e *config) {
		switch {
		case n < 0:
			e.reject(fmt.Sprintf("WithMaxTold(%d): the size must not be negative", n))
		case n > 0:
			e.maxTold = n
		}
	}
}

func (e *config) reject(msg string) {
	if e.err == nil {
		e.err = taxonomy.New(taxonomy.KindDefinitionInvalid, taxonomy.CodeOptionInvalid, "events: "+msg)
	}
}

// Validate reports the first invalid option value, as a
// tool-definition-invalid error with code option_invalid, or nil.
func Validate(opts ...Option) error {
	return NewEmitter(nil, opts...).err
}

// WithClock sets the clock that stamps events; clock.System by default.
func WithClock(c clock.Clock) Option {
	return func(e *config) { e.clock = clock.Or(c) }
}
