// Package booking is the flight-booking tools the examples publish over
// MCP: a search (read-only), a booking and a cancellation that refuses
// saver fares. The data is made up and kept in memory.
package booking

import (
	"context"
	"fmt"
	"strings"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw"
	toolmcp "github.com/toolmw/toolmw/adapters/mcp"
	"github.com/toolmw/toolmw/taxonomy"
)

// SearchIn is the input of search_flights.
type SearchIn struct {
	From string `json:"from" jsonschema:"IATA code of the departure airport, e.g. LIS"`
	To   string `json:"to" jsonschema:"IATA code of the arrival airport, e.g. AMS"`
}

// Flight is one flight found.
type Flight struct {
	Number string `json:"number"`
	Fare   string `json:"fare"`
	Price  int    `json:"price_eur"`
}

// SearchOut is the result of search_flights.
type SearchOut struct {
	Flights []Flight `json:"flights"`
}

// BookIn is the input of book_flight.
type BookIn struct {
	Flight    string `json:"flight" jsonschema:"the flight number from search_flights"`
	Passenger string `json:"passenger" jsonschema:"the passenger's full name"`
}

// Booking is the result of book_flight.
type Booking struct {
	Reference string `json:"reference"`
	Flight    string `json:"flight"`
	Fare      string `json:"fare"`
}

// CancelIn is the input of cancel_booking.
type CancelIn struct {
	Reference string `json:"reference" jsonschema:"the booking reference from book_flight"`
}

// Desk holds the bookings. It is safe for concurrent use.
type Desk struct {
	mu       sync.Mutex
	next     int
	bookings map[string]Booking
}

// NewDesk returns a desk without bookings.
func NewDesk() *Desk { return &Desk{bookings: map[string]Booking{}} }

var flights = []Flight{
	{Number: "TP1234", Fare: "flex", Price: 180},
	{Number: "TP1236", Fare: "saver", Price: 95},
}

// Search finds flights (any route: the timetable is small).
func (d *Desk) Search(_ context.Context, in SearchIn) (SearchOut, error) {
	if len(in.From) != 3 || len(in.To) != 3 {
		return SearchOut{}, taxonomy.Refusal("airport_unknown", "airports are given as three-letter IATA codes")
	}
	return SearchOut{Flights: flights}, nil
}

// Book books a seat.
func (d *Desk) Book(_ context.Context, in BookIn) (Booking, error) {
	for _, f := range flights {
		if f.Number == strings.ToUpper(in.Flight) {
			d.mu.Lock()
			defer d.mu.Unlock()
			d.next++
			b := Booking{Reference: fmt.Sprintf("BK%04d", d.next), Flight: f.Number, Fare: f.Fare}
			d.bookings[b.Reference] = b
			return b, nil
		}
	}
	return Booking{}, taxonomy.Refusal("flight_unknown", "no flight has that number; search first")
}

// Cancel cancels a booking; a saver fare cannot be cancelled.
func (d *Desk) Cancel(_ context.Context, in CancelIn) (string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	b, ok := d.bookings[in.Reference]
	switch {
	case !ok:
		return "", taxonomy.Refusal("booking_not_found", "no booking has that reference")
	case b.Fare == "saver":
		return "", taxonomy.Refusal("booking_not_cancellable", "this fare is non-refundable")
	}
	delete(d.bookings, in.Reference)
	return "cancelled " + in.Reference, nil
}

// Register registers the desk's tools in box.
func (d *Desk) Register(box *toolmw.Toolbox) error {
	for _, t := range []struct {
		spec toolmw.Spec
		tool toolmw.Tool
	}{
		{toolmw.Spec{Name: "search_flights", Description: "Find flights between two airports.", Idempotent: true, ResultJSON: true}, toolmw.Typed(d.Search)},
		{toolmw.Spec{Name: "book_flight", Description: "Book a seat on a flight.", ResultJSON: true}, toolmw.Typed(d.Book)},
		{toolmw.Spec{Name: "cancel_booking", Description: "Cancel a booking. Saver fares cannot be cancelled."}, toolmw.Typed(d.Cancel)},
	} {
		if err := box.Register(t.spec, t.tool); err != nil {
			return err
		}
	}
	return nil
}

// NewServer returns an MCP server publishing the desk's tools, each
// wrapped in stack, with typed protocol errors.
func NewServer(d *Desk, stack toolmw.Middleware) (*sdk.Server, error) {
	box := toolmw.NewToolbox(stack)
	if err := d.Register(box); err != nil {
		return nil, err
	}
	srv := sdk.NewServer(&sdk.Implementation{Name: "booking", Version: "1.0.0"}, nil)
	srv.AddReceivingMiddleware(toolmcp.ProtocolErrors())
	no := false
	if err := toolmcp.AddToolbox(srv, box,
		toolmcp.WithHints("search_flights", toolmcp.Hints{Title: "Search flights", ReadOnly: true}),
		toolmcp.WithHints("cancel_booking", toolmcp.Hints{Title: "Cancel a booking", Destructive: &no}),
	); err != nil {
		return nil, err
	}
	return srv, nil
}
