package approval

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolmw/toolmw/state"
)

// tally counts, per tool, what happened to the approval requests a Desk
// filed and decided, for package state: the requests pending, the
// verdicts, and the time pending requests waited for theirs. The Desks
// sharing a MemoryStore share its tally, so that one Desk's decision
// counts down what another filed; any other Desk keeps its own. The call
// path pays a map lookup and an atomic add only when it files a request
// or finds an approval expired; the reviewer's side, when it decides one.
type tally struct {
	mu    sync.Mutex
	tools map[string]*toolTally
}

// toolTally is one tool's counts.
type toolTally struct {
	pending  atomic.Int64
	verdicts [verdicts]atomic.Int64
	waited   [verdicts]atomic.Int64 // nanoseconds, for vApproved and vDenied
}

// The verdicts counted, and their names in package state.
const (
	vApproved = iota
	vDenied
	vRevoked
	vExpired
	verdicts
)

var verdictNames = [verdicts]string{vApproved: "approved", vDenied: "denied", vRevoked: "revoked", vExpired: "expired"}

// maxTallied bounds the tools a tally counts apart; the rest are counted
// as state.Other. The tools are the application's (a gated call is one
// of a tool made by toolmw.Wrap), so the bound is only a backstop.
const maxTallied = 1024

func newTally() *tally { return &tally{tools: map[string]*toolTally{}} }

// of returns the counts of tool.
func (t *tally) of(tool string) *toolTally {
	t.mu.Lock()
	defer t.mu.Unlock()
	c, ok := t.tools[tool]
	if !ok {
		if len(t.tools) >= maxTallied {
			tool = state.Other
			if c, ok = t.tools[tool]; ok {
				return c
			}
		}
		c = new(toolTally)
		t.tools[tool] = c
	}
	return c
}

// filed counts a new pending request of tool; expired says it replaces an
// approval that lapsed unused.
func (t *tally) filed(tool string, expired bool) {
	c := t.of(tool)
	c.pending.Add(1)
	if expired {
		c.verdicts[vExpired].Add(1)
	}
}

// decided counts a decision that moved a request of tool from state from
// to state to, filed at created and decided at now.
func (t *tally) decided(tool string, from, to State, created, now time.Time) {
	c := t.of(tool)
	switch {
	case from == StatePending && (to == StateApproved || to == StateDenied):
		v := vApproved
		if to == StateDenied {
			v = vDenied
		}
		c.pending.Add(-1)
		c.verdicts[v].Add(1)
		c.waited[v].Add(int64(max(now.Sub(created), 0))) // a clock behind the filer's reads as no wait
	case from == StateApproved && to == StateDenied:
		c.verdicts[vRevoked].Add(1)
	}
}

// publishTally reports t's counts to package state.
func publishTally(t *tally, emit state.Emit) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for tool, c := range t.tools {
		emit(state.ApprovalsPending, tool, "", float64(c.pending.Load()))
		for v := range verdicts {
			emit(state.ApprovalVerdicts, tool, verdictNames[v], float64(c.verdicts[v].Load()))
		}
		for _, v := range [...]int{vApproved, vDenied} {
			emit(state.ApprovalWait, tool, verdictNames[v], time.Duration(c.waited[v].Load()).Seconds())
		}
	}
}

// publishMemory reports the tally of the Desks sharing m.
func publishMemory(m *MemoryStore, emit state.Emit) { publishTally(m.tally, emit) }

// publishDesk reports the tally of d, a Desk with a store of its own kind.
func publishDesk(d *Desk, emit state.Emit) { publishTally(d.tally, emit) }
