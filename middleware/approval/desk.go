package approval

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/internal/storeguard"
	"github.com/toolmw/toolmw/scrub"
	"github.com/toolmw/toolmw/state"
	"github.com/toolmw/toolmw/store"
)

// MinKeyLen is the shortest key [WithSealKey] accepts: 32 bytes, the size of
// the HMAC-SHA256 output.
const MinKeyLen = 32

// MaxTTL is the longest an approval may stand unused ([Desk.Approve]).
const MaxTTL = 30 * 24 * time.Hour

// ErrStorePanicked is the error of a [Store] operation that panicked (the
// panic value is not kept: it may hold anything): the layer recovers,
// fails closed (tool-failed/approval_store_failed, nothing runs) and
// reports it to store.WithOnError as the Err of a store.Error; the
// reviewer's side returns it wrapped.
var ErrStorePanicked = errors.New("approval: the store panicked")

// Gate says whether a call needs a person's approval. It gets the call's
// context, its Call (the zero Call when the tool was not made by
// toolmw.Wrap) and its arguments, which it must not modify. A Gate must
// be safe for concurrent use; nil means every call needs approval, and so
// does a call whose gate panics (the layer fails closed).
type Gate func(ctx context.Context, call toolmw.Call, args json.RawMessage) bool

// Tools returns a gate under which the calls of the tools named need
// approval, and no other.
func Tools(names ...string) Gate {
	set := make(map[string]struct{}, len(names))
	for _, n := range names {
		set[n] = struct{}{}
	}
	return func(_ context.Context, call toolmw.Call, _ json.RawMessage) bool {
		_, ok := set[call.Tool]
		return ok
	}
}

// Desk is where approval requests wait and reviewers decide them: the
// layer it makes ([Desk.Middleware]) files a request for each call that
// needs one, and [Desk.Get], [Desk.Approve] and [Desk.Deny] are the
// reviewer's side. Several Desks (replicas, or a process restarted) share
// requests through one durable [Store] and one key.
//
// A Desk is safe for concurrent use.
type Desk struct {
	store       Store
	seal        sealer
	clock       clock.Clock
	scrub       *scrub.Scrubber
	guard       *storeguard.Guard
	runOptional bool
	elicitTTL   time.Duration
	onVerdict   func(Verdict)
	tally       *tally // its MemoryStore's, or its own
	err         error
}

// NewDesk returns a Desk configured by opts. An invalid option is reported
// by every method (the layer becomes a toolmw.Reject middleware); see
// [Validate].
func NewDesk(opts ...Option) *Desk {
	c := newConfig(opts)
	d := &Desk{store: c.store, seal: sealer{key: c.key}, clock: clock.Or(c.clock), scrub: c.scrubber,
		guard: storeguard.New("approval", c.storeCfg, true, c.clock), runOptional: c.runOptional, elicitTTL: c.elicitTTL, onVerdict: c.onVerdict, err: c.err}
	if d.store == nil {
		d.store = NewMemoryStore()
	}
	if m, ok := d.store.(*MemoryStore); ok && m.tally != nil {
		d.tally = m.tally // counted once for all the Desks sharing m
	} else {
		d.tally = newTally()
		state.Register(state.Default, d, publishDesk)
	}
	if d.seal.key == nil {
		d.seal.key = make([]byte, MinKeyLen)
		_, _ = rand.Read(d.seal.key) // crypto/rand.Read never fails (Go 1.24+)
	}
	if d.scrub == nil {
		d.scrub = scrub.Default()
	}
	return d
}

// Request is an approval request as a reviewer sees it. Decide it by
// passing it back to [Desk.Approve] or [Desk.Deny]: the decision then
// holds for exactly the call the reviewer read about.
type Request struct {
	ID      string    // the approval id, as in taxonomy.ApprovalInfo
	Tool    string    // the tool's name
	Summary string    // the tool and its scrubbed arguments, at most taxonomy.MaxApprovalSummary bytes
	State   State     // where the request stands
	Created time.Time // when the request was made
	Expires time.Time // when an approval lapses unused; zero unless approved
	Key     string    // the idempotency key of the call that used the approval (StateUsed), or ""
	// Asker is who asked: the id of the call's run (budget.WithID),
	// scrubbed, or "" when the run has none.
	Asker string
	// Reviewer and Reason are who decided the request and why, as given
	// to [Desk.ApproveBy] or [Desk.DenyBy]; "" when not decided, or
	// decided by Approve or Deny.
	Reviewer, Reason string

	digest [32]byte
	nonce  string
}

// The errors of the reviewer's side, besides [ErrNotFound] and store
// failures.
var (
	// ErrChanged: the request changed since it was read (its call came
	// again with other arguments, or someone else decided it): read it
	// again with Get and decide what it says now.
	ErrChanged = errors.New("approval: the request changed since it was read")
	// ErrDecided: the request is not pending (Approve), or neither pending
	// nor approved (Deny).
	ErrDecided = errors.New("approval: the request is already decided")
	// ErrCorrupt: the stored row fails its check (changed, forged with
	// another key, or copied from another request).
	ErrCorrupt = errors.New("approval: the stored request fails its check")
)

// Version returns a short token of what req shows: the same while the
// stored request stays as req was read, another once it changes (it was
// decided, or filed again after its approval expired). A page that lets a
// reviewer decide carries it, so the decision applies to what the reviewer
// saw. It reveals nothing of the arguments or the nonce.
func (req Request) Version() string {
	h := sha256.New()
	h.Write([]byte("toolmw approval version\x00"))
	h.Write(req.digest[:])
	h.Write([]byte(req.nonce))
	h.Write([]byte{byte(req.State)})
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// Review is who decides a request and why, recorded in the sealed row
// with the decision ([Desk.ApproveBy], [Desk.DenyBy]).
type Review struct {
	// Reviewer identifies the reviewer, as the application knows them: 1
	// to [MaxReviewerLen] bytes of UTF-8 without control characters.
	Reviewer string
	// Reason is why, in the reviewer's words: scrubbed (package scrub),
	// control characters replaced by spaces and held to [MaxReasonLen]
	// bytes; may be "".
	Reason string
}

// The bounds of what a row records of who asked and who decided.
const (
	// MaxReviewerLen is the longest reviewer identity, and asker.
	MaxReviewerLen = 128
	// MaxReasonLen is the longest reason kept; a longer one is cut.
	MaxReasonLen = 512
)

// Verdict is a reviewer's decision, as [WithOnVerdict] reports it once it
// is stored.
type Verdict struct {
	ID       string    // the approval id
	Tool     string    // the tool's name
	State    State     // StateApproved or StateDenied
	Reviewer string    // as in the Review; "" for Approve and Deny
	Reason   string    // as stored: scrubbed and bounded
	Asker    string    // who asked, as in Request.Asker
	Created  time.Time // when the request was made
	At       time.Time // when the decision was stored, by the Desk's clock
	Expires  time.Time // when an approval lapses unused; zero for a denial
}

// Get returns the request stored under id.
func (d *Desk) Get(ctx context.Context, id string) (Request, error) {
	if d.err != nil {
		return Request{}, d.err
	}
	r, _, err := d.load(ctx, id)
	if err != nil {
		return Request{}, err
	}
	return r.request(), nil
}

// Approve approves the request as req shows it, for ttl: the call it
// describes, with exactly those arguments, may then run once before ttl
// has passed. ttl must be more than 0 and at most [MaxTTL]. It fails with
// [ErrChanged] when the stored request is no longer req, and
// [ErrDecided] when it is not pending.
func (d *Desk) Approve(ctx context.Context, req Request, ttl time.Duration) error {
	return d.approve(ctx, req, ttl, Review{})
}

// ApproveBy is [Desk.Approve], recording rv in the sealed row with the
// approval (and in the row of its use). rv.Reviewer must be set.
func (d *Desk) ApproveBy(ctx context.Context, req Request, ttl time.Duration, rv Review) error {
	if err := d.checkReview(&rv); err != nil {
		return err
	}
	return d.approve(ctx, req, ttl, rv)
}

func (d *Desk) approve(ctx context.Context, req Request, ttl time.Duration, rv Review) error {
	if d.err != nil {
		return d.err
	}
	if ttl <= 0 || ttl > MaxTTL {
		return fmt.Errorf("approval: Approve: a ttl of %v; it must be more than 0 and at most %v", ttl, MaxTTL)
	}
	return d.decide(ctx, req, rv, func(r *row) error {
		if r.state != StatePending {
			return ErrDecided
		}
		r.state, r.expires = StateApproved, d.clock.Now().Add(ttl).UnixNano()
		return nil
	})
}

// Deny denies the request as req shows it: its call ends as
// approval-denied, however often it is made, and the denial is final: no
// Approve, no call with other arguments and no expiry replaces it. A
// pending request and an approval not yet used may be denied; denying an
// approval revokes it: its nonce is spent in the store first (exactly one
// of the revocation and a racing use of the approval succeeds), so the
// approved row, written back into the store later, is refused as replayed.
// It fails with [ErrChanged] when the stored request is no longer req, and
// [ErrDecided] otherwise, also when the approval was used first, or was
// being used by a call at that moment (a call whose use got no answer
// from the store, and which gives it back: read the request again, and
// deny it again while it is approved). When the approval was revoked but
// the denial could not be stored, or the store did not say whether it
// revoked it, Deny returns the store's error and the approval may stay
// spent (a revocation is never undone): its call ends as
// approval_replayed, and a later Deny returns ErrDecided.
func (d *Desk) Deny(ctx context.Context, req Request) error {
	return d.deny(ctx, req, Review{})
}

// DenyBy is [Desk.Deny], recording rv in the sealed row with the denial.
// rv.Reviewer must be set.
func (d *Desk) DenyBy(ctx context.Context, req Request, rv Review) error {
	if err := d.checkReview(&rv); err != nil {
		return err
	}
	return d.deny(ctx, req, rv)
}

func (d *Desk) deny(ctx context.Context, req Request, rv Review) error {
	if d.err != nil {
		return d.err
	}
	return d.decide(ctx, req, rv, func(r *row) error {
		switch r.state {
		case StatePending:
		case StateApproved:
			// A revocation is never cancelled: when the store does not
			// answer, the approval may stay spent (fail closed).
			if err := d.consume(ctx, r.nonce, newNonce()); err != nil {
				if errors.Is(err, ErrConsumed) {
					return ErrDecided // used, or revoked before
				}
				return fmt.Errorf("approval: revoking the approval: %w", err)
			}
		default:
			return ErrDecided
		}
		r.state, r.expires = StateDenied, 0
		return nil
	})
}

// ErrReviewer: a Review without a reviewer, or with one beyond its bounds.
var ErrReviewer = errors.New("approval: a review needs a reviewer of 1 to MaxReviewerLen bytes of text without control characters")

// checkReview checks rv's reviewer and makes its reason what a row keeps.
func (d *Desk) checkReview(rv *Review) error {
	if rv.Reviewer == "" || !plainText(rv.Reviewer, MaxReviewerLen) {
		return ErrReviewer
	}
	rv.Reason = cleanReason(d.scrub.String(rv.Reason))
	return nil
}

// cleanReason returns s with every control character a space, cut at a
// character boundary to at most MaxReasonLen bytes.
func cleanReason(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	var b strings.Builder
	for _, c := range s {
		if c < 0x20 || c == 0x7f || c >= 0x80 && c < 0xa0 {
			c = ' '
		}
		if b.Len()+utf8.RuneLen(c) > MaxReasonLen {
			break
		}
		b.WriteRune(c)
	}
	return b.String()
}

// decide applies change to the stored request req was read from, with a
// new nonce and the review rv, when it is still that request, and reports
// the verdict.
func (d *Desk) decide(ctx context.Context, req Request, rv Review, change func(*row) error) error {
	r, raw, err := d.load(ctx, req.ID)
	if err != nil {
		return err
	}
	if r.digest != req.digest || r.nonce != req.nonce || r.state != req.State {
		return ErrChanged
	}
	if err := change(r); err != nil {
		return err
	}
	r.nonce = newNonce()
	r.reviewer, r.reason = rv.Reviewer, rv.Reason
	if err := d.save(ctx, r.id, raw, d.seal.seal(r)); err != nil {
		if errors.Is(err, ErrConflict) {
			return ErrChanged
		}
		return fmt.Errorf("approval: saving the decision: %w", err)
	}
	d.tally.decided(r.tool, req.State, r.state, time.Unix(0, r.created), d.clock.Now())
	d.verdict(r)
	return nil
}

// verdict reports the decision r records to the WithOnVerdict callback,
// if any; a panic in it is dropped.
func (d *Desk) verdict(r *row) {
	if d.onVerdict == nil {
		return
	}
	q := r.request()
	v := Verdict{ID: q.ID, Tool: q.Tool, State: q.State, Reviewer: q.Reviewer, Reason: q.Reason,
		Asker: q.Asker, Created: q.Created, At: d.clock.Now(), Expires: q.Expires}
	defer func() { _ = recover() }()
	d.onVerdict(v)
}

// load reads and opens the row stored under id.
func (d *Desk) load(ctx context.Context, id string) (*row, []byte, error) {
	raw, err := d.loadRaw(ctx, id)
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return nil, nil, ErrNotFound
		}
		return nil, nil, fmt.Errorf("approval: loading the request: %w", err)
	}
	r, err := d.seal.open(raw, id)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	return r, raw, nil
}

func (r *row) request() Request {
	q := Request{ID: r.id, Tool: r.tool, Summary: r.summary, State: r.state,
		Created: time.Unix(0, r.created).UTC(), Key: r.key, Asker: r.asker, Reviewer: r.reviewer, Reason: r.reason,
		digest: r.digest, nonce: r.nonce}
	if r.state == StateApproved {
		q.Expires = time.Unix(0, r.expires).UTC()
	}
	return q
}

// loadRaw, save, consume and cancel are the Desk's only ways to its store,
// all through its guard (internal/storeguard): each operation bounded by
// the store timeout, a panic recovered as ErrStorePanicked, a failure
// reported and the store rested (see storeOp).
func (d *Desk) loadRaw(ctx context.Context, id string) (raw []byte, err error) {
	err = d.storeOp(ctx, "load", func(sctx context.Context) error {
		raw, err = d.store.Load(sctx, id)
		return err
	})
	return raw, err
}

func (d *Desk) save(ctx context.Context, id string, prev, row []byte) error {
	return d.storeOp(ctx, "save", func(sctx context.Context) error { return d.store.Save(sctx, id, prev, row) })
}

func (d *Desk) consume(ctx context.Context, nonce, op string) error {
	return d.storeOp(ctx, "consume", func(sctx context.Context) error { return d.store.Consume(sctx, nonce, op) })
}

// cancel undoes op's Consume of nonce, which got no answer, bounded by the
// store timeout but not by ctx: a call ended by its caller still gives
// back the decision it may have spent. It is tried at once, even while the
// store rests (the Consume that failed just rested it): it is what keeps
// the decision from being lost. A failure is reported, whether or not ctx
// has ended, and the cancel is tried again in the background after each
// rest, for up to store.GiveUp (the guard's Eventually; Cancel is
// idempotent).
func (d *Desk) cancel(ctx context.Context, nonce, op string) {
	f := func(sctx context.Context) error {
		return recovered(sctx, func(sctx context.Context) error { return d.store.Cancel(sctx, nonce, op) })
	}
	sctx, stop := context.WithTimeout(context.WithoutCancel(ctx), d.guard.Timeout())
	err := f(sctx)
	stop()
	if err == nil {
		return
	}
	d.guard.Failed("cancel", "", err)
	// The store rests now (unless the failure was of part of it only:
	// then Eventually tries once more at once): queued.
	d.guard.Eventually(ctx, "cancel", "", f)
}

// storeOp runs one operation f on the store through the guard, with ctx
// bounded by the store timeout, and returns f's error. A panic in the
// store is recovered and returned as ErrStorePanicked: the call fails
// closed, and the panic goes no further. The outcomes a store reports by
// design (ErrNotFound, ErrConflict, ErrConsumed, ErrCanceled) are answers:
// neither reported nor resting the store. Any other error is reported and
// rests the store, unless the caller's own context ended first (nothing is
// reported). While the store rests, f is not run and storeOp returns
// store.ErrResting.
func (d *Desk) storeOp(ctx context.Context, op string, f func(context.Context) error) error {
	var answer, failure error
	local, end := d.guard.Ask(ctx, op, "", func(sctx context.Context) error {
		err := recovered(sctx, f)
		if errors.Is(err, ErrNotFound) || errors.Is(err, ErrConflict) || errors.Is(err, ErrConsumed) || errors.Is(err, ErrCanceled) {
			answer = err
			return nil
		}
		failure = err
		return err
	})
	switch {
	case !local && end == nil:
		return answer
	case failure == nil:
		return store.ErrResting // not asked
	}
	return failure
}

// recovered returns f(ctx), or ErrStorePanicked when f panics.
func recovered(ctx context.Context, f func(context.Context) error) (err error) {
	defer func() {
		if recover() != nil {
			err = ErrStorePanicked
		}
	}()
	return f(ctx)
}

// newNonce returns 32 random hex digits: a decision's nonce, or the id of
// one operation on it.
func newNonce() string { return storeguard.NewOp() }
