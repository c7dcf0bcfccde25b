package approval

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/taxonomy"
)

// The messages of the layer's errors: fixed sentences, never data.
const (
	msgPending  = "the call waits for a person's approval; nothing ran"
	msgExpired  = "the approval for the call expired before it was used; nothing ran; the call waits for a new decision"
	msgDenied   = "a reviewer denied this call; nothing ran; do not make it again"
	msgReplayed = "the approval for this call was already used by the one execution it allows; nothing ran"
	msgCorrupt  = "the stored decision for this call failed its check; nothing ran"
	msgFailed   = "the approval store failed; nothing ran"
	msgDeadline = "the caller's deadline passed while the approval was checked"
)

// maxRounds bounds how often the layer reads the row again after a
// compare-and-swap lost to another writer, so a store that always
// conflicts fails closed instead of spinning.
const maxRounds = 4

// Middleware returns the approval layer of d: each call policy says needs
// approval runs only with a valid approval, filed and decided through d;
// other calls pass through untouched. See the package documentation for
// what a call ends in. With an invalid option it is a [toolmw.Reject]
// middleware.
func (d *Desk) Middleware(policy Policy) toolmw.Middleware {
	if d.err != nil {
		return toolmw.Reject(d.err)
	}
	return func(next toolmw.Tool) toolmw.Tool {
		return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
			call, _ := toolmw.CallFrom(ctx)
			if policy != nil && !needs(policy, ctx, call, args) {
				return next(ctx, args)
			}
			if err := d.gate(ctx, call, args); err != nil {
				return toolmw.Result{}, err
			}
			return next(ctx, args)
		}
	}
}

// needs asks policy about a call. A policy that panics gates the call: the
// layer fails closed, and the panic goes no further.
func needs(policy Policy, ctx context.Context, call toolmw.Call, args json.RawMessage) (gate bool) {
	defer func() {
		if recover() != nil {
			gate = true
		}
	}()
	return policy(ctx, call, args)
}

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
func (d *Desk) gate(ctx context.Context, call toolmw.Call, args json.RawMessage) error {
	digest, canon := digestArgs(args)
	id := approvalID(call.Tool, call.Key())
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
			// An approval or a denial holds for the arguments it was
			// given for; these ask again.
			err = d.ask(ctx, id, call.Tool, digest, canon, raw, taxonomy.CodeApprovalPending)
		case r.state == StatePending:
			return pending(id, r.summary, taxonomy.CodeApprovalPending, msgPending)
		case r.state == StateDenied:
			return taxonomy.New(taxonomy.KindApprovalDenied, taxonomy.CodeApprovalDenied, msgDenied).WithApproval(id, "")
		case r.state == StateUsed:
			return replayed(id)
		case d.clock.Now().UnixNano() >= r.expires:
			err = d.ask(ctx, id, call.Tool, digest, canon, raw, taxonomy.CodeApprovalExpired)
		default:
			return d.use(ctx, r, raw, call)
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
	sctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	raw, err := d.store.Load(sctx, id)
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
		nonce: newNonce(), summary: d.summary(tool, canon)}
	sctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	if err := d.store.Save(sctx, id, prev, d.seal.seal(r)); err != nil {
		if errors.Is(err, ErrConflict) {
			return ErrConflict
		}
		return storeFailed(ctx, err)
	}
	msg := msgPending
	if code == taxonomy.CodeApprovalExpired {
		msg = msgExpired
	}
	return pending(id, r.summary, code, msg)
}

// use spends the approval r on this call: exactly one of all the calls
// holding r, in any process sharing the store, gets nil and runs.
func (d *Desk) use(ctx context.Context, r *row, raw []byte, call toolmw.Call) error {
	sctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	if err := d.store.Consume(sctx, r.nonce); err != nil {
		if errors.Is(err, ErrConsumed) {
			return replayed(r.id)
		}
		return storeFailed(ctx, err)
	}
	// Record the use for the reviewer, with the call's idempotency key.
	// The nonce is spent whatever happens to this write: a row that still
	// says approved is refused as replayed.
	used := *r
	used.state, used.key = StateUsed, call.Key()
	_ = d.store.Save(sctx, r.id, raw, d.seal.seal(&used))
	return nil
}

// summary returns what a reviewer reads about a call: the tool's name and
// its arguments, scrubbed first and then held to
// taxonomy.MaxApprovalSummary bytes (so no cut can split a secret the
// scrubber would have found).
func (d *Desk) summary(tool, canon string) string {
	s := d.scrub.String(tool + " " + canon)
	return taxonomy.New(taxonomy.KindApprovalPending, taxonomy.CodeApprovalPending, "").
		WithApproval("x", s).Approval().Summary
}

func pending(id, summary, code, msg string) error {
	return taxonomy.New(taxonomy.KindApprovalPending, code, msg).WithApproval(id, summary)
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
