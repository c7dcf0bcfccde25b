package main

import (
	"context"
	"encoding/json"
	"math"
	"sync"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/taxonomy"
)

// latency is how long the dependency takes to answer, success or failure,
// when it has no capacity limit; with one, it is the mean service time.
const latency = 50 * time.Millisecond

// errUnavailable is the dependency's failure: transient, as the classify
// layer would map a 503 or a refused connection.
var errUnavailable = taxonomy.Transient("upstream_unavailable", "the dependency is unavailable")

// errTimeout is an attempt the dependency did not answer within the
// per-attempt timeout: what the timeout layer returns for an idempotent
// tool, retryable.
var errTimeout = taxonomy.Timeout(taxonomy.CodeTimeout, "the attempt timed out", true)

type attemptsKey struct{}

// dependency is the simulated upstream. It fails an attempt when it is down
// at the attempt's start, or, independently, with probability faults.
// Without a server, every attempt takes latency of virtual time; with one,
// the attempt queues for the server's capacity and times out (see server).
type dependency struct {
	s        *sim
	downFrom time.Time // the outage, [downFrom, downTo); zero when none
	downTo   time.Time
	faults   float64
	rand     *lockedRand
	server   *server // nil: unlimited capacity

	mu   sync.Mutex // guards load and server
	load []int      // attempts reaching the dependency, per second of virtual time
}

func (d *dependency) call(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
	*ctx.Value(attemptsKey{}).(*int)++
	now := d.s.Now()
	d.count(now)
	fail := !now.Before(d.downFrom) && now.Before(d.downTo)
	if !fail && d.faults > 0 {
		fail = d.rand.Float64() < d.faults
	}
	wait := latency
	if d.server != nil {
		d.mu.Lock()
		wait = d.server.admit(now, d.rand).Sub(now)
		d.mu.Unlock()
		if wait > d.server.timeout {
			// The caller gives up; the server does the work anyway.
			d.s.Sleep(d.server.timeout)
			return toolmw.Result{}, errTimeout
		}
	}
	d.s.Sleep(wait)
	if fail {
		return toolmw.Result{}, errUnavailable
	}
	return toolmw.Result{Content: "ok"}, nil
}

// count records an attempt arriving at now.
func (d *dependency) count(now time.Time) {
	sec := int(now.Sub(epoch) / time.Second)
	d.mu.Lock()
	defer d.mu.Unlock()
	for len(d.load) <= sec {
		d.load = append(d.load, 0)
	}
	d.load[sec]++
}

// server is the overload model: a dependency with a fixed number of
// workers, each serving one request at a time, first come first served,
// with exponentially distributed service times (mean latency). Its capacity
// is workers / latency requests per second. Offered more, its queue grows,
// so its latency rises, and with it the share of attempts that outlast the
// per-attempt timeout and fail. A request whose caller timed out is still
// served when its turn comes: timed-out work consumes capacity, as it does
// in a server that cannot see its client leave. During the trigger every
// request started takes slowdown times as long (capacity divided by
// slowdown).
//
// This is the mechanism of a metastable failure (Bronson et al., HotOS
// 2021; Huang et al., OSDI 2022): once the queue is longer than the
// timeout, every attempt times out, every timed-out attempt is retried, and
// the retries keep the queue long after the trigger is gone.
type server struct {
	free     []time.Time // when each worker is next free
	timeout  time.Duration
	trigger  [2]time.Time
	slowdown float64
}

// admit queues a request arriving at now and returns when it is served.
func (sv *server) admit(now time.Time, r *lockedRand) time.Time {
	w := 0
	for i, f := range sv.free {
		if f.Before(sv.free[w]) {
			w = i
		}
	}
	start := sv.free[w]
	if start.Before(now) {
		start = now
	}
	service := time.Duration(-math.Log(1-r.Float64()) * float64(latency))
	if !start.Before(sv.trigger[0]) && start.Before(sv.trigger[1]) {
		service = time.Duration(float64(service) * sv.slowdown)
	}
	sv.free[w] = start.Add(service)
	return sv.free[w]
}
