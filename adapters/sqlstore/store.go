package sqlstore

import (
	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/middleware/approval"
)

// The bounds of what the store accepts. An id or nonce longer than
// [MaxKeyBytes], or a row longer than [MaxRowBytes], is refused with an
// error matching [ErrTooLarge] before the database is asked: a hostile
// caller cannot make one row cost more than that.
const (
	// MaxKeyBytes bounds an approval id and a nonce, in bytes. The layer's
	// own ids and nonces are a few dozen bytes.
	MaxKeyBytes = 512
	// MaxRowBytes bounds a stored row, in bytes. The layer's sealed rows
	// hold a scrubbed summary of the call and stay far below it.
	MaxRowBytes = 64 << 10
	// MaxCancelledBytes bounds what the store keeps of one nonce's
	// cancelled operations, in bytes: each takes twice its length and one
	// (its hex digits and a comma), so at least 15 of the longest and 248
	// of the layer's own (32 bytes) fit. Past it Cancel fails with an error
	// matching [ErrTooLarge] and changes nothing.
	MaxCancelledBytes = 16 << 10
	// MaxPrefixBytes bounds the table prefix, so that the longest table name
	// it makes stays within PostgreSQL's 63-byte identifiers.
	MaxPrefixBytes = 32
	// DefaultPrefix is the table prefix when none is given: the tables are
	// toolmw_approvals, toolmw_approval_nonces and toolmw_call_records.
	DefaultPrefix = "toolmw_"
)

// ErrTooLarge is returned, wrapped, for an id, nonce, operation id or row
// over its bound (see [MaxKeyBytes] and [MaxRowBytes]), and for a Cancel
// past [MaxCancelledBytes]. The layer fails closed on it like on any store
// failure.
var ErrTooLarge = errors.New("sqlstore: an id, nonce, operation or row is over its bound")

// Dialect names the SQL a database speaks where the two supported ones
// differ: parameter placeholders and the binary column type. Both support
// INSERT … ON CONFLICT DO NOTHING and … DO UPDATE … RETURNING, which the
// store relies on.
type Dialect int

const (
	// Detect, the zero Dialect, picks the dialect from the driver of the
	// *sql.DB (see [WithDialect]).
	Detect Dialect = iota
	// SQLite is SQLite 3.35 or later (RETURNING): ? placeholders, BLOB
	// columns.
	SQLite
	// Postgres is PostgreSQL 9.5 or later: $1 placeholders, BYTEA columns.
	Postgres
)

// String returns the dialect's name.
func (d Dialect) String() string {
	switch d {
	case Detect:
		return "detect"
	case SQLite:
		return "sqlite"
	case Postgres:
		return "postgres"
	}
	return "Dialect(" + strconv.Itoa(int(d)) + ")"
}

// drivers maps the package path of known database/sql drivers to their
// dialect, for [Detect].
var drivers = map[string]Dialect{
	"modernc.org/sqlite":                   SQLite,
	"github.com/mattn/go-sqlite3":          SQLite,
	"github.com/ncruces/go-sqlite3/driver": SQLite,
	"github.com/glebarez/go-sqlite":        SQLite,
	"github.com/jackc/pgx/v5/stdlib":       Postgres,
	"github.com/jackc/pgx/v4/stdlib":       Postgres,
	"github.com/lib/pq":                    Postgres,
}

// Option configures a [Store].
type Option func(*config)

type config struct {
	dialect Dialect
	prefix  string
	clock   clock.Clock
	err     error
}

func (c *config) reject(format string, args ...any) {
	if c.err == nil {
		c.err = fmt.Errorf("sqlstore: "+format, args...)
	}
}

// WithDialect says which SQL the database speaks. The zero value, [Detect],
// means the default: the dialect of the *sql.DB's driver when it is one
// the store knows (modernc.org/sqlite, mattn/go-sqlite3, ncruces/go-sqlite3,
// glebarez/go-sqlite, pgx's stdlib, lib/pq); [New] fails for any other
// driver unless the dialect is given. Any other value is invalid.
func WithDialect(d Dialect) Option {
	return func(c *config) {
		if d < Detect || d > Postgres {
			c.reject("WithDialect(%v): not a dialect", d)
			return
		}
		c.dialect = d
	}
}

// WithTablePrefix sets the prefix of the store's three tables, so that
// several stores can share one database: prefix+"approvals",
// prefix+"approval_nonces" and prefix+"call_records". "" means the default, [DefaultPrefix]. A prefix
// must be an SQL identifier that needs no quoting: an ASCII letter or
// underscore, then letters, digits and underscores, at most
// [MaxPrefixBytes] bytes; anything else is invalid. PostgreSQL folds
// unquoted names to lower case, so "App_" and "app_" name the same tables
// there.
func WithTablePrefix(prefix string) Option {
	return func(c *config) {
		if prefix != "" && !identifier(prefix) {
			c.reject("WithTablePrefix: the prefix must be at most %d ASCII letters, digits and underscores, not starting with a digit", MaxPrefixBytes)
			return
		}
		c.prefix = prefix
	}
}

// WithClock sets the clock that stamps saved rows and used nonces, for
// [Store.Prune]. nil means the default, the system clock.
func WithClock(c clock.Clock) Option {
	return func(cfg *config) { cfg.clock = c }
}

func identifier(s string) bool {
	if len(s) == 0 || len(s) > MaxPrefixBytes {
		return false
	}
	for i := 0; i < len(s); i++ {
		b := s[i]
		switch {
		case b == '_', 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z':
		case '0' <= b && b <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

func newConfig(opts []Option) config {
	c := config{prefix: DefaultPrefix}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	if c.prefix == "" {
		c.prefix = DefaultPrefix
	}
	c.clock = clock.Or(c.clock)
	return c
}

// Validate reports the first invalid option value, or nil. It does not
// look at any database: [New] also fails when the dialect cannot be
// detected.
func Validate(opts ...Option) error {
	return newConfig(opts).err
}

// Store is an approval.Store kept in two tables of an SQL database reached
// through database/sql: one row per approval id, and one row per used
// nonce, holding the operation that consumed it and the operations
// cancelled. Every write is one statement, atomic in the database, so
// several processes sharing the database share the store: Save is a
// compare-and-swap (an INSERT that does nothing when the id exists, or an
// UPDATE matching the previous row); Consume and Cancel are each one
// INSERT … ON CONFLICT (nonce) DO UPDATE … WHERE on the nonce's row, so
// the database serialises them on that row.
//
// [Store.CallRecords] is its dedupe.Store, in a third table.
//
// A Store is safe for concurrent use, also by several processes.
type Store struct {
	db                *sql.DB
	dialect           Dialect
	clock             clock.Clock
	approvals, nonces string

	qCreate                       []string
	qColumns                      string
	qMigrate                      []column
	qLoad, qInsert, qUpdate       string
	qList                         string
	qConsume, qConsumed, qCancel  string
	qPruneApprovals, qPruneNonces string

	calls                                             string
	qCallClaim, qCallRenew, qCallFinish, qCallRelease string
	qPruneCalls                                       string
}

var (
	_ approval.Store  = (*Store)(nil)
	_ approval.Lister = (*Store)(nil)
)

// New returns a Store over db, which the caller opens (with the driver of
// its choice), configures and closes. New does not touch the database;
// call [Store.CreateTables] once before the first use. It fails on an
// invalid option, or when the dialect is not given and the driver is not
// one it knows (see [WithDialect]).
func New(db *sql.DB, opts ...Option) (*Store, error) {
	if db == nil {
		return nil, errors.New("sqlstore: New: the *sql.DB is nil")
	}
	cfg := newConfig(opts)
	if cfg.err != nil {
		return nil, cfg.err
	}
	d := cfg.dialect
	if d == Detect {
		d = detect(db)
		if d == Detect {
			return nil, errors.New("sqlstore: New: the driver's dialect is unknown; name it with WithDialect")
		}
	}
	s := &Store{db: db, dialect: d, clock: cfg.clock,
		approvals: cfg.prefix + "approvals", nonces: cfg.prefix + "approval_nonces",
		calls: cfg.prefix + "call_records"}
	blob := "BLOB"
	if d == Postgres {
		blob = "BYTEA"
	}
	s.qCreate = []string{
		"CREATE TABLE IF NOT EXISTS " + s.approvals + " (id " + blob + " PRIMARY KEY, body " + blob + " NOT NULL, saved_at BIGINT NOT NULL)",
		"CREATE TABLE IF NOT EXISTS " + s.nonces + " (nonce " + blob + " PRIMARY KEY, used_at BIGINT NOT NULL, " +
			"op TEXT, cancelled TEXT NOT NULL DEFAULT '')",
	}
	// A nonces table made before operations were recorded gets their
	// columns; its rows keep a NULL op: consumed by an operation unknown,
	// never freed.
	s.qMigrate = []column{
		{"op", "ALTER TABLE " + s.nonces + " ADD COLUMN op TEXT"},
		{"cancelled", "ALTER TABLE " + s.nonces + " ADD COLUMN cancelled TEXT NOT NULL DEFAULT ''"},
	}
	if d == Postgres {
		s.qColumns = "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1"
	} else {
		s.qColumns = "SELECT name FROM pragma_table_info(?)"
	}
	s.qLoad = s.bind("SELECT body FROM " + s.approvals + " WHERE id = ?")
	s.qInsert = s.bind("INSERT INTO " + s.approvals + " (id, body, saved_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING")
	s.qUpdate = s.bind("UPDATE " + s.approvals + " SET body = ?, saved_at = ? WHERE id = ? AND body = ?")
	// Ids are bytes (BLOB, BYTEA): both order them bytewise, as Go does.
	s.qList = s.bind("SELECT id, body FROM " + s.approvals + " WHERE id > ? ORDER BY id LIMIT ?")
	// A nonce's row: op is the operation that consumed it ("" when it is
	// free, NULL when a store before operations consumed it), in hex;
	// cancelled the hex of every cancelled operation, each followed by a
	// comma. An operation is cancelled when ","+cancelled holds
	// ","+op+",": hex holds no comma, so only a whole entry matches.
	n, instr := s.nonces, "instr"
	if d == Postgres {
		instr = "strpos"
	}
	isCancelled := func(op string) string {
		return instr + "(',' || " + n + ".cancelled, ',' || " + op + " || ',') > 0"
	}
	s.qConsume = s.bind("INSERT INTO " + n + " (nonce, used_at, op, cancelled) VALUES (?, ?, CAST(? AS TEXT), '') " +
		"ON CONFLICT (nonce) DO UPDATE SET op = excluded.op, used_at = excluded.used_at " +
		"WHERE " + n + ".op = '' AND NOT (" + isCancelled("excluded.op") + ")")
	s.qConsumed = s.bind("SELECT op, cancelled FROM " + n + " WHERE nonce = ?")
	s.qCancel = s.bind("INSERT INTO " + n + " (nonce, used_at, op, cancelled) VALUES (?, ?, '', CAST(? AS TEXT) || ',') " +
		"ON CONFLICT (nonce) DO UPDATE SET " +
		"op = CASE WHEN " + n + ".op = CAST(? AS TEXT) THEN '' ELSE " + n + ".op END, " +
		"cancelled = CASE WHEN " + isCancelled("CAST(? AS TEXT)") + " THEN " + n + ".cancelled ELSE " + n + ".cancelled || excluded.cancelled END, " +
		"used_at = excluded.used_at " +
		"WHERE " + isCancelled("CAST(? AS TEXT)") + " OR length(" + n + ".cancelled) + length(excluded.cancelled) <= " + strconv.Itoa(MaxCancelledBytes))
	s.qPruneApprovals = s.bind("DELETE FROM " + s.approvals + " WHERE saved_at < ?")
	s.qPruneNonces = s.bind("DELETE FROM " + s.nonces + " WHERE used_at < ?")
	s.callQueries(s.calls, blob)
	return s, nil
}

func detect(db *sql.DB) Dialect {
	t := reflect.TypeOf(db.Driver())
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return drivers[t.PkgPath()]
}

// bind rewrites the ? placeholders of q for the store's dialect. The
// store's queries have no other question marks.
func (s *Store) bind(q string) string {
	if s.dialect != Postgres {
		return q
	}
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Dialect returns the dialect the store speaks, given or detected.
func (s *Store) Dialect() Dialect { return s.dialect }

// Tables returns the names of the approval tables: the approvals and the
// used nonces. The call records are in the same prefix's "call_records".
func (s *Store) Tables() (approvals, nonces string) { return s.approvals, s.nonces }

// CreateTables creates the store's tables when they do not exist yet
// (CREATE TABLE IF NOT EXISTS), so it may run at every start, by every
// process, also by several at once (a CREATE that fails is run again: on
// PostgreSQL, it fails when another session creates the same table at the
// same moment). The columns: id and nonce as the binary primary keys, the
// row as a binary value, a time stamp in Unix seconds for [Store.Prune],
// and for a nonce the operation that consumed it and the operations
// cancelled, as text; the call records as the package documentation
// describes them. A nonces table made by an earlier version, without the
// last two, gets them (ALTER TABLE … ADD COLUMN): its nonces stay
// consumed, and a process of the earlier version may go on sharing the
// tables (what it consumes stays consumed; what it finds freed it takes
// for consumed, so it may refuse an approval, never run one twice). A
// database without the call records table gets it.
func (s *Store) CreateTables(ctx context.Context) error {
	for _, q := range s.qCreate {
		// PostgreSQL's CREATE TABLE IF NOT EXISTS fails when another
		// session creates the same table at the same moment (a duplicate
		// key in its catalogue); once that session committed, the
		// statement run again finds the table and does nothing.
		_, err := s.db.ExecContext(ctx, q)
		for try := 0; err != nil && try < 2 && ctx.Err() == nil; try++ {
			_, err = s.db.ExecContext(ctx, q)
		}
		if err != nil {
			return fmt.Errorf("sqlstore: creating the tables: %w", err)
		}
	}
	for _, c := range s.qMigrate {
		ok, err := s.hasColumn(ctx, c.name)
		if err != nil || ok {
			if err != nil {
				return fmt.Errorf("sqlstore: reading the nonces table's columns: %w", err)
			}
			continue
		}
		if _, err := s.db.ExecContext(ctx, c.add); err != nil {
			// Another process may have added it meanwhile.
			if ok, cerr := s.hasColumn(ctx, c.name); cerr != nil || !ok {
				return fmt.Errorf("sqlstore: adding the column %s to the nonces table: %w", c.name, err)
			}
		}
	}
	return nil
}

// column is a column of the nonces table that an earlier version did not
// have, and the statement that adds it.
type column struct{ name, add string }

// hasColumn reports whether the nonces table has the column name.
func (s *Store) hasColumn(ctx context.Context, name string) (bool, error) {
	table := s.nonces
	if s.dialect == Postgres {
		table = strings.ToLower(table) // unquoted names are folded
	}
	rows, err := s.db.QueryContext(ctx, s.qColumns, table)
	if err != nil {
		return false, err
	}
	defer rows.Close()
	found := false
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return false, err
		}
		found = found || c == name
	}
	return found, rows.Err()
}

// key is s as the bytes of a binary column, never nil: a nil []byte is
// NULL to some drivers, and the key columns are primary keys.
func key(s string) []byte {
	if s == "" {
		return []byte{}
	}
	return []byte(s)
}

func checkKey(what, key string) error {
	if len(key) > MaxKeyBytes {
		return fmt.Errorf("sqlstore: %s: %d bytes, over the bound of %d: %w", what, len(key), MaxKeyBytes, ErrTooLarge)
	}
	return nil
}

// Load returns the row stored under id, or an error matching
// approval.ErrNotFound.
func (s *Store) Load(ctx context.Context, id string) ([]byte, error) {
	if err := checkKey("Load: the id", id); err != nil {
		return nil, err
	}
	var row []byte
	err := s.db.QueryRowContext(ctx, s.qLoad, key(id)).Scan(&row)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, approval.ErrNotFound
	case err != nil:
		return nil, fmt.Errorf("sqlstore: Load: %w", err)
	}
	if row == nil {
		row = []byte{}
	}
	return row, nil
}

// List implements approval.Lister: at most limit rows whose ids sort after
// after, bytewise, in one query on the approvals table's primary key.
func (s *Store) List(ctx context.Context, after string, limit int) ([]approval.Listed, error) {
	if limit < 1 || limit > approval.MaxListPage {
		return nil, fmt.Errorf("sqlstore: List: a limit of %d; it must be 1 to %d", limit, approval.MaxListPage)
	}
	if err := checkKey("List: the cursor", after); err != nil {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx, s.qList, key(after), limit)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: List: %w", err)
	}
	defer rows.Close()
	out := make([]approval.Listed, 0, min(limit, 64))
	for rows.Next() {
		var id, body []byte
		if err := rows.Scan(&id, &body); err != nil {
			return nil, fmt.Errorf("sqlstore: List: %w", err)
		}
		if body == nil {
			body = []byte{}
		}
		out = append(out, approval.Listed{ID: string(id), Row: body})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlstore: List: %w", err)
	}
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// Save stores row under id when the row stored now is prev; with a nil
// prev, only when id has no row. Otherwise it stores nothing and returns an
// error matching approval.ErrConflict. One statement does the comparison
// and the write, so of several processes racing to replace the same prev,
// exactly one succeeds.
func (s *Store) Save(ctx context.Context, id string, prev, row []byte) error {
	if err := checkKey("Save: the id", id); err != nil {
		return err
	}
	if len(row) > MaxRowBytes {
		return fmt.Errorf("sqlstore: Save: the row: %d bytes, over the bound of %d: %w", len(row), MaxRowBytes, ErrTooLarge)
	}
	if len(prev) > MaxRowBytes {
		// No stored row can be longer: it cannot match.
		return approval.ErrConflict
	}
	if row == nil {
		row = []byte{} // a NULL would not compare equal in a later Save
	}
	now := s.clock.Now().Unix()
	var (
		res sql.Result
		err error
	)
	if prev == nil {
		res, err = s.db.ExecContext(ctx, s.qInsert, key(id), row, now)
	} else {
		res, err = s.db.ExecContext(ctx, s.qUpdate, row, now, key(id), prev)
	}
	if err != nil {
		return fmt.Errorf("sqlstore: Save: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("sqlstore: Save: %w", err)
	}
	if n != 1 {
		return approval.ErrConflict
	}
	return nil
}

// checkOp checks an operation id: 1 to MaxKeyBytes bytes, any bytes. It
// is stored as hex digits.
func checkOp(what, op string) error {
	if op == "" {
		return fmt.Errorf("sqlstore: %s: the operation id is empty", what)
	}
	return checkKey(what+": the operation id", op)
}

// Consume records that op consumed the decision with this nonce: of all
// the operations consuming a nonce, across every process sharing the
// database, the first returns nil, and so does the same operation again;
// an operation cancelled before gets an error matching
// approval.ErrCanceled and consumes nothing; every other one an error
// matching approval.ErrConsumed. One statement, an INSERT … ON CONFLICT
// (nonce) DO UPDATE … WHERE, takes a free nonce; a losing Consume reads
// the nonce's row once more to tell which.
func (s *Store) Consume(ctx context.Context, nonce, op string) error {
	if err := checkKey("Consume: the nonce", nonce); err != nil {
		return err
	}
	if err := checkOp("Consume", op); err != nil {
		return err
	}
	hexOp := hex.EncodeToString([]byte(op))
	res, err := s.db.ExecContext(ctx, s.qConsume, key(nonce), s.clock.Now().Unix(), hexOp)
	if err != nil {
		return fmt.Errorf("sqlstore: Consume: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("sqlstore: Consume: %w", err)
	}
	if n == 1 {
		return nil
	}
	var (
		by        sql.NullString
		cancelled string
	)
	if err := s.db.QueryRowContext(ctx, s.qConsumed, key(nonce)).Scan(&by, &cancelled); err != nil {
		return fmt.Errorf("sqlstore: Consume: reading the nonce: %w", err)
	}
	switch {
	case by.Valid && by.String == hexOp:
		return nil
	case strings.Contains(","+cancelled, ","+hexOp+","):
		return approval.ErrCanceled
	}
	return approval.ErrConsumed
}

// Cancel undoes op's Consume of nonce, applied or not: in one statement on
// the nonce's row (made when missing), the nonce is freed if op consumed
// it, and op is added to the nonce's cancelled operations, so that its
// Consume arriving later consumes nothing. A nonce consumed by another
// operation stays consumed; cancelling op again changes nothing. Past
// [MaxCancelledBytes] of cancelled operations for the nonce it changes
// nothing and returns an error matching [ErrTooLarge].
func (s *Store) Cancel(ctx context.Context, nonce, op string) error {
	if err := checkKey("Cancel: the nonce", nonce); err != nil {
		return err
	}
	if err := checkOp("Cancel", op); err != nil {
		return err
	}
	hexOp := hex.EncodeToString([]byte(op))
	res, err := s.db.ExecContext(ctx, s.qCancel, key(nonce), s.clock.Now().Unix(), hexOp, hexOp, hexOp, hexOp)
	if err != nil {
		return fmt.Errorf("sqlstore: Cancel: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("sqlstore: Cancel: %w", err)
	}
	if n != 1 {
		return fmt.Errorf("sqlstore: Cancel: the nonce's cancelled operations would pass %d bytes: %w", MaxCancelledBytes, ErrTooLarge)
	}
	return nil
}

// Prune deletes the approvals last saved, and the nonces used, before the
// given time, and the call records whose keep ended before it (see
// [Store.CallRecords]), and returns how many rows it deleted. The tables
// otherwise grow by one row per approval, one per used decision and one
// per call recorded. Pick a time older than the longest approval lifetime
// (approval.MaxTTL): a nonce is spent when its approval is used, revoked
// or replaced, and a pruned one lets that approval, its row written back
// while still valid, run again. A pruned request is forgotten: its call
// asks again (a denial too). A call record whose keep ended is absent
// whether it is pruned or not: pruning it only frees its room.
func (s *Store) Prune(ctx context.Context, before time.Time) (int64, error) {
	t := before.Unix()
	var total int64
	// The approvals go first: a nonce whose row is gone is harmless.
	for _, q := range []string{s.qPruneApprovals, s.qPruneNonces} {
		res, err := s.db.ExecContext(ctx, q, t)
		if err != nil {
			return total, fmt.Errorf("sqlstore: Prune: %w", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return total, fmt.Errorf("sqlstore: Prune: %w", err)
		}
		total += n
	}
	n, err := s.pruneCalls(ctx, before)
	total += n
	if err != nil {
		return total, fmt.Errorf("sqlstore: Prune: %w", err)
	}
	return total, nil
}
