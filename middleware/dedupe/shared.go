package dedupe

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/internal/storeguard"
	"github.com/toolmw/toolmw/middleware/internal/panicked"
	"github.com/toolmw/toolmw/middleware/internal/resultcodec"
	"github.com/toolmw/toolmw/store"
	"github.com/toolmw/toolmw/taxonomy"
)

// The waits of a repeat for a record's live holder: the Store is asked
// again after pollFirst, then after twice as long each time, up to
// pollMax, and never later than the holder's lease ends.
const (
	pollFirst = 10 * time.Millisecond
	pollMax   = time.Second
)

var (
	errUnavailable = taxonomy.Transient(taxonomy.CodeCallRecordUnavailable,
		"this call could not be recorded before it ran (the shared store of call records did not answer), so it was not run; it may be made again later")
	errCorrupt = taxonomy.Failure(taxonomy.CodeCallRecordCorrupt,
		"this call's record in the shared store cannot be read; the call may have been made before, so it is not run")
)

// shared is the layer's Store of call records and how it is used.
type shared struct {
	s     Store
	guard *storeguard.Guard
}

// storeKey returns the name of a call's record in the Store: 64 hex digits
// of the SHA-256 of its in-process id (see identity), which holds the
// tool's name and the hash of the call id or of the canonical arguments.
func storeKey(id string) string {
	sum := sha256.Sum256([]byte("toolmw dedupe record\x00" + id))
	return hex.EncodeToString(sum[:])
}

// sharedCall makes the call of a named run once across every process
// sharing the Store: it claims the call's record, runs the tool when it
// got it, and finishes the record with the outcome; a repeat gets the
// outcome recorded, waits for a live holder, or learns that the outcome
// is unknown. handled is false when the Store could not be asked and the
// call is idempotent: the caller decides it on in-process records.
func (l *layer) sharedCall(ctx context.Context, next toolmw.Tool, args json.RawMessage,
	call toolmw.Call, run, id string, sum [sha256.Size]byte, w *wrapped) (res toolmw.Result, handled bool, err error) {
	s := l.shared
	key := storeKey(id)
	c := Claim{Op: storeguard.NewOp(), Args: hex.EncodeToString(sum[:]), Keep: l.window, Takeover: call.Idempotent}
	wait := pollFirst
	for {
		c.Now = l.clk.Now()
		c.Until = c.Now.Add(l.lease)
		var rec Record
		var corrupt error
		local, end := s.guard.AskAs(ctx, "claim", "", !call.Idempotent, func(ctx context.Context) error {
			r, err := s.s.Claim(ctx, run, key, c)
			if errors.Is(err, store.ErrCorrupt) {
				corrupt = err
				return nil
			}
			rec = r
			return err
		})
		if corrupt == nil && end == nil && !local {
			corrupt = check(rec)
		}
		switch {
		case end != nil:
			l.release(ctx, run, key, c.Op) // the claim may land yet
			return toolmw.Result{}, true, end
		case local:
			l.release(ctx, run, key, c.Op)
			if call.Idempotent {
				toolmw.SetDegraded(ctx, "dedupe")
				return toolmw.Result{}, false, nil
			}
			return toolmw.Result{}, true, errUnavailable
		case corrupt != nil:
			s.guard.Corrupt("claim", "", corrupt)
			return toolmw.Result{}, true, errCorrupt
		case rec.Args != c.Args:
			return toolmw.Result{}, true, errReused
		case rec.Op == c.Op && !rec.Done:
			res, err = l.hold(ctx, next, args, call, run, key, c)
			return res, true, err
		case rec.Done:
			outcome, ok := l.unseal(run, key, rec.Args, rec.Outcome)
			res, recorded, parsed := decodeOutcome(outcome)
			if !ok || !parsed {
				s.guard.Corrupt("claim", "", errBadOutcome)
				return toolmw.Result{}, true, errCorrupt
			}
			w.repeats.Add(1)
			return res, true, recorded
		case !rec.Until.After(c.Now) && !call.Idempotent:
			// The holder's lease ended: it died or lost the Store, after
			// the tool may have run.
			return toolmw.Result{}, true, errInDoubt
		}
		// A live holder (or, for an idempotent call, one whose lease
		// ended just now, taken over by another): ask again later.
		d := min(wait, max(rec.Until.Sub(c.Now), time.Millisecond))
		wait = min(2*wait, pollMax)
		t := l.clk.NewTimer(d)
		select {
		case <-t.C():
		case <-ctx.Done():
			t.Stop()
			return toolmw.Result{}, true, ctx.Err()
		}
	}
}

// errBadOutcome is reported for a done record whose outcome does not
// decode.
var errBadOutcome = errors.New("dedupe: the recorded outcome does not parse: " + store.ErrCorrupt.Error())

// check returns an error wrapping store.ErrCorrupt when rec is not a
// record a Store may return: an operation or digest of another shape, or
// an outcome over MaxOutcome.
func check(rec Record) error {
	if !hexOf(rec.Op, 32) || !hexOf(rec.Args, 64) || len(rec.Outcome) > MaxOutcome ||
		!rec.Done && rec.Until.IsZero() {
		return store.ErrCorrupt
	}
	return nil
}

// hexOf reports whether s is n lower-case hexadecimal digits.
func hexOf(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < n; i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// hold runs the call whose record c claimed, renewing the lease while the
// tool runs, and finishes the record with the outcome (or releases it
// when the outcome says nothing ran), eventually: a Store down now learns
// it once it answers again, and until then a repeat waits for the lease.
func (l *layer) hold(ctx context.Context, next toolmw.Tool, args json.RawMessage,
	call toolmw.Call, run, key string, c Claim) (res toolmw.Result, err error) {
	stop := l.renew(ctx, run, key, c.Op)
	returned := false
	defer func() {
		if !returned { // a panic or runtime.Goexit: record it, let it go on
			stop()
			l.finish(ctx, run, key, c, encodeOutcome(toolmw.Result{}, panicked.Err))
		}
	}()
	res, err = next(ctx, args)
	returned = true
	stop()
	keep, kept := keeps(call, err)
	switch {
	case !keep:
		l.release(ctx, run, key, c.Op)
	case kept != nil:
		l.finish(ctx, run, key, c, encodeOutcome(toolmw.Result{}, kept))
	case err != nil:
		l.finish(ctx, run, key, c, encodeOutcome(toolmw.Result{}, bound(err).err))
	default:
		l.finish(ctx, run, key, c, encodeOutcome(res, nil))
	}
	return res, err
}

// renew renews the lease of op's record every third of the lease until
// the returned function is called, which waits for the renewals to stop.
// A renewal the Store does not complete is reported and tried again at the
// next tick; one that finds the record lost stops them.
func (l *layer) renew(ctx context.Context, run, key, op string) (stop func()) {
	s := l.shared
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			t := l.clk.NewTimer(l.lease / 3)
			select {
			case <-done:
				t.Stop()
				return
			case <-t.C():
			}
			now := l.clk.Now()
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.guard.Timeout())
			err := s.s.Renew(sctx, run, key, op, now.Add(l.lease), now, l.window)
			cancel()
			if errors.Is(err, ErrLost) {
				s.guard.After("renew", "", err)
				return
			}
			if err != nil {
				s.guard.After("renew", "", err)
			}
		}
	}()
	return func() {
		close(done)
		<-stopped
	}
}

// finish records outcome as the call's that claimed with c, eventually,
// sealed when the layer has a seal key. A record the call lost (an
// idempotent repeat took it over after the lease ended) is left to its new
// holder.
func (l *layer) finish(ctx context.Context, run, key string, c Claim, outcome []byte) {
	s := l.shared
	outcome = l.seal(run, key, c.Args, outcome)
	s.guard.Eventually(ctx, "finish", "", func(ctx context.Context) error {
		err := s.s.Finish(ctx, run, key, c.Op, outcome, l.clk.Now(), l.window)
		if errors.Is(err, ErrLost) {
			s.guard.After("finish", "", err)
			return nil
		}
		return err
	})
}

// seal returns outcome followed by its tag (see WithSealKey), or outcome
// itself without a seal key.
func (l *layer) seal(run, key, args string, outcome []byte) []byte {
	if l.sealKey == nil {
		return outcome
	}
	return append(outcome, l.tag(run, key, args, outcome)...)
}

// unseal returns the outcome a sealed record holds, or false when its tag
// is not the one the layer's key gives it; a record's outcome itself
// without a seal key.
func (l *layer) unseal(run, key, args string, sealed []byte) ([]byte, bool) {
	if l.sealKey == nil {
		return sealed, true
	}
	if len(sealed) < sha256.Size {
		return nil, false
	}
	outcome, tag := sealed[:len(sealed)-sha256.Size], sealed[len(sealed)-sha256.Size:]
	return outcome, hmac.Equal(tag, l.tag(run, key, args, outcome))
}

// tag is the HMAC-SHA256 of a record's run id, name, digest of arguments
// and outcome, each but the last length-prefixed.
func (l *layer) tag(run, key, args string, outcome []byte) []byte {
	m := hmac.New(sha256.New, l.sealKey)
	m.Write([]byte("toolmw dedupe record v1\x00"))
	for _, f := range []string{run, key, args} {
		m.Write(binary.BigEndian.AppendUint64(nil, uint64(len(f))))
		m.Write([]byte(f))
	}
	m.Write(outcome)
	return m.Sum(nil)
}

// release deletes op's record while it is started, eventually: the call
// did not run, had no effect, or its claim's answer never arrived.
func (l *layer) release(ctx context.Context, run, key, op string) {
	s := l.shared
	s.guard.Eventually(ctx, "release", "", func(ctx context.Context) error {
		return s.s.Release(ctx, run, key, op)
	})
}

// A recorded outcome, as a Store holds it, is one byte saying which it is
// and its encoding: 'R' and the result as resultcodec writes it (the codec
// of the results the cache and fallback layers share), or 'E' and the
// error's taxonomy.Info as JSON.
const (
	outcomeResult = 'R'
	outcomeError  = 'E'
)

// encodeOutcome returns the record of a call that returned res, or err
// when it is not nil (a bounded error: see bound). A result whose record
// would be over MaxOutcome is recorded as dropped.
func encodeOutcome(res toolmw.Result, err error) []byte {
	if err != nil {
		b, _ := json.Marshal(taxonomy.InfoOf(err)) // an Info always encodes
		return append([]byte{outcomeError}, b...)
	}
	b, cerr := resultcodec.Encode(res)
	if cerr != nil || 1+len(b) > MaxOutcome {
		return encodeOutcome(toolmw.Result{}, errDropped)
	}
	return append([]byte{outcomeResult}, b...)
}

// decodeOutcome returns the result or the error a record holds, or false
// when it does not parse: no known first byte, a result resultcodec does
// not read, an error that is not one JSON object of taxonomy.Info's
// fields (a kind it does not know it reads as tool-failed, as InfoOf
// reads foreign errors).
func decodeOutcome(b []byte) (res toolmw.Result, recorded error, ok bool) {
	if len(b) == 0 || len(b) > MaxOutcome {
		return toolmw.Result{}, nil, false
	}
	switch body := b[1:]; b[0] {
	case outcomeResult:
		res, err := resultcodec.Decode(body)
		return res, nil, err == nil
	case outcomeError:
		var info taxonomy.Info
		d := json.NewDecoder(bytes.NewReader(body))
		d.DisallowUnknownFields()
		if d.Decode(&info) != nil || d.InputOffset() != int64(len(body)) {
			return toolmw.Result{}, nil, false
		}
		return toolmw.Result{}, info.Err(), true
	}
	return toolmw.Result{}, nil, false
}
