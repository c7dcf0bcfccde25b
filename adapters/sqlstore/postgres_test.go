package sqlstore_test

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	sqlstore "github.com/toolmw/toolmw/adapters/sqlstore"
)

// The tests start their own PostgreSQL server, once per test binary, on
// 127.0.0.1 on a free port with its data in a temporary folder, and stop
// it when the tests end. Without PostgreSQL's binaries the tests that need
// it are skipped, unless TOOLMW_REQUIRE_POSTGRES=1 (set by .ci/run), which
// makes that a failure.

// pgStartTimeout bounds how long a starting server may take to accept
// connections; initdb and the first start take about two seconds here.
const pgStartTimeout = 60 * time.Second

type pgServer struct {
	bindir string
	dir    string // the temporary folder: data/ and the socket
	port   int
	cred   *syscall.Credential // the postgres user, when the tests run as root
	cmd    *exec.Cmd
	exited chan struct{}
	log    *os.File
}

var (
	pgOnce   sync.Once
	pg       *pgServer
	pgErr    error
	pgTables atomic.Int64 // for a fresh table prefix per store
)

// postgres returns the tests' server, starting it at the first call. When
// it cannot be started the test is skipped, or fails under
// TOOLMW_REQUIRE_POSTGRES=1.
func postgres(t testing.TB) *pgServer {
	t.Helper()
	pgOnce.Do(func() { pg, pgErr = startPostgres() })
	if pgErr != nil {
		if os.Getenv("TOOLMW_REQUIRE_POSTGRES") == "1" {
			t.Fatalf("PostgreSQL is required (TOOLMW_REQUIRE_POSTGRES=1): %v", pgErr)
		}
		t.Skipf("no PostgreSQL server for this test: %v (install Debian's postgresql; TOOLMW_REQUIRE_POSTGRES=1 makes this a failure)", pgErr)
	}
	return pg
}

// stopPostgres stops the server if one was started; TestMain calls it.
func stopPostgres() {
	if pg != nil {
		pg.stop()
		os.RemoveAll(pg.dir)
	}
}

// pgBindir finds the folder of initdb and postgres: $TOOLMW_POSTGRES_BINDIR
// when set, else pg_config --bindir, then Debian's
// /usr/lib/postgresql/<version>/bin, newest first, then PATH.
func pgBindir() (string, error) {
	has := func(dir string) bool {
		for _, b := range []string{"initdb", "postgres"} {
			if fi, err := os.Stat(filepath.Join(dir, b)); err != nil || fi.IsDir() {
				return false
			}
		}
		return true
	}
	if dir := os.Getenv("TOOLMW_POSTGRES_BINDIR"); dir != "" {
		if has(dir) {
			return dir, nil
		}
		return "", fmt.Errorf("initdb and postgres not found in TOOLMW_POSTGRES_BINDIR (%s)", dir)
	}
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		if dir := strings.TrimSpace(string(out)); has(dir) {
			return dir, nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	version := func(dir string) float64 { // "…/15/bin" → 15, "…/9.6/bin" → 9.6
		v, _ := strconv.ParseFloat(filepath.Base(filepath.Dir(dir)), 64)
		return v
	}
	slices.SortFunc(dirs, func(a, b string) int { return cmp.Compare(version(b), version(a)) })
	for _, dir := range dirs {
		if has(dir) {
			return dir, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		if dir := filepath.Dir(p); has(dir) {
			return dir, nil
		}
	}
	return "", errors.New("initdb and postgres not found (pg_config --bindir, /usr/lib/postgresql/*/bin, PATH)")
}

func startPostgres() (*pgServer, error) {
	bindir, err := pgBindir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "toolmw-postgres-")
	if err != nil {
		return nil, err
	}
	s := &pgServer{bindir: bindir, dir: dir}
	fail := func(err error) (*pgServer, error) {
		os.RemoveAll(dir)
		return nil, err
	}
	// PostgreSQL refuses to run as root: run it as the postgres user, in a
	// folder that user owns.
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return fail(fmt.Errorf("running as root, and there is no postgres user to run the server as: %w", err))
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		s.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(dir, uid, gid); err != nil {
			return fail(err)
		}
	}
	initdb := s.command("initdb", "-D", s.data(), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync", "--no-instructions")
	if out, err := initdb.CombinedOutput(); err != nil {
		return fail(fmt.Errorf("initdb: %v: %s", err, out))
	}
	if err := s.start(); err != nil {
		return fail(err)
	}
	return s, nil
}

func (s *pgServer) data() string { return filepath.Join(s.dir, "data") }

func (s *pgServer) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(s.bindir, name), args...)
	cmd.Dir = s.dir
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	// A test binary that dies without stopping the server (a panic, a
	// timeout) takes it along: SIGQUIT is PostgreSQL's immediate shutdown.
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred, Pdeathsig: syscall.SIGQUIT}
	return cmd
}

// start starts the server on a free port of 127.0.0.1 and waits until it
// accepts connections.
func (s *pgServer) start() error {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	s.port = l.Addr().(*net.TCPAddr).Port
	l.Close()
	return s.listen()
}

// listen starts the server on s.port and waits until it accepts
// connections.
func (s *pgServer) listen() error {
	var err error
	s.cmd = s.command("postgres", "-D", s.data(), "-p", strconv.Itoa(s.port),
		"-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories="+s.dir,
		"-c", "fsync=off", "-c", "max_connections=200")
	if s.log, err = os.CreateTemp("", "toolmw-postgres-log-"); err != nil {
		return err
	}
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	if err := s.cmd.Start(); err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	s.exited = make(chan struct{})
	go func() { s.cmd.Wait(); close(s.exited) }()

	db, err := sql.Open("pgx", s.dsn())
	if err != nil {
		return err
	}
	defer db.Close()
	deadline := time.Now().Add(pgStartTimeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := db.PingContext(ctx)
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-s.exited:
			return fmt.Errorf("postgres exited at start: %s", s.logTail())
		default:
		}
		if time.Now().After(deadline) {
			s.stop()
			return fmt.Errorf("postgres did not accept connections within %v: %v: %s", pgStartTimeout, err, s.logTail())
		}
		time.Sleep(50 * time.Millisecond) // waiting for another process: nothing to synchronise on
	}
}

// stop shuts the server down (fast shutdown: SIGINT) and waits for it.
func (s *pgServer) stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	s.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-s.exited:
	case <-time.After(pgStartTimeout):
		s.cmd.Process.Kill()
		<-s.exited
	}
	s.cmd = nil
	if s.log != nil {
		s.log.Close()
		os.Remove(s.log.Name())
		s.log = nil
	}
}

// restart stops the server and starts it again on the same data.
func (s *pgServer) restart(t testing.TB) {
	t.Helper()
	s.stop()
	if err := s.start(); err != nil {
		t.Fatalf("restarting postgres: %v", err)
	}
}

// restartInPlace stops the server and starts it again on the same data
// and port, so that a *sql.DB opened before reaches it again.
func (s *pgServer) restartInPlace(t testing.TB) {
	t.Helper()
	s.stop()
	if err := s.listen(); err != nil {
		t.Fatalf("restarting postgres on port %d: %v", s.port, err)
	}
}

func (s *pgServer) logTail() string {
	if s.log == nil {
		return ""
	}
	b, _ := os.ReadFile(s.log.Name())
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

func (s *pgServer) dsn() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", s.port)
}

// open opens a new *sql.DB on the server, closed when the test ends.
func (s *pgServer) open(t testing.TB) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", s.dsn())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// freshPrefix returns a table prefix no other store of this test binary
// uses, so tests sharing the server do not see each other's rows.
func freshPrefix() string {
	return fmt.Sprintf("t%d_", pgTables.Add(1))
}

// postgresPair returns two stores over fresh tables of the tests' server,
// each with its own *sql.DB: two replicas.
func postgresPair(t *testing.T) (*sqlstore.Store, *sqlstore.Store) {
	s := postgres(t)
	prefix := sqlstore.WithTablePrefix(freshPrefix())
	a := newPostgresStore(t, s.open(t), prefix)
	return a, newPostgresStore(t, s.open(t), prefix)
}

func newPostgresStore(t testing.TB, db *sql.DB, opts ...sqlstore.Option) *sqlstore.Store {
	t.Helper()
	st, err := sqlstore.New(db, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CreateTables(context.Background()); err != nil {
		t.Fatal(err)
	}
	return st
}

func TestPostgresContract(t *testing.T) {
	postgres(t)
	testContract(t, postgresPair)
}

func TestPostgresDetectsDialect(t *testing.T) {
	s, _ := postgresPair(t)
	if s.Dialect() != sqlstore.Postgres {
		t.Fatalf("Dialect() = %v, want postgres", s.Dialect())
	}
}
