package console

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/toolmw/toolmw/middleware/approval"
)

// The desk's bounds.
const (
	// deskPage is how many requests of each state one page lists.
	deskPage = 50
	// maxForm is the largest decision form read, in bytes.
	maxForm = 16 << 10
	// deskTimeout bounds the desk's work on one request, store included.
	deskTimeout = 10 * time.Second
)

func (h *console) addDesk() {
	h.views = append(h.views, view{Path: "approvals", Title: "Approval desk",
		About: "calls that wait for a person's decision"})
	h.mux.HandleFunc("GET /approvals", h.deskPage)
	h.mux.HandleFunc("GET /approvals.json", h.deskJSON)
	h.mux.HandleFunc("POST /approvals", h.deskDecide)
}

// item is one request as the desk shows it: nothing but what the sealed
// row says, the arguments as the scrubbed summary.
type item struct {
	ID        string    `json:"id"`
	Tool      string    `json:"tool"`
	Summary   string    `json:"summary"`
	Asker     string    `json:"asker,omitempty"`
	Created   time.Time `json:"created"`
	Expires   time.Time `json:"expires,omitzero"`
	State     string    `json:"state"`
	Reviewer  string    `json:"reviewer,omitempty"`
	Reason    string    `json:"reason,omitempty"`
	Version   string    `json:"version"`
	MayDecide bool      `json:"may_decide"`
}

// listing is what the page and its JSON show.
type listing struct {
	Reviewer string `json:"reviewer"`
	Pending  []item `json:"pending"`
	Approved []item `json:"approved"` // approved and not yet used
	Next     string `json:"next,omitempty"`
	Skipped  int    `json:"skipped"` // rows that failed their check: not shown
	// The page's alone.
	Token  string    `json:"-"`
	TTL    string    `json:"-"`
	Notice string    `json:"-"`
	Now    time.Time `json:"-"`
}

// reviewer returns who sends r, or false (a panic in the hook too).
func (h *console) reviewer(r *http.Request) (who string, ok bool) {
	defer func() {
		if recover() != nil {
			who, ok = "", false
		}
	}()
	who, ok = h.desk.reviewer(r)
	return who, ok && who != "" && len(who) <= approval.MaxReviewerLen
}

// mayDecide asks the authorisation hook; a panic is a no.
func (h *console) mayDecide(reviewer, tool string) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return h.desk.authorize(reviewer, tool)
}

// list reads a page of pending requests (after the cursor after) and the
// approvals not yet used.
func (h *console) list(ctx context.Context, reviewer, after string) (listing, error) {
	l := listing{Reviewer: reviewer, Pending: []item{}, Approved: []item{}}
	pending, err := h.desk.desk.List(ctx, approval.Query{After: after, Limit: deskPage, State: approval.StatePending})
	if err != nil {
		return l, err
	}
	approved, err := h.desk.desk.List(ctx, approval.Query{Limit: deskPage, State: approval.StateApproved})
	if err != nil {
		return l, err
	}
	now := time.Now()
	for _, q := range pending.Requests {
		l.Pending = append(l.Pending, h.item(reviewer, q))
	}
	for _, q := range approved.Requests {
		if q.Expires.After(now) {
			l.Approved = append(l.Approved, h.item(reviewer, q))
		}
	}
	l.Next, l.Skipped = pending.Next, pending.Skipped+approved.Skipped
	return l, nil
}

func (h *console) item(reviewer string, q approval.Request) item {
	return item{ID: q.ID, Tool: q.Tool, Summary: q.Summary, Asker: q.Asker, Created: q.Created, Expires: q.Expires,
		State: q.State.String(), Reviewer: q.Reviewer, Reason: q.Reason, Version: q.Version(),
		MayDecide: h.mayDecide(reviewer, q.Tool)}
}

// cursor returns the page cursor of r, or false when it is not one.
func cursor(r *http.Request) (string, bool) {
	after := r.URL.Query().Get("after")
	return after, after == "" || safeID(after)
}

func (h *console) deskPage(w http.ResponseWriter, r *http.Request) {
	who, ok := h.reviewer(r)
	if !ok {
		refuse(w, http.StatusForbidden, "Only reviewers may see the approval desk.")
		return
	}
	after, ok := cursor(r)
	if !ok {
		refuse(w, http.StatusBadRequest, "That is not a page of the desk.")
		return
	}
	session := h.csrf.session(w, r)
	ctx, cancel := context.WithTimeout(r.Context(), deskTimeout)
	defer cancel()
	l, err := h.list(ctx, who, after)
	if err != nil {
		refuse(w, http.StatusServiceUnavailable, "The approval store could not be read; try again.")
		return
	}
	l.Token, l.TTL, l.Now = h.csrf.token(session, who), h.desk.ttl.String(), time.Now().UTC()
	l.Notice = notices[r.URL.Query().Get("done")]
	render(w, http.StatusOK, "approvals.html", l)
}

// notices are the fixed sentences a decision's redirect shows.
var notices = map[string]string{
	"approved": "Approved: the call runs when it is made again.",
	"denied":   "Denied: the call will not run.",
}

func (h *console) deskJSON(w http.ResponseWriter, r *http.Request) {
	who, ok := h.reviewer(r)
	if !ok {
		http.Error(w, `{"error":"forbidden"}`, http.StatusForbidden)
		return
	}
	after, ok := cursor(r)
	if !ok {
		http.Error(w, `{"error":"bad cursor"}`, http.StatusBadRequest)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), deskTimeout)
	defer cancel()
	l, err := h.list(ctx, who, after)
	if err != nil {
		http.Error(w, `{"error":"store unavailable"}`, http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(l)
}

// deskDecide makes the decision a reviewer sent from the page: only by
// POST from the console's own origin (checked before), only by a
// reviewer, only with the token of their session, only for a tool the
// authorisation hook lets them decide, and only for the request as the
// page showed it (its version).
func (h *console) deskDecide(w http.ResponseWriter, r *http.Request) {
	who, ok := h.reviewer(r)
	if !ok {
		refuse(w, http.StatusForbidden, "Only reviewers may decide.")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if err := r.ParseForm(); err != nil {
		refuse(w, http.StatusBadRequest, "The form could not be read.")
		return
	}
	if !h.csrf.check(r, who, r.PostForm.Get("csrf")) {
		refuse(w, http.StatusForbidden, "The form's token does not match your session: reload the desk and try again.")
		return
	}
	id, action := r.PostForm.Get("id"), r.PostForm.Get("action")
	if !safeID(id) || action != "approve" && action != "deny" {
		refuse(w, http.StatusBadRequest, "The form names no request or no decision.")
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), deskTimeout)
	defer cancel()
	req, err := h.desk.desk.Get(ctx, id)
	switch {
	case errors.Is(err, approval.ErrNotFound):
		refuse(w, http.StatusNotFound, "There is no such request.")
		return
	case errors.Is(err, approval.ErrCorrupt):
		refuse(w, http.StatusConflict, "The stored request fails its check; it cannot be decided.")
		return
	case err != nil:
		refuse(w, http.StatusServiceUnavailable, "The approval store could not be read; try again.")
		return
	}
	if !h.mayDecide(who, req.Tool) {
		refuse(w, http.StatusForbidden, "You may not decide calls of this tool.")
		return
	}
	if r.PostForm.Get("version") != req.Version() {
		refuse(w, http.StatusConflict, "The request changed since the page showed it: reload the desk and decide what it says now.")
		return
	}
	rv := approval.Review{Reviewer: who, Reason: r.PostForm.Get("reason")}
	done := "approved"
	if action == "approve" {
		err = h.desk.desk.ApproveBy(ctx, req, h.desk.ttl, rv)
	} else {
		done = "denied"
		err = h.desk.desk.DenyBy(ctx, req, rv)
	}
	switch {
	case errors.Is(err, approval.ErrChanged), errors.Is(err, approval.ErrDecided):
		refuse(w, http.StatusConflict, "The request was decided or changed meanwhile: reload the desk.")
		return
	case errors.Is(err, approval.ErrReviewer):
		refuse(w, http.StatusForbidden, "Your reviewer identity cannot be recorded.")
		return
	case err != nil:
		refuse(w, http.StatusServiceUnavailable, "The decision could not be stored; reload the desk and try again.")
		return
	}
	// Relative, so the console's prefix stays (http.Redirect would make it
	// absolute from the stripped path).
	w.Header().Set("Location", "approvals?done="+done)
	w.WriteHeader(http.StatusSeeOther)
}

// safeID reports whether s could be an approval id: 1 to
// approval.MaxIDLen bytes of ASCII letters, digits and "_-.:".
func safeID(s string) bool {
	if s == "" || len(s) > approval.MaxIDLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.' || c == ':') {
			return false
		}
	}
	return true
}
