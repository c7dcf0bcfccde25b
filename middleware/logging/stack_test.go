package logging_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"reflect"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/logging"
	"github.com/toolmw/toolmw/taxonomy"
)

// TestDefaultStackTakesEitherLogger: middleware.WithLogger (zerolog) and
// middleware.WithSlog give the default stack's logging layer the same
// lines; middleware.Validate reports a bad logging option.
func TestDefaultStackTakesEitherLogger(t *testing.T) {
	var zbuf, sbuf bytes.Buffer
	stacks := []middleware.Stack{
		middleware.Default(middleware.WithLogger(zerolog.New(&zbuf))),
		middleware.Default(middleware.WithSlog(slog.New(slog.NewJSONHandler(&sbuf, &slog.HandlerOptions{Level: slog.LevelDebug})))),
	}
	for _, stack := range stacks {
		tool, err := stack.Wrap(toolmw.Spec{Name: "cancel_booking"}, failTool(taxonomy.Refusal("booking_not_cancellable", "non-refundable")))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = tool(toolmw.WithCallID(context.Background(), "call_1"), nil)
	}
	z, s := lines(t, &zbuf), lines(t, &sbuf)
	if len(z) != 2 || len(s) != 2 {
		t.Fatalf("lines\nzerolog %v\nslog    %v", z, s)
	}
	for _, ln := range [][]map[string]any{z, s} {
		delete(ln[0], "duration_ms") // real time
	}
	if !reflect.DeepEqual(z, s) {
		t.Errorf("lines differ\nzerolog %v\nslog    %v", z, s)
	}

	err := middleware.Validate(middleware.WithSlog(nil, logging.WithSuccessLevel(slog.LevelError)))
	if !errors.Is(err, taxonomy.ErrDefinitionInvalid) || !strings.Contains(err.Error(), "logging: WithSuccessLevel") {
		t.Errorf("Validate: %v", err)
	}
	if err := middleware.Validate(middleware.WithLogger(zerolog.Nop(), logging.WithSuccessLevel(slog.LevelInfo))); err != nil {
		t.Errorf("Validate: %v", err)
	}
	bad := middleware.Default(middleware.WithLogger(zerolog.Nop(), logging.WithLevel("", slog.LevelWarn)))
	if _, err := bad.Wrap(toolmw.Spec{Name: "t"}, okTool); !errors.Is(err, taxonomy.ErrDefinitionInvalid) {
		t.Errorf("Wrap with a bad logging option: %v", err)
	}
}

// TestDefaultStackLogsNothingByDefault: without WithLogger or WithSlog the
// default stack writes no line, not even to slog.Default().
func TestDefaultStackLogsNothingByDefault(t *testing.T) {
	defer slog.SetDefault(slog.Default())
	var buf bytes.Buffer
	slog.SetDefault(slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	tool, err := middleware.Default().Wrap(toolmw.Spec{Name: "t"}, failTool(errors.New("boom")))
	if err != nil {
		t.Fatal(err)
	}
	_, _ = tool(context.Background(), nil)
	if buf.Len() != 0 {
		t.Errorf("wrote %q", buf.String())
	}
}
