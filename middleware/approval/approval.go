package approval

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/internal/storeguard"
	"github.com/toolmw/toolmw/store"
	"github.com/toolmw/toolmw/taxonomy"

	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/middleware/internal/single"
)

// New returns the approval layer: each call gate says needs approval
// runs only with a reviewer's valid approval for exactly its arguments;
// without one it ends at once as approval-pending and the tool does not
// run. It is NewDesk(opts...).Middleware(gate); use a Desk directly to
// decide requests. An invalid option makes a [toolmw.Reject] middleware
// (see [Validate]).
func New(gate Gate, opts ...Option) toolmw.Middleware {
	return NewDesk(opts...).Middleware(gate)
}

// The messages of the layer's errors: fixed sentences, never data.
const (
	msgPending  = "the call waits for a person's approval; nothing ran"
	msgExpired  = "the approval for the call expired before it was used; nothing ran; the call waits for a new decision"
	msgDenied   = "a reviewer denied this call; nothing ran; do not make it again"
	msgReplayed = "the approval for this call was already used by the one execution it allows; nothing ran"
	msgCorrupt  = "the stored decision for this call failed its check; nothing ran"
	msgFailed   = "the approval store failed; nothing ran"
	msgDeadline = "the caller's deadline passed while the approval was checked"
	msgChanged  = "this call id already has an approval request for other arguments; nothing ran; the request stands; make the call under a new call id"
	msgUnbound  = "the call needs approval but has no run to bind it to; nothing ran"
)

// maxRounds bounds how often the layer reads the row again after a
// compare-and-swap lost to another writer, so a store that always
// conflicts fails closed instead of spinning.
const maxRounds = 4

// Middleware returns the approval layer of d: each call gate says needs
// approval runs only with a valid approval, filed and decided through d;
// other calls pass through untouched. See the package documentation for
// what a call ends in. With an invalid option it is a [toolmw.Reject]
// middleware.
func (d *Desk) Middleware(gate Gate) toolmw.Middleware {
	if d.err != nil {
		return toolmw.Reject(d.err)
	}
	return func(next toolmw.Tool) toolmw.Tool {
		return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
			call, wrapped := toolmw.CallFrom(ctx)
			if gate != nil && !needs(gate, ctx, call, args) {
				return next(ctx, args)
			}
			if err := d.bound(ctx, wrapped); err != nil {
				return toolmw.Result{}, err
			}
			if err := d.gate(ctx, call, args); err != nil {
				return toolmw.Result{}, err
			}
			// The approval admits one execution: a hedge layer inside this
			// one does not start a second (middleware/internal/single).
			return next(single.Mark(ctx, "approval"), args)
		}
	}
}

// needs asks gate about a call. A gate that panics gates the call: the
// layer fails closed, and the panic goes no further.
func needs(gate Gate, ctx context.Context, call toolmw.Call, args json.RawMessage) (gated bool) {
	defer func() {
		if recover() != nil {
			gated = true
		}
	}()
	return gate(ctx, call, args)
}

// bound returns nil when the call can be bound to its own request:
// it was made through toolmw.Wrap (so it has a call record and a key), and
// it has a run, or the Desk lets calls without one share the process's
// requests (WithRunOptional). Otherwise it returns approval_unbound.
func (d *Desk) bound(ctx context.Context, wrapped bool) error {
	if !wrapped {
		return errUnbound
	}
	if _, ok := budget.RunFrom(ctx); !ok && !d.runOptional {
		return errUnbound
	}
	return nil
}

var errUnbound = taxonomy.NotPermitted(taxonomy.CodeApprovalUnbound, msgUnbound)

// approvalID returns the id of the request of a call: "apr_" and 32 hex
// digits of a hash of the tool and the call's idempotency key, which is
// the same for the same run, tool and model call id (in every process when
// the run has an id, see toolmw.WithIdempotencyKey), so a call made again
// after a restart finds its request.
func approvalID(tool, key string) string {
	h := sha256.New()
	h.Write([]byte("toolmw approval id\x00"))
	h.Write([]byte(tool))
	h.Write([]byte{0})
	h.Write([]byte(key))
	return "apr_" + hex.EncodeToString(h.Sum(nil)[:16])
}

// gate returns nil when the call may run (its approval is now used), or
// the error it ends in.
//
// A request holds for the arguments it was filed for, whatever came of
// it: the same call id with other arguments never replaces it (a denial is
// not forgotten that way, and two callers sharing a call id cannot keep
// displacing each other's request), and ends as approval_args_changed. A
// row moves only forward (pending to approved or denied, approved to used,
// denied, or, once expired, to a new pending request), and an approval
// that stops being the row's decision has its nonce spent in the store
// first, so a copy of it written back is refused as replayed.
func (d *Desk) gate(ctx context.Context, call toolmw.Call, args json.RawMessage) error {
	digest, canon := digestArgs(args)
	id := approvalID(call.Tool, call.Key())
	asked := false // the user was asked through the session (WithElicit)
	for range maxRounds {
		r, raw, err := d.loadForCall(ctx, id)
		switch {
		case errors.Is(err, ErrNotFound):
			err = d.ask(ctx, id, call.Tool, digest, canon, nil, taxonomy.CodeApprovalPending)
		case err != nil:
			return err
		case r.tool != call.Tool:
			return corrupt(id)
		case r.digest != digest:
			return argsChanged(id)
		case r.state == StatePending:
			err = pending(id, r.summary, taxonomy.CodeApprovalPending, msgPending)
		case r.state == StateDenied:
			return denied(id)
		case r.state == StateUsed:
			return replayed(id)
		case d.clock.Now().UnixNano() >= r.expires:
			err = d.renew(ctx, r, raw, canon)
		default:
			return d.use(ctx, r, raw, call)
		}
		if !asked && d.elicitTTL > 0 && taxonomy.InfoOf(err).Kind == taxonomy.KindApprovalPending {
			asked = true
			if d.elicit(ctx, id) {
				continue // decided: read the decision
			}
		}
		if !errors.Is(err, ErrConflict) {
			return err
		}
		// Another writer got there first: read what it wrote.
	}
	return storeFailed(ctx, errors.New("approval: the row kept changing"))
}

// loadForCall reads and opens the row under id, turning failures into the
// call's error; ErrNotFound is returned as is.
func (d *Desk) loadForCall(ctx context.Context, id string) (*row, []byte, error) {
	raw, err := d.loadRaw(ctx, id)
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return nil, nil, ErrNotFound
		}
		return nil, nil, storeFailed(ctx, err)
	}
	r, err := d.seal.open(raw, id)
	if err != nil {
		return nil, nil, corrupt(id)
	}
	return r, raw, nil
}

// ask files a new pending request for the call in place of prev (nil: no
// row yet) and returns the call's approval-pending error with code, or
// ErrConflict when another writer changed the row first.
func (d *Desk) ask(ctx context.Context, id, tool string, digest [32]byte, canon string, prev []byte, code string) error {
	r := &row{id: id, tool: tool, digest: digest, state: StatePending, created: d.clock.Now().UnixNano(),
		nonce: newNonce(), summary: d.summary(tool, canon), asker: d.asker(ctx)}
	if err := d.save(ctx, id, prev, d.seal.seal(r)); err != nil {
		if errors.Is(err, ErrConflict) {
			return ErrConflict
		}
		return storeFailed(ctx, err)
	}
	d.tally.filed(tool, code == taxonomy.CodeApprovalExpired)
	msg := msgPending
	if code == taxonomy.CodeApprovalExpired {
		msg = msgExpired
	}
	return pending(id, r.summary, code, msg)
}

// renew replaces the expired approval r with a new pending request for the
// same arguments. The approval's nonce is spent first, so that r, written
// back into the store, is refused as replayed even by a replica whose
// clock says it has not expired. When the nonce is already spent (that
// replica used it, or another caller is renewing r), r is read again: a
// row still the same ends the call as approval_replayed (fail closed: the
// approval may have been used), another is decided afresh (ErrConflict).
// When the store does not say whether it spent the nonce, the spending is
// cancelled (see spend): r is not replaced, so it is not retired.
func (d *Desk) renew(ctx context.Context, r *row, raw []byte, canon string) error {
	if err := d.spend(ctx, r.nonce); err != nil {
		if !errors.Is(err, ErrConsumed) {
			return storeFailed(ctx, err)
		}
		now, err := d.loadRaw(ctx, r.id)
		if err == nil && bytes.Equal(now, raw) {
			return replayed(r.id)
		}
		if err != nil && !errors.Is(err, ErrNotFound) {
			return storeFailed(ctx, err)
		}
		return ErrConflict
	}
	return d.ask(ctx, r.id, r.tool, r.digest, canon, raw, taxonomy.CodeApprovalExpired)
}

// use spends the approval r on this call: exactly one of all the calls
// holding r, in any process sharing the store, gets nil and runs; and
// none does when a reviewer revoked r (Deny spends the same nonce). A call
// that cannot learn whether it spent r does not run, and gives r back
// (see spend).
func (d *Desk) use(ctx context.Context, r *row, raw []byte, call toolmw.Call) error {
	if err := d.spend(ctx, r.nonce); err != nil {
		if !errors.Is(err, ErrConsumed) {
			return storeFailed(ctx, err)
		}
		// Used by another caller, or revoked: a denial now stored for
		// these arguments is what the call is told.
		if now, _, lerr := d.loadForCall(ctx, r.id); lerr == nil && now.state == StateDenied && now.digest == r.digest {
			return denied(r.id)
		}
		return replayed(r.id)
	}
	// Record the use for the reviewer, with the call's idempotency key.
	// The nonce is spent whatever happens to this write: a row that still
	// says approved is refused as replayed. A failure is reported.
	used := *r
	used.state, used.key = StateUsed, call.Key()
	_ = d.save(ctx, r.id, raw, d.seal.seal(&used))
	return nil
}

// spend consumes nonce under a new operation id. When the store fails, or
// does not answer in time, the outcome is unknown: the Consume may have
// been applied, or be applied later (a Redis that answers late, a
// failover). The call will not run, so the operation is cancelled: the
// nonce is freed if it took it, and it can never take it later. Counting
// the unknown outcome as spent would lose the decision (every later call
// approval_replayed, the request approved, so Approve finds it decided);
// counting it as not spent would let the Consume land later. When the
// cancel fails too, it is reported and tried again after each rest of the
// store (see cancel); until it lands the decision may stay spent, which
// fails closed. A Consume that returned nil is never cancelled (its call
// runs), nor one the store was not asked because it rests.
func (d *Desk) spend(ctx context.Context, nonce string) error {
	op := storeguard.NewOp()
	err := d.consume(ctx, nonce, op)
	if err != nil && !errors.Is(err, ErrConsumed) && !errors.Is(err, store.ErrResting) {
		d.cancel(ctx, nonce, op)
	}
	return err
}

// summary returns what a reviewer reads about a call: the tool's name and
// its arguments, scrubbed first and then held to
// taxonomy.MaxApprovalSummary bytes (so no cut can split a secret the
// scrubber would have found).
func (d *Desk) summary(tool, canon string) string {
	s := reveal(d.scrub.String(tool + " " + canon))
	return taxonomy.New(taxonomy.KindApprovalPending, taxonomy.CodeApprovalPending, "").
		WithApproval("x", s).Approval().Summary
}

// asker returns who asks for a call made with ctx, for the reviewer: the
// id of its run, scrubbed (a run id may be anything of the plain shape,
// a token included), or "" when the run has none.
func (d *Desk) asker(ctx context.Context) string {
	run, ok := budget.RunFrom(ctx)
	if !ok || run.ID() == "" {
		return ""
	}
	if a := d.scrub.String(run.ID()); plainText(a, MaxReviewerLen) {
		return a
	}
	return ""
}

func pending(id, summary, code, msg string) error {
	return taxonomy.New(taxonomy.KindApprovalPending, code, msg).WithApproval(id, summary)
}

func denied(id string) error {
	return taxonomy.New(taxonomy.KindApprovalDenied, taxonomy.CodeApprovalDenied, msgDenied).WithApproval(id, "")
}

// argsChanged names the request that stands, without its summary: the
// arguments it describes are not this call's.
func argsChanged(id string) error {
	return taxonomy.NotPermitted(taxonomy.CodeApprovalArgsChanged, msgChanged).WithApproval(id, "")
}

func replayed(id string) error {
	return taxonomy.NotPermitted(taxonomy.CodeApprovalReplayed, msgReplayed).WithApproval(id, "")
}

func corrupt(id string) error {
	return taxonomy.NotPermitted(taxonomy.CodeApprovalStoreCorrupt, msgCorrupt).WithApproval(id, "")
}

// storeFailed is the call's error when the store failed with err: the
// caller's own cancellation or deadline when that is why, else
// approval_store_failed. Either way nothing ran.
func storeFailed(ctx context.Context, err error) error {
	switch ctx.Err() {
	case context.Canceled:
		return context.Canceled
	case context.DeadlineExceeded:
		return taxonomy.Timeout(taxonomy.CodeDeadlineExceeded, msgDeadline, false).WithCause(err)
	}
	return taxonomy.Transient(taxonomy.CodeApprovalStoreFailed, msgFailed).WithCause(err)
}

// approveSchema is the answer the Desk asks the user for (WithElicit).
var approveSchema = json.RawMessage(`{"type":"object","properties":{"approve":{"type":"boolean","title":"Approve this call"}},"required":["approve"]}`)

// elicit asks the user of the call ctx is for whether to approve the
// pending request id, through the call's session, and records the answer;
// it reports whether a decision was recorded. A transport that cannot ask,
// a cancel, or any failure leaves the request pending.
func (d *Desk) elicit(ctx context.Context, id string) bool {
	req, err := d.Get(ctx, id)
	if err != nil || req.State != StatePending {
		return false
	}
	ans, err := toolmw.Elicit(ctx, toolmw.Elicitation{
		Message: "A tool call waits for your approval: " + req.Summary,
		Schema:  approveSchema,
	})
	if err != nil {
		return false
	}
	approve, _ := ans.Content["approve"].(bool)
	switch {
	case ans.Action == "accept" && approve:
		return d.Approve(ctx, req, d.elicitTTL) == nil
	case ans.Action == "accept", ans.Action == "decline":
		return d.Deny(ctx, req) == nil
	}
	return false
}
