package approval

import (
	"context"
	"fmt"
)

// The bounds of a listing ([Desk.List]).
const (
	// DefaultListLimit is how many requests a Query with no Limit returns
	// at most.
	DefaultListLimit = 50
	// MaxListScan is how many rows one List reads from the store at most,
	// whatever it keeps: a listing for one state among many rows ends
	// early, with a Next to go on from.
	MaxListScan = 2000
)

// Query is what [Desk.List] lists.
type Query struct {
	// After lists the requests whose ids sort after it: "" from the
	// first, or the Next of the page before.
	After string
	// Limit is the most requests returned: 0 means [DefaultListLimit];
	// at most [MaxListPage].
	Limit int
	// State keeps only the requests in that state; 0 means every state.
	State State
}

// Page is one page of a listing.
type Page struct {
	// Requests are the requests listed, in id order.
	Requests []Request
	// Next is the Query.After of the next page, or "" when the listing
	// reached the end of the store.
	Next string
	// Skipped counts the rows read that failed their check (changed,
	// forged with another key, copied from another request, malformed):
	// never returned, as Get never returns them.
	Skipped int
}

// List returns a page of the stored requests q selects, each checked as
// Get checks it: a row that fails its check is skipped and counted, never
// listed. It reads at most [MaxListScan] rows; when it stops there, or at
// q.Limit requests, Page.Next says where to go on. It needs a store that
// implements [Lister] (every store of the module does), else it returns
// [ErrNotListable]; a store failure is returned wrapped, as Get returns it.
func (d *Desk) List(ctx context.Context, q Query) (Page, error) {
	if d.err != nil {
		return Page{}, d.err
	}
	lister, ok := d.store.(Lister)
	if !ok {
		return Page{}, ErrNotListable
	}
	limit := q.Limit
	if limit == 0 {
		limit = DefaultListLimit
	}
	if limit < 0 || limit > MaxListPage || len(q.After) > MaxIDLen || q.State != 0 && q.State.String() == "invalid" {
		return Page{}, fmt.Errorf("approval: List: a limit of %d (1 to %d), an After of %d bytes (at most %d) or an unknown state",
			q.Limit, MaxListPage, len(q.After), MaxIDLen)
	}
	var page Page
	after := q.After
	for scanned := 0; scanned < MaxListScan; {
		ask := min(MaxListPage, MaxListScan-scanned)
		var rows []Listed
		err := d.storeOp(ctx, "list", func(sctx context.Context) (err error) {
			rows, err = lister.List(sctx, after, ask)
			return err
		})
		if err != nil {
			return Page{}, fmt.Errorf("approval: listing the requests: %w", err)
		}
		if len(rows) > ask {
			rows = rows[:ask] // a store that returns more than asked for
		}
		scanned += len(rows)
		for _, l := range rows {
			if l.ID <= after {
				// Out of order: a store that lists again what it listed.
				return Page{}, fmt.Errorf("approval: listing the requests: the store listed ids out of order")
			}
			after = l.ID
			r, err := d.seal.open(l.Row, l.ID)
			if err != nil {
				page.Skipped++
				continue
			}
			if q.State != 0 && r.state != q.State {
				continue
			}
			page.Requests = append(page.Requests, r.request())
			if len(page.Requests) == limit {
				page.Next = after
				return page, nil
			}
		}
		if len(rows) < ask {
			return page, nil // the end of the store
		}
	}
	page.Next = after
	return page, nil
}
