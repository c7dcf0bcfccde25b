package sqlstore

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/toolmw/toolmw/middleware/dedupe"
	"github.com/toolmw/toolmw/store"
)

// The call records table: one row per record, named by the run id and the
// key, both stored as bytes. op and args are bytes too; until_ms and
// expires_at are the layer's times in Unix milliseconds; done is 0 for a
// started record and 1 for a done one, whose outcome is then set (NULL
// while started).
//
// Every operation is one statement. Claim is an INSERT … ON CONFLICT DO
// UPDATE whose SET keeps every column as it is unless the claim takes the
// row (the row expired, or it may be taken over), and RETURNING gives the
// row as the statement left it: the claim and the read are one atomic
// step, in both dialects, and no driver error is parsed. The statements
// number their parameters (?1, ?2 … for SQLite, $1, $2 … for PostgreSQL)
// so that a value used twice is sent once.

// MaxCallKeyBytes bounds the run id and the key of a call record, in
// bytes; an operation id and an arguments' digest are bounded by
// [MaxKeyBytes]. Larger ones are refused with an error matching both
// [ErrTooLarge] and dedupe.ErrTooLarge before the database is asked. The
// dedupe layer's run ids are at most 128 bytes, its keys 64, its
// operation ids 32 and its digests 64; the primary key of a row is at
// most twice MaxCallKeyBytes, within PostgreSQL's bound on an index entry.
const MaxCallKeyBytes = 1024

// callColumns are the columns a Claim returns. A blob over its bound is
// returned as NULL, so that a hostile row costs no more to read than a
// valid one, and then does not parse.
var callColumns = "CASE WHEN length(op) <= " + strconv.Itoa(MaxKeyBytes) + " THEN op END, " +
	"CASE WHEN length(args) <= " + strconv.Itoa(MaxKeyBytes) + " THEN args END, " +
	"until_ms, expires_at, done, " +
	"CASE WHEN length(outcome) <= " + strconv.Itoa(dedupe.MaxOutcome) + " THEN outcome END"

// callQueries makes the call records statements for table t.
func (s *Store) callQueries(t, blob string) {
	s.qCreate = append(s.qCreate, "CREATE TABLE IF NOT EXISTS "+t+" (run_id "+blob+" NOT NULL, call_key "+blob+" NOT NULL, "+
		"op "+blob+" NOT NULL, args "+blob+" NOT NULL, until_ms BIGINT NOT NULL, expires_at BIGINT NOT NULL, "+
		"done SMALLINT NOT NULL, outcome "+blob+", PRIMARY KEY (run_id, call_key))")
	// The claim takes the row when its keep ended at ?7 (the claim's Now),
	// or when ?8 (Takeover) is 1 and the row is started by another op, of
	// the same arguments, and its lease ended at ?7. A row with a negative
	// time is taken by neither: it does not parse, and the claim reports
	// it.
	take := "(" + t + ".expires_at BETWEEN 0 AND ?7 OR (?8 = 1 AND " + t + ".done = 0 AND " +
		t + ".until_ms BETWEEN 0 AND ?7 AND " + t + ".expires_at >= 0 AND " + t + ".op <> excluded.op AND " + t + ".args = excluded.args))"
	set := func(col, taken string) string {
		return col + " = CASE WHEN " + take + " THEN " + taken + " ELSE " + t + "." + col + " END"
	}
	s.qCallClaim = s.bindN("INSERT INTO " + t + " (run_id, call_key, op, args, until_ms, expires_at, done, outcome) " +
		"VALUES (?1, ?2, ?3, ?4, ?5, ?6, 0, NULL) ON CONFLICT (run_id, call_key) DO UPDATE SET " +
		strings.Join([]string{
			set("op", "excluded.op"), set("args", "excluded.args"), set("until_ms", "excluded.until_ms"),
			set("expires_at", "excluded.expires_at"), set("done", "0"), set("outcome", "NULL"),
		}, ", ") +
		" RETURNING " + callColumns)
	keep := "expires_at = CASE WHEN expires_at > ?6 THEN expires_at ELSE ?6 END"
	held := "run_id = ?1 AND call_key = ?2 AND op = ?3 AND expires_at > ?5"
	s.qCallRenew = s.bindN("UPDATE " + t + " SET until_ms = ?4, " + keep + " WHERE " + held + " AND done = 0")
	s.qCallFinish = s.bindN("UPDATE " + t + " SET done = 1, outcome = ?4, " + keep + " WHERE " + held +
		" AND (done = 0 OR (done = 1 AND outcome = ?4))")
	s.qCallRelease = s.bindN("DELETE FROM " + t + " WHERE run_id = ?1 AND call_key = ?2 AND op = ?3 AND done = 0")
	s.qPruneCalls = s.bindN("DELETE FROM " + t + " WHERE expires_at < ?1")
}

// bindN rewrites the numbered placeholders ?1, ?2 … of q for the store's
// dialect: SQLite takes them as they are, PostgreSQL as $1, $2 ….
func (s *Store) bindN(q string) string {
	if s.dialect != Postgres {
		return q
	}
	return strings.ReplaceAll(q, "?", "$")
}

// CallRecords returns the store's call records: a dedupe.Store kept in
// the table prefix+"call_records" of the same database, which
// [Store.CreateTables] creates. Through it, the dedupe layer of every
// process sharing the database makes a call of a named run once, across
// restarts, crashes and replicas (see the package documentation, Call
// records).
//
//	calls := dedupe.New(dedupe.WithStore(rows.CallRecords()), dedupe.WithSealKey(key))
func (s *Store) CallRecords() dedupe.Store { return callRecords{s} }

// callRecords is the dedupe.Store of a [Store].
type callRecords struct{ s *Store }

// overBound is the error of an input over its bound: it matches both
// [ErrTooLarge] and dedupe.ErrTooLarge.
type overBound struct{ msg string }

func (e *overBound) Error() string { return e.msg }

func (e *overBound) Is(target error) bool {
	return target == ErrTooLarge || target == dedupe.ErrTooLarge
}

func checkCall(op, what, v string, bound int) error {
	if len(v) > bound {
		return &overBound{fmt.Sprintf("sqlstore: %s: %s: %d bytes, over the bound of %d", op, what, len(v), bound)}
	}
	return nil
}

// checkNames checks the run id, the key and the operation id of a call
// record operation.
func checkNames(what, run, key, op string) error {
	if err := checkCall(what, "the run id", run, MaxCallKeyBytes); err != nil {
		return err
	}
	if err := checkCall(what, "the key", key, MaxCallKeyBytes); err != nil {
		return err
	}
	if op == "" {
		return fmt.Errorf("sqlstore: %s: the operation id is empty", what)
	}
	return checkCall(what, "the operation id", op, MaxKeyBytes)
}

// millis returns t in Unix milliseconds, which must not be negative: the
// store keeps no time before 1970.
func millis(what, name string, t time.Time) (int64, error) {
	ms := t.UnixMilli()
	if ms < 0 {
		return 0, fmt.Errorf("sqlstore: %s: %s is before 1970", what, name)
	}
	return ms, nil
}

// expiry returns now+keep in Unix milliseconds, keep rounded up to the
// millisecond (kept at least keep), and capped at the largest time the
// column holds.
func expiry(what string, now int64, keep time.Duration) (int64, error) {
	if keep < 0 {
		return 0, fmt.Errorf("sqlstore: %s: the keep is negative", what)
	}
	k := int64(keep / time.Millisecond)
	if keep%time.Millisecond != 0 {
		k++
	}
	if k > math.MaxInt64-now {
		return math.MaxInt64, nil
	}
	return now + k, nil
}

// Claim makes the record of key in run, started by c.Op, or returns the
// one there is: one INSERT … ON CONFLICT DO UPDATE … RETURNING, atomic in
// the database.
func (r callRecords) Claim(ctx context.Context, run, callKey string, c dedupe.Claim) (dedupe.Record, error) {
	const what = "Claim"
	if err := checkNames(what, run, callKey, c.Op); err != nil {
		return dedupe.Record{}, err
	}
	if err := checkCall(what, "the arguments' digest", c.Args, MaxKeyBytes); err != nil {
		return dedupe.Record{}, err
	}
	now, err := millis(what, "now", c.Now)
	if err != nil {
		return dedupe.Record{}, err
	}
	until, err := millis(what, "the lease's end", c.Until)
	if err != nil {
		return dedupe.Record{}, err
	}
	expires, err := expiry(what, now, c.Keep)
	if err != nil {
		return dedupe.Record{}, err
	}
	takeover := 0
	if c.Takeover {
		takeover = 1
	}
	var op, args, untilMS, expiresAt, done, outcome any
	err = r.s.db.QueryRowContext(ctx, r.s.qCallClaim, key(run), key(callKey), key(c.Op), key(c.Args), until, expires, now, takeover).
		Scan(&op, &args, &untilMS, &expiresAt, &done, &outcome)
	if err != nil {
		return dedupe.Record{}, fmt.Errorf("sqlstore: Claim: %w", err)
	}
	return parseRecord(op, args, untilMS, expiresAt, done, outcome)
}

// errCorrupt wraps store.ErrCorrupt with what of the row does not parse;
// it never quotes the row.
func errCorrupt(what string) error {
	return fmt.Errorf("sqlstore: the call record's %s does not parse: %w", what, store.ErrCorrupt)
}

// parseRecord checks a row as a Claim returned it.
func parseRecord(op, args, until, expires, done, outcome any) (dedupe.Record, error) {
	var rec dedupe.Record
	o, ok := op.([]byte)
	if !ok || len(o) == 0 {
		return rec, errCorrupt("operation id")
	}
	a, ok := args.([]byte)
	if !ok {
		return rec, errCorrupt("arguments' digest")
	}
	u, ok := integer(until)
	if !ok || u < 0 {
		return rec, errCorrupt("lease")
	}
	if e, ok := integer(expires); !ok || e < 0 {
		return rec, errCorrupt("expiry")
	}
	d, ok := integer(done)
	if !ok || d != 0 && d != 1 {
		return rec, errCorrupt("state")
	}
	rec = dedupe.Record{Op: string(o), Args: string(a), Until: time.UnixMilli(u), Done: d == 1}
	switch out, isBytes := outcome.([]byte); {
	case rec.Done && !isBytes:
		return dedupe.Record{}, errCorrupt("outcome")
	case !rec.Done && outcome != nil:
		return dedupe.Record{}, errCorrupt("outcome")
	case rec.Done:
		if out == nil {
			out = []byte{}
		}
		rec.Outcome = out
	}
	return rec, nil
}

// integer returns v as an int64 when it is an integer the drivers return
// for BIGINT and SMALLINT columns.
func integer(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case int32:
		return int64(n), true
	case int16:
		return int64(n), true
	}
	return 0, false
}

// Renew moves op's lease: one UPDATE … WHERE the row is started, held by
// op and not expired at now.
func (r callRecords) Renew(ctx context.Context, run, callKey, op string, until, now time.Time, keep time.Duration) error {
	const what = "Renew"
	if err := checkNames(what, run, callKey, op); err != nil {
		return err
	}
	nowMS, err := millis(what, "now", now)
	if err != nil {
		return err
	}
	untilMS, err := millis(what, "the lease's end", until)
	if err != nil {
		return err
	}
	expires, err := expiry(what, nowMS, keep)
	if err != nil {
		return err
	}
	return r.exec(ctx, what, r.s.qCallRenew, key(run), key(callKey), key(op), untilMS, nowMS, expires)
}

// Finish makes op's record done: one UPDATE … WHERE the row is held by op
// and not expired at now, started or done with the same outcome.
func (r callRecords) Finish(ctx context.Context, run, callKey, op string, outcome []byte, now time.Time, keep time.Duration) error {
	const what = "Finish"
	if err := checkNames(what, run, callKey, op); err != nil {
		return err
	}
	if len(outcome) > dedupe.MaxOutcome {
		return &overBound{fmt.Sprintf("sqlstore: Finish: the outcome: %d bytes, over the bound of %d", len(outcome), dedupe.MaxOutcome)}
	}
	nowMS, err := millis(what, "now", now)
	if err != nil {
		return err
	}
	expires, err := expiry(what, nowMS, keep)
	if err != nil {
		return err
	}
	if outcome == nil {
		outcome = []byte{} // a NULL outcome would not compare equal in a Finish sent twice
	}
	return r.exec(ctx, what, r.s.qCallFinish, key(run), key(callKey), key(op), outcome, nowMS, expires)
}

// exec runs a Renew or a Finish: one row written, or dedupe.ErrLost.
func (r callRecords) exec(ctx context.Context, what, q string, args ...any) error {
	res, err := r.s.db.ExecContext(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("sqlstore: %s: %w", what, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("sqlstore: %s: %w", what, err)
	}
	if n != 1 {
		return fmt.Errorf("sqlstore: %s: %w", what, dedupe.ErrLost)
	}
	return nil
}

// Release deletes op's started record: one DELETE … WHERE the row is
// started and held by op.
func (r callRecords) Release(ctx context.Context, run, callKey, op string) error {
	if err := checkNames("Release", run, callKey, op); err != nil {
		return err
	}
	if _, err := r.s.db.ExecContext(ctx, r.s.qCallRelease, key(run), key(callKey), key(op)); err != nil {
		return fmt.Errorf("sqlstore: Release: %w", err)
	}
	return nil
}

// pruneCalls deletes the call records whose keep ended before before.
func (s *Store) pruneCalls(ctx context.Context, before time.Time) (int64, error) {
	res, err := s.db.ExecContext(ctx, s.qPruneCalls, before.UnixMilli())
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
