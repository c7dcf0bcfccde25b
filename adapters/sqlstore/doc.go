// Package sqlstore keeps toolmw's approval decisions and call records in
// an SQL database reached through database/sql: an approval.Store and a
// dedupe.Store ([Store.CallRecords]) that survive restarts and are shared
// by every process using the same database.
//
// The caller opens the *sql.DB with the driver of its choice and hands it
// to [New]; [Store.CreateTables] creates the three tables when missing. Two
// dialects are supported, SQLite (modernc.org/sqlite and the other common
// drivers) and PostgreSQL (pgx's stdlib, lib/pq), detected from the driver
// or named with [WithDialect].
//
//	db, err := sql.Open("sqlite", "file:approvals.db?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)")
//	store, err := sqlstore.New(db)
//	err = store.CreateTables(ctx)
//	calls := dedupe.New(dedupe.WithStore(store.CallRecords()), dedupe.WithSealKey(key))
//
// # Guarantees
//
// Every write is one statement, atomic in the database. Save is a
// compare-and-swap: an INSERT … ON CONFLICT DO NOTHING when there is no
// previous row, an UPDATE … WHERE id = ? AND body = ? otherwise, and it
// succeeds only when exactly one row was written. Consume is an INSERT …
// ON CONFLICT (nonce) DO UPDATE … WHERE the nonce is free and the
// operation not cancelled, into a table whose primary key is the nonce: of
// all the operations consuming one nonce, in every process, exactly one
// writes and succeeds. Cancel is one INSERT … ON CONFLICT (nonce) DO
// UPDATE too, which frees the nonce when the operation holds it and
// records the operation as cancelled, so its Consume arriving later
// consumes nothing. Both lock the nonce's row, so the database orders
// them. No unique-violation error is parsed, so the store does not depend
// on a driver's error codes.
//
// The store holds opaque rows: the approval layer seals each row it writes
// with a keyed MAC and verifies each row it reads, so a row changed in the
// database fails closed rather than approving; and an approval that was
// used, revoked or replaced has its nonce in the nonces table, so its row
// written back (a restored backup, an UPDATE) is refused as replayed.
// Someone who can also delete from the nonces table can undo that: see
// the approval package for what a writer of the store can and cannot do.
//
// # Bounds
//
// An id, nonce or operation id is at most [MaxKeyBytes] bytes, a row at
// most [MaxRowBytes], a nonce's cancelled operations [MaxCancelledBytes];
// larger ones are refused with [ErrTooLarge] before the database is asked
// (the last by the statement, which then changes nothing). Ids and nonces
// are stored as bytes and operation ids as hex digits, so any string is
// accepted, NUL bytes and invalid UTF-8 included. The tables grow by one row
// per approval and one per used decision; [Store.Prune] deletes old ones.
//
// # Upgrading
//
// [Store.CreateTables] adds the nonces table's op and cancelled columns to
// a table made by an earlier version, which had neither. Its nonces stay
// consumed for good. A process of the earlier version may share the
// tables meanwhile: what it consumes stays consumed, and a nonce freed by
// a Cancel it takes for consumed, so it may refuse an approval, never run
// one twice.
//
// # Call records
//
// [Store.CallRecords] keeps the dedupe layer's call records in the table
// prefix+"call_records", one row per record: the run id and the key (the
// primary key), the operation holding it and the digest of its arguments,
// all stored as bytes; the end of its lease and the end of its keep
// (expires_at), in Unix milliseconds; its state (0 started, 1 done) and,
// when done, its outcome. Every time compared is one the layer passed (its
// clock, to the millisecond), never the database's or this process's.
//
// Each operation is one statement, atomic in the database. Claim is an
// INSERT … ON CONFLICT (run_id, call_key) DO UPDATE whose SET changes the
// row only when the claim takes it — its keep ended at the claim's Now, or
// the claim has Takeover and the row is started by another operation, of
// the same arguments, whose lease ended — and otherwise writes it back
// unchanged; its RETURNING clause gives the row as the statement left it.
// The database locks the row for the statement, so of all the operations
// claiming one record at once, in every process, one gets it, and every
// other is shown its record. Renew and Finish are one UPDATE … WHERE the
// row is held by the operation (started, or for Finish done by it with
// the same outcome) and not past its keep at the time given; no row
// written is dedupe.ErrLost. Release is one DELETE … WHERE the row is
// started and held by the operation. No driver error is parsed. A claim
// that does not take the row still writes it (unchanged): a repeat, and
// each poll of a repeat waiting for a live holder, costs a write, on
// PostgreSQL a dead row version for autovacuum.
//
// A run id and a key are at most [MaxCallKeyBytes] (1 KiB) each, an
// operation id and a digest at most [MaxKeyBytes], an outcome at most
// dedupe.MaxOutcome (256 KiB); any bytes, NUL and invalid UTF-8 included.
// Larger ones are refused with an error matching both [ErrTooLarge] and
// dedupe.ErrTooLarge before the database is asked; so are times before
// 1970 and negative keeps (with another error). A keep is rounded up to
// the millisecond, and one past the year 292 million is cut there.
//
// Outcomes are opaque to the store. With dedupe.WithSealKey the layer
// seals each outcome it writes (a keyed MAC over the run, the record's
// name, the arguments and the outcome) and checks it on every read, so an
// outcome changed, forged or copied from another record in the database
// fails closed (tool-failed/call_record_corrupt) rather than answering a
// call; the tests swap two records' outcomes with raw SQL to check it.
//
// A row no Store writes — a negative time, a state other than 0 and 1, an
// empty operation, a column over its bound, a done row without an outcome
// or a started one with one, a value of another type (SQLite keeps any
// type in any column) — does not parse: Claim returns an error wrapping
// store.ErrCorrupt, which quotes nothing of the row, and the layer refuses
// the call (tool-failed/call_record_corrupt). The statement returns a
// column over its bound as NULL, so a hostile row costs no more to read
// than a valid one. A claim never replaces such a row, with Takeover or
// not, unless its keep (a time not negative) ended: a record past its keep
// is absent, whatever it holds.
//
// SQL has no expiry of rows: a record past its keep is absent to every
// operation but stays in the table until [Store.Prune] deletes it, with
// the approvals, for a time after its keep ended. The table grows by one
// row per call recorded (about 300 bytes, plus its outcome) until then:
// call Prune periodically. The time the approvals need (older than
// approval.MaxTTL) keeps the call records that much past their keep; a
// database holding call records only may be pruned up to now. Prune reads
// the whole table (expires_at has no index: every operation writes it).
//
// A database made by an earlier version, without the call records table,
// gets it from CreateTables; a process of that version may go on sharing
// the database, and knows nothing of the table.
//
// # SQLite and several processes
//
// SQLite serialises writers with a file lock; a writer that finds it taken
// fails with SQLITE_BUSY unless the connection waits. Open the database
// with a busy timeout (modernc.org/sqlite: _pragma=busy_timeout(5000)),
// and preferably in WAL mode (_pragma=journal_mode(WAL)) so that readers do
// not wait for writers. The tests race two *sql.DB on one file that way.
// Give the layer a store timeout as long (approval.WithStore(s,
// store.WithTimeout(5*time.Second))): its default, store.DefaultTimeout
// (50 ms), ends an operation that waits for the lock, or for a loaded
// machine's disk, and the call fails closed.
//
// Everything here is safe for concurrent use.
package sqlstore
