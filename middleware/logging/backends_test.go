package logging_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware/logging"
	"github.com/toolmw/toolmw/taxonomy"
)

// A backend makes the layer on one logging library, writing JSON lines to w
// at level and above.
type backend struct {
	name string
	new  func(w io.Writer, level slog.Level, opts ...logging.Option) toolmw.Middleware
}

// backends are the two libraries the layer serves: zerolog, and slog with
// its JSON handler.
var backends = []backend{
	{"zerolog", func(w io.Writer, level slog.Level, opts ...logging.Option) toolmw.Middleware {
		return logging.New(zerolog.New(w).Level(zerologLevel(level)), opts...)
	}},
	{"slog", func(w io.Writer, level slog.Level, opts ...logging.Option) toolmw.Middleware {
		return logging.NewSlog(slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level})), opts...)
	}},
}

// zerologLevel is the zerolog logger level of a slog level.
func zerologLevel(level slog.Level) zerolog.Level {
	switch {
	case level == logging.LevelOff:
		return zerolog.Disabled
	case level < slog.LevelDebug:
		return zerolog.TraceLevel
	case level < slog.LevelInfo:
		return zerolog.DebugLevel
	case level < slog.LevelWarn:
		return zerolog.InfoLevel
	case level < slog.LevelError:
		return zerolog.WarnLevel
	}
	return zerolog.ErrorLevel
}

// lines parses the JSON lines in buf, in one spelling for both backends:
// what differs only in how each library spells it is made zerolog's. The
// level is lower case (slog's DEBUG-4 is zerolog's trace), the message is
// under "message" (slog's "msg"), and slog's "time" is dropped (zerolog
// writes none unless asked). Every other key and value is as written.
func lines(t *testing.T, buf *bytes.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, ln := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if ln == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(ln), &m); err != nil {
			t.Fatalf("not JSON: %q: %v", ln, err)
		}
		if msg, ok := m[slog.MessageKey]; ok {
			delete(m, slog.MessageKey)
			m[zerolog.MessageFieldName] = msg
		}
		if _, ok := m[slog.TimeKey]; ok {
			if _, isString := m[slog.TimeKey].(string); !isString {
				t.Fatalf("time is not a string: %q", ln)
			}
			delete(m, slog.TimeKey)
		}
		if lvl, ok := m["level"].(string); ok {
			lvl = strings.ToLower(lvl)
			if lvl == "debug-4" {
				lvl = "trace"
			}
			m["level"] = lvl
		}
		out = append(out, m)
	}
	return out
}

// TestBackendsWriteTheSameLines is the promise that zerolog and slog users
// read the same thing: the same tools, logged through zerolog and through
// slog's JSON handler, give the same lines, with the same keys and values
// at the same levels, once the spellings lines irons out (level case,
// "msg" for "message", slog's "time") are set aside.
func TestBackendsWriteTheSameLines(t *testing.T) {
	boom := func(context.Context, json.RawMessage) (toolmw.Result, error) { panic("boom") }
	calls := []struct {
		name string
		tool toolmw.Tool
		ctx  context.Context
	}{
		{"success", okTool, toolmw.WithCallID(context.Background(), "call_1")},
		{"refusal", failTool(taxonomy.Refusal("booking_not_cancellable", "this fare is non-refundable")), toolmw.WithCallID(context.Background(), "call_2")},
		{"transient with cause", failTool(taxonomy.Transient(taxonomy.CodeUpstreamUnavailable, "down").WithCause(errors.New("dial 10.0.0.7: refused"))), context.Background()},
		{"untyped with a secret", failTool(errors.New("token ghp_aB3dE5gH7kaB3dE5gH7kaB3dE5gH7kZq9Xw2 rejected")), toolmw.WithCallID(context.Background(), "call_3")},
		{"cancelled", failTool(context.Canceled), context.Background()},
		{"not permitted", failTool(taxonomy.NotPermitted(taxonomy.CodeNotPermitted, "no")), context.Background()},
		{"panic", boom, context.Background()},
	}
	levels := []slog.Level{slog.LevelDebug - 4, slog.LevelDebug, slog.LevelInfo, slog.LevelWarn, slog.LevelError}
	opts := [][]logging.Option{nil, {logging.WithSuccessLevel(slog.LevelInfo), logging.WithLevel(taxonomy.KindRefused, slog.LevelWarn)}}
	for _, level := range levels {
		for i, o := range opts {
			var out [2][]map[string]any
			for j, b := range backends {
				var buf bytes.Buffer
				clk := newClock()
				mw := b.new(&buf, level, append([]logging.Option{logging.WithClock(clk)}, o...)...)
				for _, c := range calls {
					tool := toolmw.MustWrap(toolmw.Spec{Name: "t_" + strings.ReplaceAll(c.name, " ", "_")}, c.tool, mw)
					func() {
						defer func() { _ = recover() }()
						clk.Advance(1250 * time.Microsecond)
						_, _ = tool(c.ctx, nil)
					}()
				}
				out[j] = lines(t, &buf)
			}
			if !reflect.DeepEqual(out[0], out[1]) {
				t.Errorf("logger at %v, options %d:\nzerolog %v\nslog    %v", level, i, out[0], out[1])
			}
			if level <= slog.LevelDebug && len(out[0]) < len(calls) {
				t.Errorf("logger at %v: only %d lines", level, len(out[0]))
			}
		}
	}
}

// failTool returns a tool that fails with err.
func failTool(err error) toolmw.Tool {
	return func(context.Context, json.RawMessage) (toolmw.Result, error) { return toolmw.Result{}, err }
}
