package breaker

import (
	"strconv"
	"time"

	"github.com/sony/gobreaker/v2"
)

// State is a breaker's state: closed (calls pass), open (calls fail fast) or
// half-open (probes pass). The zero State is StateClosed. A State is a
// plain value, safe for concurrent use.
type State int8

// The states.
const (
	StateClosed State = iota
	StateHalfOpen
	StateOpen
)

// String returns "closed", "half-open" or "open".
// It is safe for concurrent use.
func (s State) String() string {
	switch s {
	case StateClosed:
		return "closed"
	case StateHalfOpen:
		return "half-open"
	case StateOpen:
		return "open"
	}
	return "State(" + strconv.Itoa(int(s)) + ")"
}

// stateOf converts gobreaker's state.
func stateOf(s gobreaker.State) State {
	switch s {
	case gobreaker.StateHalfOpen:
		return StateHalfOpen
	case gobreaker.StateOpen:
		return StateOpen
	}
	return StateClosed
}

// Counts are a breaker's counters since it last changed state (or since the
// last interval began, see [WithInterval]). A neutral outcome (see
// [IsFailure]) counts as a request and as neutral, neither a success nor a
// failure. Counts is a plain value, safe for concurrent use.
type Counts struct {
	Requests             uint32 // calls let through, finished or not
	Successes            uint32 // calls that succeeded
	Failures             uint32 // calls that failed with a dependency fault
	Neutral              uint32 // calls with a neutral outcome
	ConsecutiveSuccesses uint32 // successes since the last failure
	ConsecutiveFailures  uint32 // failures since the last success
}

// countsOf converts gobreaker's counts.
func countsOf(c gobreaker.Counts) Counts {
	return Counts{
		Requests:             c.Requests,
		Successes:            c.TotalSuccesses,
		Failures:             c.TotalFailures,
		Neutral:              c.TotalExclusions,
		ConsecutiveSuccesses: c.ConsecutiveSuccesses,
		ConsecutiveFailures:  c.ConsecutiveFailures,
	}
}

// add counts the outcome of a finished call: verdict is nil for a success,
// errNeutral or errFault.
func (c *Counts) add(verdict error) {
	c.Requests++
	switch verdict {
	case nil:
		c.Successes++
		c.ConsecutiveSuccesses++
		c.ConsecutiveFailures = 0
	case errNeutral:
		c.Neutral++
	default:
		c.Failures++
		c.ConsecutiveFailures++
		c.ConsecutiveSuccesses = 0
	}
}

// StateChangeEvent is what [WithOnStateChange]'s callback receives when a
// breaker changes state. It is a plain value, safe for concurrent use; new
// fields may be added.
type StateChangeEvent struct {
	// Name is the breaker's name (see [Breaker.Name]): the name given to
	// NewBreaker, the key of a keyed breaker, or the tool's name.
	Name string
	// From and To are the state the breaker left and the one it entered.
	From, To State
	// Counts are the counts that decided the change: for closed → open,
	// those that tripped the breaker; for a change out of half-open, the
	// probes' outcomes (Requests counts the probes that finished); for
	// open → half-open, zero (an open breaker lets nothing through).
	Counts Counts
	// Time is when the change happened, by the clock of [WithClock].
	Time time.Time
}
