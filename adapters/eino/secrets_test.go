package eino_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/callbacks"
	"github.com/cloudwego/eino/components"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/components/tool/utils"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"

	"github.com/toolmw/toolmw"
	tooleino "github.com/toolmw/toolmw/adapters/eino"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/retry"
	"github.com/toolmw/toolmw/toolmwtest/canary"
)

// recorder is a global Eino callback handler that writes down everything
// the callbacks receive, by component: what a tracing or logging handler
// would see.
type recorder struct {
	mu  sync.Mutex
	on  bool
	log map[components.Component]*strings.Builder
}

var (
	rec     = &recorder{log: map[components.Component]*strings.Builder{}}
	recOnce sync.Once
)

func (r *recorder) write(info *callbacks.RunInfo, what string, v any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.on {
		return
	}
	c := components.Component("")
	if info != nil {
		c = info.Component
	}
	b := r.log[c]
	if b == nil {
		b = new(strings.Builder)
		r.log[c] = b
	}
	fmt.Fprintf(b, "%s %+v\n", what, v)
}

// stream records a stream a callback receives. While the recorder is off
// it closes it at once: a copy read by a second reader waits on a mutex
// (Eino's stream copies share one), on which a synctest bubble cannot
// advance its clock.
func (r *recorder) stream(info *callbacks.RunInfo, sr any) {
	r.mu.Lock()
	on := r.on
	r.mu.Unlock()
	switch sr := sr.(type) {
	case *schema.StreamReader[callbacks.CallbackOutput]:
		if !on {
			sr.Close()
			return
		}
		go drainStream(r, info, sr)
	case *schema.StreamReader[callbacks.CallbackInput]:
		if !on {
			sr.Close()
			return
		}
		go drainStream(r, info, sr)
	}
}

// start records callbacks until the test ends, and returns what was
// recorded by component.
func (r *recorder) start(t *testing.T) func() map[components.Component]string {
	recOnce.Do(func() {
		callbacks.AppendGlobalHandlers(callbacks.NewHandlerBuilder().
			OnStartFn(func(ctx context.Context, info *callbacks.RunInfo, in callbacks.CallbackInput) context.Context {
				r.write(info, "start", in)
				return ctx
			}).
			OnEndFn(func(ctx context.Context, info *callbacks.RunInfo, out callbacks.CallbackOutput) context.Context {
				r.write(info, "end", out)
				return ctx
			}).
			OnErrorFn(func(ctx context.Context, info *callbacks.RunInfo, err error) context.Context {
				r.write(info, "error", err.Error())
				return ctx
			}).
			OnEndWithStreamOutputFn(func(ctx context.Context, info *callbacks.RunInfo, out *schema.StreamReader[callbacks.CallbackOutput]) context.Context {
				r.stream(info, out)
				return ctx
			}).
			OnStartWithStreamInputFn(func(ctx context.Context, info *callbacks.RunInfo, in *schema.StreamReader[callbacks.CallbackInput]) context.Context {
				r.stream(info, in)
				return ctx
			}).Build())
	})
	r.mu.Lock()
	r.on, r.log = true, map[components.Component]*strings.Builder{}
	r.mu.Unlock()
	stop := func() map[components.Component]string {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.on = false
		out := map[components.Component]string{}
		for c, b := range r.log {
			out[c] = b.String()
		}
		return out
	}
	t.Cleanup(func() { stop() })
	return stop
}

// drainStream records a callback's stream, to its end, as a handler does:
// on a goroutine of its own, never holding up the component.
func drainStream[T any](r *recorder, info *callbacks.RunInfo, sr *schema.StreamReader[T]) {
	defer sr.Close()
	for {
		v, err := sr.Recv()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			r.write(info, "stream error", err.Error())
			return
		}
		r.write(info, "stream", v)
	}
}

// failures returns the canary errors of secret, in a fixed order.
func failures(secret string) ([]string, []error) {
	all := canary.All(secret)
	names := make([]string, 0, len(all))
	for n := range all {
		names = append(names, n)
	}
	sort.Strings(names)
	errs := make([]error, len(names))
	for i, n := range names {
		errs[i] = all[n]
	}
	return names, errs
}

// leaks fails t when text holds a canary, or words of the errors' texts
// outside their typed messages.
func leaks(t *testing.T, where, text string) {
	t.Helper()
	if family, found := canary.Find(text); family != "" {
		t.Errorf("%s: the %s canary leaked (%q)", where, family, found)
	}
	for _, w := range canary.HiddenText {
		if strings.Contains(text, w) {
			t.Errorf("%s: an error's raw text leaked (%q)", where, w)
		}
	}
}

// TestSecretsStayOut: tools fail in every way canary.All knows, with
// every planted secret, in one model turn of an ADK run: through a
// Toolbox (New) and as the user's own tools under a stack
// (Middleware). Nothing of the secrets, nor of the errors' raw texts,
// reaches what the model received, the run's events, or the callbacks of
// the run (every component's for the box's tools; for the user's own
// tools, every component's but the tools' own, which Eino calls inside
// the middleware with the tool's own error).
func TestSecretsStayOut(t *testing.T) {
	for _, s := range canary.Secrets {
		t.Run(s.Family, func(t *testing.T) {
			names, errs := failures(s.Value)
			stack := middleware.Default(middleware.WithRetry(retry.WithMaxAttempts(1))).Middleware()
			box := toolmw.NewToolbox(stack)
			var own []tool.BaseTool
			var turn []string
			for i, err := range errs {
				name := fmt.Sprintf("box_%d", i)
				if e := box.Register(toolmw.Spec{Name: name}, func(context.Context, json.RawMessage) (toolmw.Result, error) { return toolmw.Result{}, err }); e != nil {
					t.Fatal(e)
				}
				ownName := fmt.Sprintf("own_%d", i)
				tl, e := utils.InferTool(ownName, names[i], func(ctx context.Context, in booking) (string, error) { return "", err })
				if e != nil {
					t.Fatal(e)
				}
				own = append(own, tl)
				turn = append(turn, "call_"+name, name, `{}`, "call_"+ownName, ownName, `{}`)
			}
			tools, err := tooleino.New(box)
			if err != nil {
				t.Fatal(err)
			}
			nc := tools.NodeConfig()
			nc.Tools = append(nc.Tools, own...)
			ctx := context.Background()
			m := newScripted(calls(turn...), say("Nothing worked."))
			agent, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
				Name: "a", Description: "d", Model: m,
				ToolsConfig: adk.ToolsConfig{ToolsNodeConfig: nc},
				Middlewares: []adk.AgentMiddleware{{WrapToolCall: mustMiddleware(t, stack)}},
			})
			if err != nil {
				t.Fatal(err)
			}
			stop := rec.start(t)
			events := drainEvents(t, adk.NewRunner(ctx, adk.RunnerConfig{Agent: agent}).Query(ctx, "try"))
			logs := stop()
			if err := eventErr(events); err != nil {
				t.Fatal(err)
			}
			if n := len(toolMessages(m.last())); n != 2*len(errs) {
				t.Fatalf("the model received %d tool results, want %d", n, 2*len(errs))
			}
			leaks(t, "the model's input", strings.Join(m.received(t), "\n"))
			leaks(t, "the events", eventText(t, events))
			// The recorder sees what a handler sees: the user's own tools'
			// callbacks got their raw errors (Eino calls them inside the
			// tool-call middleware), which is how the test knows it would
			// catch a leak.
			if family, _ := canary.Find(logs[components.ComponentOfTool]); family == "" {
				t.Fatal("the tools' callbacks recorded none of the own tools' raw errors")
			}
			for c, text := range logs {
				if c == components.ComponentOfTool {
					// The tools' own callbacks: the box's tools report their
					// envelopes; the user's own tools report their own errors.
					text = strings.Join(boxOnly(text), "\n")
				}
				leaks(t, "the callbacks of "+string(c), text)
			}
		})
	}
}

// boxOnly returns the tool callback lines that are not the user's own
// tools' errors.
func boxOnly(text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if !strings.HasPrefix(l, "error ") || !strings.Contains(l, "[LocalFunc]") {
			out = append(out, l)
		}
	}
	return out
}

var _ = compose.ToolsNodeConfig{}
