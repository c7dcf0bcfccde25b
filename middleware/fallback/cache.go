package fallback

import (
	"context"
	"encoding/json"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware/internal/resultnote"
)

// remember keeps res, a success of the read call with args, as its last
// good result, in process and in the store. A result a cache inside
// served (note) is kept in process with the time it was made, not as a
// new one, and not written to the store again: it was when it was made.
func (l *layer) remember(ctx context.Context, call toolmw.Call, args json.RawMessage, res toolmw.Result, note *resultnote.Note) {
	if l.shared == nil && !l.kept.Fits(res) {
		return // kept nowhere: spare the arguments' canonicalisation
	}
	k, ok := l.rule.Of(ctx, call, args)
	if !ok {
		return
	}
	if made, served := note.Made(); served {
		l.kept.Put(k, res, made)
		return
	}
	made := l.clk.Now()
	l.kept.Put(k, res, made)
	if l.shared != nil {
		l.shared.Save(ctx, k, res, made, l.ttl, false)
	}
}

// lastGood returns the last good result of the read call with args, at
// most the TTL old at now, and when it was made: the store's, which every
// replica writes, else the process's own.
func (l *layer) lastGood(ctx context.Context, call toolmw.Call, args json.RawMessage, now time.Time) (toolmw.Result, time.Time, bool) {
	k, ok := l.rule.Of(ctx, call, args)
	if !ok {
		return toolmw.Result{}, time.Time{}, false
	}
	if l.shared != nil {
		if res, made, found, _ := l.shared.Load(ctx, k, now, l.ttl); found {
			l.kept.Put(k, res, made)
			return res, made, true
		}
	}
	return l.kept.Get(k, now, l.ttl)
}
