package tracing

import (
	"context"
	"fmt"
	"sync"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/toolmw/toolmw/scrub"
	"github.com/toolmw/toolmw/state"
)

// RegisterStateMetrics reports the layers' state, as published in r (nil:
// [state.Default]), as observable instruments of mp's meter (nil: the
// global provider), read when a reader collects: breakers, bulkheads, rate
// limiters, retry and run budgets, hedges, per-run call limits, spend,
// approvals, dedupe, caches, fallbacks and store ports. The package
// documentation lists the instruments. Every series has the attribute toolmw.name (or, for the store instruments,
// toolmw.store.port) and at most one more; names are bounded by r (see
// package state) and scrubbed. It returns a function that unregisters the
// instruments' callback. Call it once per provider: a second call reports
// every series twice.
func RegisterStateMetrics(mp metric.MeterProvider, r *state.Registry) (unregister func() error, err error) {
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	if r == nil {
		r = state.Default
	}
	meter := newMeter(mp)
	obs := make(map[state.Instrument]metric.Observable, len(stateInstruments))
	list := make([]metric.Observable, 0, len(stateInstruments))
	for i, d := range stateInstruments {
		o, err := d.make(meter)
		if err != nil {
			return nil, fmt.Errorf("tracing: RegisterStateMetrics: %w", err)
		}
		obs[i] = o
		list = append(list, o)
	}
	attrs := &stateAttrs{sets: map[stateSeries]metric.MeasurementOption{}}
	reg, err := meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		for _, s := range r.Collect() {
			d, ok := stateInstruments[s.Instrument]
			if !ok {
				continue
			}
			set := attrs.of(d, s)
			switch ins := obs[s.Instrument].(type) {
			case metric.Int64Observable:
				o.ObserveInt64(ins, int64(s.Value), set)
			case metric.Float64Observable:
				o.ObserveFloat64(ins, s.Value, set)
			}
		}
		return nil
	}, list...)
	if err != nil {
		return nil, fmt.Errorf("tracing: RegisterStateMetrics: %w", err)
	}
	return reg.Unregister, nil
}

// The attributes of the state instruments.
const (
	AttrName      = "toolmw.name"            // the tool's name, a key, or a shared instance's name
	AttrState     = "toolmw.breaker.state"   // the state a breaker entered
	AttrStorePort = "toolmw.store.port"      // a store port: store.Error's Layer
	AttrStoreOp   = "toolmw.store.operation" // the operation that failed
	// AttrVerdict is an approval request's verdict: approved, denied,
	// revoked or expired.
	AttrVerdict = "toolmw.approval.verdict"
	// AttrFallbackSource is where a fallback's substitute came from:
	// last_good or function.
	AttrFallbackSource = "toolmw.fallback.source"
	// AttrCurrency is the currency of a spend amount, as given to the
	// spend layer's WithCurrency; absent when none was.
	AttrCurrency = "toolmw.spend.currency"
)

// stateKind is the OpenTelemetry instrument a state instrument is.
type stateKind uint8

const (
	intGauge stateKind = iota
	floatGauge
	intCounter
	floatCounter
	intUpDown
	floatUpDown
)

// stateInstrument is how one state.Instrument is reported.
type stateInstrument struct {
	name, unit, desc string
	kind             stateKind
	nameKey, detail  string // the attribute keys of a series' name and detail ("" : none)
}

func (d stateInstrument) make(m metric.Meter) (metric.Observable, error) {
	switch d.kind {
	case intGauge:
		return m.Int64ObservableGauge(d.name, metric.WithUnit(d.unit), metric.WithDescription(d.desc))
	case floatGauge:
		return m.Float64ObservableGauge(d.name, metric.WithUnit(d.unit), metric.WithDescription(d.desc))
	case intCounter:
		return m.Int64ObservableCounter(d.name, metric.WithUnit(d.unit), metric.WithDescription(d.desc))
	case floatCounter:
		return m.Float64ObservableCounter(d.name, metric.WithUnit(d.unit), metric.WithDescription(d.desc))
	case intUpDown:
		return m.Int64ObservableUpDownCounter(d.name, metric.WithUnit(d.unit), metric.WithDescription(d.desc))
	}
	return m.Float64ObservableUpDownCounter(d.name, metric.WithUnit(d.unit), metric.WithDescription(d.desc))
}

// stateInstruments names every state.Instrument for OpenTelemetry; a test
// checks that none is missing.
var stateInstruments = map[state.Instrument]stateInstrument{
	state.BreakerState: {"toolmw.breaker.state", "1",
		"State of the circuit breaker: 0 closed, 1 half-open, 2 open.", intGauge, AttrName, ""},
	state.BreakerTransitions: {"toolmw.breaker.transitions", "{transition}",
		"Number of circuit breaker state changes, by the state entered.", intCounter, AttrName, AttrState},
	state.BulkheadInFlight: {"toolmw.bulkhead.in_flight", "{call}",
		"Number of calls holding a bulkhead slot.", intUpDown, AttrName, ""},
	state.BulkheadQueued: {"toolmw.bulkhead.queued", "{call}",
		"Number of calls waiting for a bulkhead slot.", intUpDown, AttrName, ""},
	state.BulkheadLimit: {"toolmw.bulkhead.limit", "{call}",
		"Number of calls a bulkhead lets run at once.", intUpDown, AttrName, ""},
	state.BulkheadRefusals: {"toolmw.bulkhead.refusals", "{call}",
		"Number of calls refused by a full bulkhead.", intCounter, AttrName, ""},
	state.RateLimitWait: {"toolmw.ratelimit.wait", "s",
		"Time calls waited for a rate limiter.", floatCounter, AttrName, ""},
	state.RateLimitRefusals: {"toolmw.ratelimit.refusals", "{call}",
		"Number of calls refused by a rate limiter.", intCounter, AttrName, ""},
	state.RetryBudgetTokens: {"toolmw.retry_budget.tokens", "{token}",
		"Balance of a retry token budget.", floatGauge, AttrName, ""},
	state.RetryBudgetRefusals: {"toolmw.retry_budget.refusals", "{retry}",
		"Number of retries refused by an empty retry budget.", intCounter, AttrName, ""},
	state.RunBudgetUsed: {"toolmw.run_budget.used", "{attempt}",
		"Number of attempts the live run budgets have given a tool.", intUpDown, AttrName, ""},
	state.RunBudgetRefusals: {"toolmw.run_budget.refusals", "{attempt}",
		"Number of attempts refused by a used-up run budget.", intCounter, AttrName, ""},
	state.HedgesStarted: {"toolmw.hedge.started", "{hedge}",
		"Number of hedged attempts started.", intCounter, AttrName, ""},
	state.HedgesWon: {"toolmw.hedge.won", "{hedge}",
		"Number of calls decided by a hedged attempt.", intCounter, AttrName, ""},
	state.StoreErrors: {"toolmw.store.errors", "{error}",
		"Number of failed store operations, per port and operation.", intCounter, AttrStorePort, AttrStoreOp},
	state.StoreDegraded: {"toolmw.store.degraded", "{call}",
		"Number of calls a port decided without its store.", intCounter, AttrStorePort, ""},
	state.SpendReserved: {"toolmw.spend.reserved", "{amount}",
		"Amount held by calls in flight, per currency.", floatUpDown, AttrName, AttrCurrency},
	state.SpendSettled: {"toolmw.spend.settled", "{amount}",
		"Amount charged to finished calls, per currency.", floatCounter, AttrName, AttrCurrency},
	state.RunLimitRefusals: {"toolmw.runlimit.refusals", "{call}",
		"Number of calls refused by a per-run call limit.", intCounter, AttrName, ""},
	state.ApprovalsPending: {"toolmw.approval.pending", "{request}",
		"Number of approval requests waiting for a reviewer's decision.", intUpDown, AttrName, ""},
	state.ApprovalVerdicts: {"toolmw.approval.verdicts", "{request}",
		"Number of approval requests decided or lapsed, by verdict.", intCounter, AttrName, AttrVerdict},
	state.ApprovalWait: {"toolmw.approval.wait", "s",
		"Time approval requests waited for their decision, by verdict.", floatCounter, AttrName, AttrVerdict},
	state.DedupeRepeats: {"toolmw.dedupe.repeats", "{call}",
		"Number of repeated calls given the recorded outcome instead of running.", intCounter, AttrName, ""},
	state.CacheHits: {"toolmw.cache.hits", "{call}",
		"Number of calls a cache served a kept result.", intCounter, AttrName, ""},
	state.CacheMisses: {"toolmw.cache.misses", "{call}",
		"Number of calls a cache looked up without finding a result.", intCounter, AttrName, ""},
	state.FallbacksServed: {"toolmw.fallback.served", "{call}",
		"Number of failed calls a fallback answered, by source.", intCounter, AttrName, AttrFallbackSource},
}

// stateAttrs caches the attribute set of each series: names are bounded by
// the registry, so the cache is too, and each name is scrubbed once.
type stateAttrs struct {
	mu   sync.Mutex // readers may collect at once
	sets map[stateSeries]metric.MeasurementOption
}

type stateSeries struct {
	i            state.Instrument
	name, detail string
}

func (a *stateAttrs) of(d stateInstrument, s state.Series) metric.MeasurementOption {
	k := stateSeries{s.Instrument, s.Name, s.Detail}
	a.mu.Lock()
	defer a.mu.Unlock()
	if set, ok := a.sets[k]; ok {
		return set
	}
	kv := []attribute.KeyValue{attribute.String(d.nameKey, scrub.String(s.Name))}
	if d.detail != "" && s.Detail != "" { // a series without a detail goes without the attribute
		kv = append(kv, attribute.String(d.detail, scrub.String(s.Detail)))
	}
	set := metric.WithAttributeSet(attribute.NewSet(kv...))
	a.sets[k] = set
	return set
}
