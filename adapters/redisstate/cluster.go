package redisstate

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// NodeRest is how long a [Store] on a Redis Cluster leaves one node alone
// after an operation on it failed: meanwhile the operations on the keys
// that node serves fail at once, without a round trip, with an error
// matching [ErrNodeResting], and the operations on the other nodes' keys
// go on. It is the layers' own rest, per node instead of per store.
const NodeRest = 250 * time.Millisecond

// reloadEvery bounds how often a Store asks its cluster client for a new
// slot map: at most once per period, however many operations fail.
const reloadEvery = 200 * time.Millisecond

// nodeSlowAfter is how long an operation must have had before its deadline
// for its timeout to be blamed on the node: one whose caller left it less
// ended with the caller's own deadline, and rests nothing.
const nodeSlowAfter = 10 * time.Millisecond

// ErrNodeResting is returned, wrapped, for an operation on a key whose
// Redis Cluster node failed less than [NodeRest] ago: the Store did not
// ask it. The error says that only part of the store failed: it has a
// PartialOutage method that returns true, on which the layers fall back
// for that call only and go on asking the store for other keys.
var ErrNodeResting = errors.New("redisstate: the Redis Cluster node serving this key failed moments ago and is left alone")

// nodeError is the error of an operation on one node of a cluster that
// failed (err is the client's) or was not tried (err is ErrNodeResting):
// a partial outage of the store.
type nodeError struct{ err error }

func (e *nodeError) Error() string {
	if e.err == ErrNodeResting {
		return ErrNodeResting.Error()
	}
	return "redisstate: a Redis Cluster node failed (its keys only): " + e.err.Error()
}

func (e *nodeError) Unwrap() error { return e.err }

// PartialOutage reports that only part of the store failed: the node
// serving the operation's key. The layers that understand it fall back
// for this call only, and do not leave the whole store alone.
func (e *nodeError) PartialOutage() bool { return true }

// cluster is what a Store on a *redis.ClusterClient keeps about the
// cluster's nodes: which rest, and when it last asked for a new slot map.
//
// go-redis reloads a ClusterClient's slot map on MOVED, ASK and READONLY
// replies and every ClusterStateReloadInterval (60 s by default), never on
// a network error: after a master dies and its replica is promoted, the
// client keeps sending the dead master's slots to the dead address until
// the next periodic reload. So an operation that fails on a node asks the
// client to reload its map (ReloadState; at most once per reloadEvery),
// and so does one refused because its node rests, so that the map follows
// a failover within a few hundred milliseconds of the cluster's own.
type cluster struct {
	client *redis.ClusterClient

	latest   atomic.Int64 // unix nanoseconds: no node rests after it
	reloaded atomic.Int64 // unix nanoseconds: when a reload was last asked

	mu    sync.Mutex
	rests map[string]int64 // a node's address → unix nanoseconds its rest ends
}

func newCluster(c *redis.ClusterClient) *cluster {
	return &cluster{client: c, rests: map[string]int64{}}
}

// resting returns the error to fail an operation on key with at once, its
// node resting, or nil. While no node rests it costs one atomic load.
func (c *cluster) resting(key string) error {
	now := time.Now().UnixNano()
	if now >= c.latest.Load() {
		return nil
	}
	addr := c.node(key)
	if addr == "" {
		return nil
	}
	c.mu.Lock()
	until := c.rests[addr]
	c.mu.Unlock()
	if now >= until {
		return nil
	}
	c.reload(now)
	return &nodeError{ErrNodeResting}
}

// failed takes the error of an operation on key that had budget before
// its deadline. A failure of the node serving key — it could not be
// reached, closed the connection, did not answer in time, is loading its
// data — rests that node, asks for a new slot map and returns err as a
// partial outage; any other error (a reply, the caller's cancellation, a
// key the map does not place) is returned as it is.
func (c *cluster) failed(key string, err error, budget time.Duration) error {
	if !nodeFault(err, budget) {
		return err
	}
	now := time.Now().UnixNano()
	c.reload(now)
	addr := c.node(key)
	if addr == "" {
		return err
	}
	until := now + int64(NodeRest)
	c.mu.Lock()
	for a, u := range c.rests {
		if u <= now {
			delete(c.rests, a)
		}
	}
	c.rests[addr] = until
	c.mu.Unlock()
	for {
		l := c.latest.Load()
		if l >= until || c.latest.CompareAndSwap(l, until) {
			break
		}
	}
	return &nodeError{err}
}

// node returns the address of the master that serves key in the client's
// slot map, or "" when the client has no map yet. It never does I/O: a
// client without a map would load one with the context it is given, and
// it is given one already done.
func (c *cluster) node(key string) string {
	master, err := c.client.MasterForKey(doneCtx, key)
	if err != nil || master == nil {
		return ""
	}
	return master.Options().Addr
}

// doneCtx is a context that is already done.
var doneCtx = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

// reload asks the client for a new slot map, unless it was asked less than
// reloadEvery ago. The client reloads in the background (a goroutine of
// its own, which coalesces requests), so reload never waits.
func (c *cluster) reload(now int64) {
	last := c.reloaded.Load()
	if now-last < int64(reloadEvery) || !c.reloaded.CompareAndSwap(last, now) {
		return
	}
	c.client.ReloadState(context.Background())
}

// nodeFault reports whether err, an operation's error, is a failure of the
// node it was sent to: a network error (refused, reset, closed), a
// timeout of an operation that had at least nodeSlowAfter before its
// deadline, a connection pool that gave no connection in time, or a node
// still loading its data.
func nodeFault(err error, budget time.Duration) bool {
	var ne net.Error
	switch {
	case err == nil, errors.Is(err, context.Canceled), errors.Is(err, redis.Nil):
		return false
	case errors.Is(err, context.DeadlineExceeded):
		return budget >= nodeSlowAfter
	case errors.As(err, &ne) && ne.Timeout():
		return budget >= nodeSlowAfter
	case errors.As(err, &ne), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, redis.ErrPoolTimeout), redis.IsLoadingError(err):
		return true
	}
	return false
}

// timeLeft returns how long ctx has before its deadline, or an hour when it
// has none.
func timeLeft(ctx context.Context) time.Duration {
	if d, ok := ctx.Deadline(); ok {
		return time.Until(d)
	}
	return time.Hour
}
