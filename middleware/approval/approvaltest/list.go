package approvaltest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/toolmw/toolmw/middleware/approval"
)

// The listing checks, for a store that implements approval.Lister (they
// skip for one that does not): pages in id order with a cursor, none
// longer than asked, every row listed once and as stored, ids that differ
// only in characters some backends treat specially kept apart; and,
// through a Desk, a listing of the pending requests that skips rows that
// fail their check and shows who asked and who decided.

func lister(t *testing.T, s approval.Store) approval.Lister {
	t.Helper()
	l, ok := s.(approval.Lister)
	if !ok {
		t.Skip("the store does not implement approval.Lister")
	}
	return l
}

// listAll lists every row of l, page by page of size n.
func listAll(t *testing.T, l approval.Lister, n int) []approval.Listed {
	t.Helper()
	var all []approval.Listed
	after := ""
	for pages := 0; ; pages++ {
		if pages > 1000 {
			t.Fatal("List never reached the end")
		}
		page, err := l.List(context.Background(), after, n)
		if err != nil {
			t.Fatalf("List(%q, %d): %v", after, n, err)
		}
		if len(page) > n {
			t.Fatalf("List(%q, %d) returned %d rows", after, n, len(page))
		}
		for _, r := range page {
			if r.ID <= after {
				t.Fatalf("List(%q, %d) returned %q, not after the cursor", after, n, r.ID)
			}
			after = r.ID
		}
		all = append(all, page...)
		if len(page) < n {
			return all
		}
	}
}

func testListPages(t *testing.T, s approval.Store) {
	l := lister(t, s)
	ctx := context.Background()
	if rows, err := l.List(ctx, "", 10); err != nil || len(rows) != 0 {
		t.Fatalf("List of an empty store = %d rows, %v", len(rows), err)
	}
	// Look-alike ids: LIKE wildcards, case, a trailing space.
	ids := []string{"apr_a", "apr.a", "APR_a", "apr_a ", "apr%a", "apr_b", "apr_c", "zz", "a"}
	for i, id := range ids {
		must(t, s.Save(ctx, id, nil, []byte(fmt.Sprintf("row %d\x00\xff", i))))
	}
	want := slices.Clone(ids)
	slices.Sort(want)
	for _, n := range []int{1, 2, 3, len(ids), approval.MaxListPage} {
		all := listAll(t, l, n)
		var got []string
		for _, r := range all {
			got = append(got, r.ID)
			i := slices.Index(ids, r.ID)
			if i < 0 || string(r.Row) != fmt.Sprintf("row %d\x00\xff", i) {
				t.Fatalf("pages of %d: listed %q with row %q", n, r.ID, r.Row)
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("pages of %d listed %q, want %q", n, got, want)
		}
	}
	// The rows are copies.
	rows, err := l.List(ctx, "", 1)
	must(t, err)
	rows[0].Row[0] ^= 0xff
	mustLoad(t, s, want[0], fmt.Sprintf("row %d\x00\xff", slices.Index(ids, want[0])))
	// A cursor past the last id lists nothing; one between ids lists from
	// the next.
	if rows, err := l.List(ctx, "zzz", 5); err != nil || len(rows) != 0 {
		t.Fatalf("List after the last id = %d rows, %v", len(rows), err)
	}
	if rows, err := l.List(ctx, "apr_a", 1); err != nil || len(rows) != 1 || rows[0].ID != "apr_a " {
		t.Fatalf("List after apr_a = %v, %v; want apr_a (with its space)", rows, err)
	}
}

func testListThroughDesk(t *testing.T, s approval.Store) {
	lister(t, s)
	ctx := context.Background()
	c := newCycle(s, nil, nil)
	var reqs []approval.Request
	for i := range 5 {
		reqs = append(reqs, c.ask(t, fmt.Sprintf("call_%d", i), cycleArgs))
	}
	must(t, c.desk.ApproveBy(ctx, reqs[0], time.Hour, approval.Review{Reviewer: "ana@example.org", Reason: "ok, refund it"}))
	must(t, c.desk.DenyBy(ctx, reqs[1], approval.Review{Reviewer: "bo", Reason: "not\x00this one"}))
	// A row the Desk did not write, under an id of its own and under the
	// id of a request.
	must(t, s.Save(ctx, "apr_forged", nil, []byte(`{"v":2,"state":"pending"}`)))
	writeBack(t, s, reqs[2].ID, snapshot(t, s, reqs[0].ID))

	page, err := c.desk.List(ctx, approval.Query{State: approval.StatePending})
	must(t, err)
	if page.Skipped != 2 || page.Next != "" {
		t.Fatalf("List: Skipped %d, Next %q; want 2 rows that fail their check, and no next page", page.Skipped, page.Next)
	}
	var got []string
	for _, r := range page.Requests {
		got = append(got, r.ID)
		if r.State != approval.StatePending || r.Asker != "run-decisions" || r.Summary == "" {
			t.Fatalf("listed %+v, want pending, asked by run-decisions, with a summary", r)
		}
	}
	want := []string{reqs[3].ID, reqs[4].ID}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("pending requests listed %q, want %q", got, want)
	}
	// Pages of one.
	q := approval.Query{Limit: 1}
	var seen []string
	for range 10 {
		page, err := c.desk.List(ctx, q)
		must(t, err)
		for _, r := range page.Requests {
			seen = append(seen, r.ID)
		}
		if page.Next == "" {
			break
		}
		q.After = page.Next
	}
	if len(seen) != 4 {
		t.Fatalf("pages of one listed %q, want the 4 requests that pass their check", seen)
	}
	// The decisions say who made them, from the sealed row.
	a, err := c.desk.Get(ctx, reqs[0].ID)
	must(t, err)
	d, err := c.desk.Get(ctx, reqs[1].ID)
	must(t, err)
	if a.State != approval.StateApproved || a.Reviewer != "ana@example.org" || a.Reason != "ok, refund it" ||
		d.State != approval.StateDenied || d.Reviewer != "bo" || d.Reason != "not this one" {
		t.Fatalf("decisions read back as %+v and %+v", a, d)
	}
	// The approval runs once, and its use keeps the reviewer.
	if err := c.call("call_0", cycleArgs); err != nil || c.runs.Load() != 1 {
		t.Fatalf("the approved call: %v, %d executions", err, c.runs.Load())
	}
	if u, err := c.desk.Get(ctx, reqs[0].ID); err != nil || u.State != approval.StateUsed || u.Reviewer != "ana@example.org" {
		t.Fatalf("the used approval reads %+v, %v", u, err)
	}
}
