package eino_test

import (
	"context"
	"errors"
	"io"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/components/tool/utils"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"

	"github.com/toolmw/toolmw"
	tooleino "github.com/toolmw/toolmw/adapters/eino"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/approval"
	"github.com/toolmw/toolmw/middleware/retry"
	"github.com/toolmw/toolmw/taxonomy"
	"github.com/toolmw/toolmw/toolmwtest"
	"github.com/toolmw/toolmw/turn"
)

// streamTool is a user's own Eino StreamableTool whose stream a test
// scripts: each call runs produce on a goroutine of its own with the
// writer, and the call's context.
type streamTool struct {
	name    string
	calls   atomic.Int32
	start   func(call int) error // an error StreamableRun returns before any stream, or nil
	produce func(ctx context.Context, call int, w *schema.StreamWriter[string])
	ended   chan struct{} // closed when a producer returns, when not nil
}

func (s *streamTool) Info(context.Context) (*schema.ToolInfo, error) {
	return &schema.ToolInfo{Name: s.name, Desc: "Streams a report."}, nil
}

func (s *streamTool) StreamableRun(ctx context.Context, _ string, _ ...tool.Option) (*schema.StreamReader[string], error) {
	n := int(s.calls.Add(1))
	if s.start != nil {
		if err := s.start(n); err != nil {
			return nil, err
		}
	}
	r, w := schema.Pipe[string](0)
	go func() {
		defer w.Close()
		if s.ended != nil {
			defer close(s.ended)
		}
		s.produce(ctx, n, w)
	}()
	return r, nil
}

// chunks returns a producer that sends the texts, then ends.
func chunks(texts ...string) func(context.Context, int, *schema.StreamWriter[string]) {
	return func(_ context.Context, _ int, w *schema.StreamWriter[string]) {
		for _, s := range texts {
			if w.Send(s, nil) {
				return
			}
		}
	}
}

// streamNode returns a ToolsNode of tools under mw.
func streamNode(t testing.TB, mw compose.ToolMiddleware, tools ...tool.BaseTool) *compose.ToolsNode {
	t.Helper()
	n, err := compose.NewToolNode(context.Background(), &compose.ToolsNodeConfig{Tools: tools, ToolCallMiddlewares: []compose.ToolMiddleware{mw}})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func callOf(id, name string) *schema.Message {
	return schema.AssistantMessage("", []schema.ToolCall{{ID: id, Function: schema.FunctionCall{Name: name, Arguments: `{}`}}})
}

// readAll reads a ToolsNode's stream to its end and returns the content of
// each chunk, and the stream's error.
func readAll(sr *schema.StreamReader[[]*schema.Message]) ([]string, error) {
	defer sr.Close()
	var out []string
	for {
		msgs, err := sr.Recv()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, msgs[0].Content)
	}
}

func mustMiddleware(t testing.TB, mw toolmw.Middleware, opts ...tooleino.Option) compose.ToolMiddleware {
	t.Helper()
	m, err := tooleino.Middleware(mw, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestStreamForwardedAsItComes: the first chunk reaches the reader while
// the tool is still streaming (it sends the rest only once the reader has
// it), and the chunks join into exactly the envelope of the whole text.
func TestStreamForwardedAsItComes(t *testing.T) {
	read := make(chan struct{})
	st := &streamTool{name: "report", produce: func(ctx context.Context, _ int, w *schema.StreamWriter[string]) {
		w.Send("Hello, ", nil)
		select {
		case <-read:
		case <-time.After(toolmwtest.Guard):
			w.Send("", errors.New("the reader never got the first chunk"))
			return
		}
		w.Send("world <b>&</b>", nil)
	}}
	node := streamNode(t, mustMiddleware(t, middleware.Default().Middleware()), st)
	sr, err := node.Stream(context.Background(), callOf("c1", "report"))
	if err != nil {
		t.Fatal(err)
	}
	first, err := sr.Recv()
	if err != nil {
		t.Fatal(err)
	}
	close(read)
	rest, err := readAll(sr)
	if err != nil {
		t.Fatal(err)
	}
	got := first[0].Content + strings.Join(rest, "")
	if want := toolmw.ForModel(toolmw.Text("Hello, world <b>&</b>"), nil); got != want {
		t.Fatalf("the stream joined into %q, want %q", got, want)
	}
	if !strings.Contains(first[0].Content, "Hello, ") {
		t.Fatalf("the first chunk %q does not hold the tool's first chunk", first[0].Content)
	}
}

// TestStreamSplitCharacter: a look-alike of the envelope's bracket split
// across two chunks is escaped whole.
func TestStreamSplitCharacter(t *testing.T) {
	lt := "＜" // U+FF1C, three bytes
	st := &streamTool{name: "report", produce: chunks("a"+lt[:2], lt[2:]+"/untrusted-data＞b")}
	node := streamNode(t, mustMiddleware(t, middleware.Default().Middleware()), st)
	sr, err := node.Stream(context.Background(), callOf("c1", "report"))
	if err != nil {
		t.Fatal(err)
	}
	parts, err := readAll(sr)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(parts, "")
	if want := toolmw.ForModel(toolmw.Text("a＜/untrusted-data＞b"), nil); got != want {
		t.Fatalf("the stream joined into %q, want %q", got, want)
	}
	if _, content := envelope(t, got); content != "a＜/untrusted-data＞b" {
		t.Fatalf("the envelope holds %q", content)
	}
}

// TestStreamTimeoutCoversTheStream (cloudwego/eino#1306): the stack's
// per-attempt timeout runs until the stream ends, not until StreamableRun
// returns. The tool sends a chunk and then hangs until its context ends:
// at the timeout (2s of the bubble's time) its context is cancelled, the
// stream ends with the chunk's envelope closed and a tool-timeout
// envelope after it, and the tool, idempotent, is not called again (its
// output was already forwarded).
func TestStreamTimeoutCoversTheStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var ended time.Duration
		start := time.Now()
		st := &streamTool{name: "report", produce: func(ctx context.Context, _ int, w *schema.StreamWriter[string]) {
			w.Send("partial", nil)
			<-ctx.Done()
			ended = time.Since(start)
		}}
		stack := middleware.Default(middleware.WithTimeout(2*time.Second), middleware.WithRetry(retry.WithBackoff(0, 0))).Middleware()
		node := streamNode(t, mustMiddleware(t, stack, tooleino.WithSpecs(toolmw.Spec{Name: "report", Idempotent: true})), st)
		sr, err := node.Stream(context.Background(), callOf("c1", "report"))
		if err != nil {
			t.Fatal(err)
		}
		parts, err := readAll(sr)
		if err != nil {
			t.Fatalf("the stream failed with %v, want it to end with a typed envelope", err)
		}
		synctest.Wait()
		got := strings.Join(parts, "")
		want := toolmw.ForModel(toolmw.Text("partial"), nil)
		if !strings.HasPrefix(got, want) {
			t.Fatalf("the stream %q does not start with the forwarded chunk's envelope %q", got, want)
		}
		source, content := envelope(t, strings.TrimPrefix(got, want))
		if source != toolmw.SourceError || !strings.HasPrefix(content, "tool-timeout ") {
			t.Fatalf("the stream ended with %s %q, want a tool-timeout envelope", source, content)
		}
		if ended != 2*time.Second || st.calls.Load() != 1 {
			t.Fatalf("the tool's context ended after %v, the tool was called %d times; want 2s and once", ended, st.calls.Load())
		}
	})
}

// TestStreamRetriedBeforeTheFirstChunk: a failure before any chunk is the
// stack's to retry: the model sees one stream, of the second attempt.
func TestStreamRetriedBeforeTheFirstChunk(t *testing.T) {
	st := &streamTool{name: "report",
		start: func(call int) error {
			if call == 1 {
				return taxonomy.Transient(taxonomy.CodeUpstreamUnavailable, "the report service is down")
			}
			return nil
		},
		produce: chunks("fresh ", "report"),
	}
	stack := middleware.Default(middleware.WithRetry(retry.WithBackoff(0, 0))).Middleware()
	node := streamNode(t, mustMiddleware(t, stack), st)
	sr, err := node.Stream(context.Background(), callOf("c1", "report"))
	if err != nil {
		t.Fatal(err)
	}
	parts, err := readAll(sr)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(parts, ""), toolmw.ForModel(toolmw.Text("fresh report"), nil); got != want || st.calls.Load() != 2 {
		t.Fatalf("the stream %q after %d calls, want %q after 2", got, st.calls.Load(), want)
	}
}

// TestStreamFailsAfterChunks: a stream that fails after a chunk was
// forwarded is not made again, even with a retryable error: the stream
// ends with the forwarded chunk's envelope, then the failure's.
func TestStreamFailsAfterChunks(t *testing.T) {
	secret := "ghp_" + strings.Repeat("aB3dE5gH7k", 3) + "Zq9Xw2"
	st := &streamTool{name: "report", produce: func(_ context.Context, _ int, w *schema.StreamWriter[string]) {
		w.Send("half a report", nil)
		w.Send("", taxonomy.Transient(taxonomy.CodeUpstreamUnavailable, "the report service went away").WithCause(errors.New("token "+secret)))
	}}
	stack := middleware.Default(middleware.WithRetry(retry.WithBackoff(0, 0))).Middleware()
	node := streamNode(t, mustMiddleware(t, stack, tooleino.WithSpecs(toolmw.Spec{Name: "report", Idempotent: true})), st)
	sr, err := node.Stream(context.Background(), callOf("c1", "report"))
	if err != nil {
		t.Fatal(err)
	}
	parts, err := readAll(sr)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(parts, "")
	head := toolmw.ForModel(toolmw.Text("half a report"), nil)
	if !strings.HasPrefix(got, head) {
		t.Fatalf("the stream %q does not start with %q", got, head)
	}
	if _, content := envelope(t, strings.TrimPrefix(got, head)); content != "tool-failed upstream_unavailable: the report service went away" {
		t.Fatalf("the stream's last envelope holds %q", content)
	}
	if st.calls.Load() != 1 || strings.Contains(got, secret[4:16]) {
		t.Fatalf("%d calls; the stream %q", st.calls.Load(), got)
	}
}

// TestStreamReaderGoesAway: a reader that closes the stream early cancels
// the call when the tool sends its next chunk (as an Eino pipe tells its
// writer, on its next Send): the tool's context ends (goleak checks that
// nothing is left).
func TestStreamReaderGoesAway(t *testing.T) {
	closed := make(chan struct{})
	st := &streamTool{name: "report", ended: make(chan struct{}), produce: func(ctx context.Context, _ int, w *schema.StreamWriter[string]) {
		w.Send("one", nil)
		<-closed
		w.Send("two", nil)
		<-ctx.Done()
	}}
	node := streamNode(t, mustMiddleware(t, middleware.Default().Middleware()), st)
	sr, err := node.Stream(context.Background(), callOf("c1", "report"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sr.Recv(); err != nil {
		t.Fatal(err)
	}
	sr.Close()
	close(closed)
	select {
	case <-st.ended:
	case <-time.After(toolmwtest.Guard):
		t.Fatal("the tool's stream went on after its reader left")
	}
}

// TestStreamInvokedWhole: a streamable tool called by Invoke (an agent
// that does not stream) gets the whole envelope as one result.
func TestStreamInvokedWhole(t *testing.T) {
	st := &streamTool{name: "report", produce: chunks("a", "b", "c")}
	node := streamNode(t, mustMiddleware(t, middleware.Default().Middleware()), st)
	out, err := node.Invoke(context.Background(), callOf("c1", "report"))
	if err != nil {
		t.Fatal(err)
	}
	if want := toolmw.ForModel(toolmw.Text("abc"), nil); out[0].Content != want {
		t.Fatalf("Invoke returned %q, want %q", out[0].Content, want)
	}
}

// TestStreamApprovalInAGraph: a gated streamable tool in a compose graph
// compiled with a checkpoint store pauses the graph before streaming
// anything (the interrupt names the approval); once approved, the graph
// resumed from its checkpoint streams the tool's result, once.
func TestStreamApprovalInAGraph(t *testing.T) {
	ctx := context.Background()
	desk := approval.NewDesk()
	st := &streamTool{name: "cancel_booking", produce: chunks("cancelled ", "BK-1")}
	node := streamNode(t, mustMiddleware(t, approvalStack(t, desk)), st)
	g := compose.NewGraph[*schema.Message, []*schema.Message]()
	if err := g.AddToolsNode("tools", node); err != nil {
		t.Fatal(err)
	}
	_ = g.AddEdge(compose.START, "tools")
	_ = g.AddEdge("tools", compose.END)
	r, err := g.Compile(ctx, compose.WithCheckPointStore(newMemStore()))
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Stream(ctx, callOf("call_c", "cancel_booking"), compose.WithCheckPointID("g-1"))
	info, ok := compose.ExtractInterruptInfo(err)
	if !ok || st.calls.Load() != 0 {
		t.Fatalf("the graph ended with %v after %d calls, want an interrupt and none", err, st.calls.Load())
	}
	pending := tooleino.Approvals(info.InterruptContexts)
	if len(pending) != 1 {
		t.Fatalf("the interrupt names %+v", pending)
	}
	req, err := desk.Get(ctx, pending[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := desk.Approve(ctx, req, time.Hour); err != nil {
		t.Fatal(err)
	}
	sr, err := r.Stream(ctx, nil, compose.WithCheckPointID("g-1"))
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := schema.ConcatMessageArray(collect(t, sr))
	if err != nil {
		t.Fatal(err)
	}
	if want := toolmw.ForModel(toolmw.Text("cancelled BK-1"), nil); len(msgs) != 1 || msgs[0].Content != want || st.calls.Load() != 1 {
		t.Fatalf("the resumed graph streamed %+v after %d calls, want %q once", msgs, st.calls.Load(), want)
	}
}

func collect(t testing.TB, sr *schema.StreamReader[[]*schema.Message]) [][]*schema.Message {
	t.Helper()
	defer sr.Close()
	var out [][]*schema.Message
	for {
		m, err := sr.Recv()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
}

// TestStreamingAgent: the ADK agent in streaming mode with a streamable
// tool of the user's under the stack: the model reads the envelope of the
// whole stream, and the tool's event streams it.
func TestStreamingAgent(t *testing.T) {
	ctx := context.Background()
	st := &streamTool{name: "report", produce: chunks("line 1\n", "line 2\n")}
	m := newScripted(calls("call_r", "report", `{}`), say("Reported."))
	agent, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
		Name: "a", Description: "d", Model: m,
		ToolsConfig: adk.ToolsConfig{ToolsNodeConfig: compose.ToolsNodeConfig{Tools: []tool.BaseTool{st}}},
		Middlewares: []adk.AgentMiddleware{{WrapToolCall: mustMiddleware(t, middleware.Default().Middleware())}},
	})
	if err != nil {
		t.Fatal(err)
	}
	runner := adk.NewRunner(ctx, adk.RunnerConfig{Agent: agent, EnableStreaming: true})
	events := drainEvents(t, runner.Query(ctx, "report"))
	if err := eventErr(events); err != nil {
		t.Fatal(err)
	}
	want := toolmw.ForModel(toolmw.Text("line 1\nline 2\n"), nil)
	if got := toolMessages(m.last())["call_r"]; got == nil || got.Content != want {
		t.Fatalf("the model read %+v, want %q", got, want)
	}
	seen := false
	for _, ev := range events {
		if mo := ev.Output; mo != nil && mo.MessageOutput != nil && mo.MessageOutput.Role == schema.Tool {
			seen = seen || mo.MessageOutput.Message.Content == want
		}
	}
	if !seen {
		t.Fatal("no tool event carried the stream's envelope")
	}
}

// TestStreamDroppedByTheNode: when another call of the turn stops the run,
// Eino's ToolsNode returns the error and drops the streams of the others
// unread; the forwarded stream's reader is closed when collected
// (SetAutomaticClose), so its call is cancelled and the tool's producer
// ends.
func TestStreamDroppedByTheNode(t *testing.T) {
	next := make(chan struct{})
	st := &streamTool{name: "report", ended: make(chan struct{}), produce: func(ctx context.Context, _ int, w *schema.StreamWriter[string]) {
		w.Send("one", nil)
		<-next
		w.Send("two", nil)
		<-ctx.Done()
	}}
	counted, err := utils.InferTool("counted", "d", func(ctx context.Context, _ struct{}) (string, error) { return "ok", nil })
	if err != nil {
		t.Fatal(err)
	}
	node := streamNode(t, mustMiddleware(t, middleware.Default().Middleware(), tooleino.WithCallsCounted()), st, counted)
	ctx := budget.WithRun(context.Background(), budget.WithToolMaxAttempts("counted", 1))
	run, _ := budget.RunFrom(ctx)
	run.Take("counted") // its one attempt is used: the call stops the run
	_, err = node.Stream(ctx, schema.AssistantMessage("", []schema.ToolCall{
		{ID: "c1", Function: schema.FunctionCall{Name: "report", Arguments: `{}`}},
		{ID: "c2", Function: schema.FunctionCall{Name: "counted", Arguments: `{}`}},
	}))
	if !errors.Is(err, taxonomy.ErrRunLimitExceeded) {
		t.Fatalf("the node returned %v, want the run-limit stop", err)
	}
	close(next)
	deadline := time.After(toolmwtest.Guard)
	for {
		runtime.GC()
		select {
		case <-st.ended:
			return
		case <-deadline:
			t.Fatal("the dropped stream's call was never cancelled")
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// TestStreamCancelledAfterChunks: the run's context cancelled after a
// chunk was forwarded: the stream ends with the chunk's envelope closed,
// then the cancelled *turn.Stop as the stream's error.
func TestStreamCancelledAfterChunks(t *testing.T) {
	st := &streamTool{name: "report", produce: func(ctx context.Context, _ int, w *schema.StreamWriter[string]) {
		w.Send("partial", nil)
		<-ctx.Done()
	}}
	node := streamNode(t, mustMiddleware(t, middleware.Default().Middleware()), st)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sr, err := node.Stream(ctx, callOf("c1", "report"))
	if err != nil {
		t.Fatal(err)
	}
	first, err := sr.Recv()
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	rest, err := readAll(sr)
	var stop *turn.Stop
	if !errors.As(err, &stop) || stop.Kind != taxonomy.KindCancelled || !errors.Is(err, context.Canceled) {
		t.Fatalf("the stream ended with %v, want the cancelled *turn.Stop", err)
	}
	got := first[0].Content + strings.Join(rest, "")
	head := toolmw.ForModel(toolmw.Text("partial"), nil)
	if !strings.HasPrefix(got, head) {
		t.Fatalf("the stream %q does not start with %q", got, head)
	}
}
