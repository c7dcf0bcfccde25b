package langchaingo_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/approval"
	"github.com/toolmw/toolmw/middleware/dedupe"
	"github.com/toolmw/toolmw/middleware/retry"
	"github.com/toolmw/toolmw/taxonomy"
)

type flightIn struct {
	Flight string `json:"flight"`
}

type cityIn struct {
	City string `json:"city"`
}

type bookingIn struct {
	Booking string `json:"booking"`
}

// travel is a box of the scenario's tools and how often each ran:
// cancel_flight refuses, get_weather fails once (transient) then answers,
// cancel_booking needs a reviewer's approval.
type travel struct {
	box                               *toolmw.Toolbox
	desk                              *approval.Desk
	refusals, weathers, cancellations atomic.Int32
}

// stack is the default stack without backoff waits, with dedupe and the
// desk's approval layer (gating cancel_booking) outside retry.
func stack(t *testing.T, desk *approval.Desk) toolmw.Middleware {
	t.Helper()
	s, err := middleware.Default(middleware.WithRetry(retry.WithBackoff(0, 0))).InsertBefore(middleware.Retry,
		middleware.Layer{Name: middleware.Dedupe, Middleware: dedupe.New()})
	if err != nil {
		t.Fatal(err)
	}
	if desk != nil {
		s, err = s.InsertBefore(middleware.Retry,
			middleware.Layer{Name: middleware.Approval, Middleware: desk.Middleware(approval.Tools("cancel_booking"))})
		if err != nil {
			t.Fatal(err)
		}
	}
	return s.Middleware()
}

func newTravel(t *testing.T) *travel {
	t.Helper()
	tr := &travel{desk: approval.NewDesk()}
	tr.box = toolmw.NewToolbox(stack(t, tr.desk))
	must(t, tr.box.Register(toolmw.Spec{Name: "cancel_flight", Description: "Cancels a flight."},
		toolmw.Typed(func(ctx context.Context, in flightIn) (string, error) {
			tr.refusals.Add(1)
			return "", taxonomy.Refusal("flight_not_cancellable", "this fare is non-refundable")
		})))
	must(t, tr.box.Register(toolmw.Spec{Name: "get_weather", Description: "Current weather in a city.", Idempotent: true},
		toolmw.Typed(func(ctx context.Context, in cityIn) (string, error) {
			if tr.weathers.Add(1) == 1 {
				return "", taxonomy.Transient(taxonomy.CodeUpstreamUnavailable, "the weather service is down")
			}
			return "clear in " + in.City, nil
		})))
	must(t, tr.box.Register(toolmw.Spec{Name: "cancel_booking", Description: "Cancels a booking."},
		toolmw.Typed(func(ctx context.Context, in bookingIn) (string, error) {
			tr.cancellations.Add(1)
			return "cancelled " + in.Booking, nil
		})))
	return tr
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
