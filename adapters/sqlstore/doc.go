// Package sqlstore keeps toolmw's approval decisions in an SQL database
// reached through database/sql: an approval.Store that survives restarts
// and is shared by every process using the same database.
//
// The caller opens the *sql.DB with the driver of its choice and hands it
// to [New]; [Store.CreateTables] creates the two tables when missing. Two
// dialects are supported, SQLite (modernc.org/sqlite and the other common
// drivers) and PostgreSQL (pgx's stdlib, lib/pq), detected from the driver
// or named with [WithDialect].
//
//	db, err := sql.Open("sqlite", "file:approvals.db?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)")
//	store, err := sqlstore.New(db)
//	err = store.CreateTables(ctx)
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
// # SQLite and several processes
//
// SQLite serialises writers with a file lock; a writer that finds it taken
// fails with SQLITE_BUSY unless the connection waits. Open the database
// with a busy timeout (modernc.org/sqlite: _pragma=busy_timeout(5000)),
// and preferably in WAL mode (_pragma=journal_mode(WAL)) so that readers do
// not wait for writers. The tests race two *sql.DB on one file that way.
//
// Everything here is safe for concurrent use.
package sqlstore
