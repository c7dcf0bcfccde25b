// Package eino connects toolmw to CloudWeGo Eino
// (github.com/cloudwego/eino, v0.7.36): a Toolbox's tools as Eino tools,
// and a toolmw stack around the Eino tools a program has already, both run
// by Eino's own ToolsNode — in an ADK agent (adk.NewChatModelAgent and
// adk.Runner), the react agent, or a compose graph of your own.
//
// # Definitions
//
// [New] renders the box's tools once as Eino tools ([Tools.BaseTools]):
// name, description and parameters, the input schema in toolmw's
// schema.Plain profile (or the one of [WithProfile]) without "$schema",
// as Eino's ParamsOneOf. Keywords Eino's schema type has no field for
// (Gemini's "nullable", an empty "required") are kept, so the schema
// reaches the chat model as the profile made it; one it cannot keep (an
// integer past float64's precision) makes New fail with a
// tool-definition-invalid error naming the tool. [Tools.NodeConfig] is a
// compose.ToolsNodeConfig of the tools with [UnknownTool] as its handler of
// calls of tools the agent does not have.
//
// # Dispatch
//
// Eino's ToolsNode runs one model turn's calls at once, each on its own;
// each call reaches the box (or the stack of [Middleware]) through
// turn.Run, with Eino's call id (compose.GetToolCallID, or
// compose.ToolInput.CallID) as toolmw's call id, and the run's context, so
// cancellation reaches the tool. A tool's panic (one the stack's recovery
// layer did not turn into an error) is re-raised where Eino called the
// tool, as if the tool itself had panicked — or, once a stream of it was
// forwarded, ends that stream with a tool-failed/tool_panicked envelope;
// a tool that calls runtime.Goexit ends its call as
// tool-failed/tool_exited.
//
// What the model is shown is toolmw.ForModel's text: a result, or a
// failure, typed and wrapped as untrusted data, as the tool's result — the
// run goes on, and the model can act on it. Eino's own default path for a
// tool's error ends the run with the error's raw text; no raw error text
// of a call reaches the model, the run's messages or events, or Eino's
// callbacks of the ToolsNode and the graph. (A user's own tool under
// [Middleware] is the exception for its own component callbacks: Eino
// calls them inside the tool-call middleware, with the tool's own error.)
//
// # Stops and pauses
//
// Each call ends in its answer, or in one of these errors, by
// turn.StopOf of its one answer:
//
//   - approval-pending (the approval layer holds the call for a person's
//     decision): an Eino interrupt (tool.StatefulInterrupt), so the graph
//     pauses and, with a checkpoint store, saves its checkpoint. Its info
//     is an [*Approval] (read them with [Approvals] from
//     adk.InterruptInfo.InterruptContexts, or from
//     compose.ExtractInterruptInfo's): the approval id for approval.Desk.
//     Resuming (adk.Runner.Resume, or the graph invoked again with its
//     checkpoint id) makes the same call again — Eino reruns only the
//     paused calls of the turn, the others' results come from the
//     checkpoint — with the same call id and the same idempotency key, kept
//     in the interrupt's state, so it finds its request in every process:
//     approved, the tool runs once; still pending, the run pauses again on
//     the same request; denied, the model is told. The key is derived from
//     the run's id, the tool and the call id when the context carries a
//     run with an id (budget.WithRun with budget.WithID), else made at
//     random when the call is first made; a context without a run gets one
//     for the call, so that the approval layer can file its request.
//     Without a checkpoint store Eino cannot resume: the interrupt ends
//     the run. (The react agent of flow/agent/react compiles its graph
//     without one: add its ExportGraph to a graph compiled with
//     compose.WithCheckPointStore.)
//   - cancelled (the context is done), run-limit-exceeded (the run budget
//     refused the call) and circuit-open (its tool's circuit is open): a
//     *turn.Stop, which ends Eino's run. errors.As(err, &stop) sees it
//     through Eino's wrapping, in what compose's Invoke returns and in an
//     ADK run's error event; errors.Is(err, context.Canceled) and
//     taxonomy.InfoOf see through the Stop. As Eino runs the calls of a
//     turn on their own, one call's Stop ends the run even when another
//     call of the turn could run.
//
// An Eino interrupt that a user's own tool returns itself passes through
// the stack untouched: not retried, not counted against a breaker, not
// shown to the model.
//
// # Results with parts
//
// By default every answer is text: a result's images, audio and files are
// toolmw.ForModel's descriptors of them. Under [WithMultimodal] the box's
// tools are Eino enhanced tools (tool.EnhancedInvokableTool), whose
// results reach the chat model as a tool message's multimodal parts
// (schema.ToolResult): text and JSON parts enveloped, images (png, jpeg,
// gif, webp) as image parts and PDFs as file parts — base64 of bytes that
// are what their type says, or an http(s) URL — within the limits given
// (default [DefaultMediaLimits]), and every other part its descriptor, as
// package turn's Media decides; the limits hold per call, as Eino answers
// each call on its own. Give it only when the chat model sends multimodal
// tool messages to its API. The ADK emits no tool event for an enhanced
// tool (v0.7.36: its event collector handles the invokable and streamable
// kinds only); the model still gets the result. The user's own enhanced
// tools under [Middleware] stay multimodal: their parts go through the
// stack as toolmw parts (a video as a file) and back the same way.
//
// # The user's own tools
//
// [Middleware] is a compose.ToolMiddleware for a ToolsNode
// (ToolCallMiddlewares) or an ADK agent (adk.AgentMiddleware.WrapToolCall)
// that runs each call of the Eino tools there through a toolmw stack,
// wrapped once per tool name ([WithSpecs] declares them; [WithMaxTools]
// bounds the names kept), with the same rules as the box's tools. It
// wraps every tool of the node, the ADK's own transfer_to_agent and exit
// tools included; give a stack to which that is right, and never to a node
// of the tools of [New], which run through their box already.
//
// A tool of your own that pauses the run itself (tool.Interrupt) and is
// also held by the approval layer sees, when resumed after its approval,
// that it was interrupted: tool.GetInterruptState reports the adapter's
// pause at the call's address. Such a tool tells its own pause by its own
// state (hasState with its own type), not by wasInterrupted alone.
//
// # Streams
//
// A user's own tool.StreamableTool under [Middleware]: the stack's Tool —
// and so its timeout, which cloudwego/eino#1306 asks to cover the
// stream — does not return until the tool's stream ends, while each chunk
// is forwarded to Eino's reader as it comes. Exactly:
//
//   - The chunks are forwarded as the text of one untrusted-data envelope,
//     escaped as toolmw.ForModel escapes (a character split across two
//     chunks is held back until it is whole): the first chunk opens it,
//     and it is closed when the stack is done with the call, so a stream
//     that succeeds joins into exactly toolmw.ForModel's text of its
//     whole output.
//   - Before the first chunk nothing is forwarded: a failure there (of
//     StreamableRun, or of the stream) is the stack's, retried or typed as
//     for any call; a call that ends before any chunk is answered as an
//     invokable one (one envelope, or its pause or stop).
//   - Once a chunk was forwarded the tool is never called again for the
//     call: an attempt the stack makes after that (a retry, a hedge) ends
//     at once with the first attempt's failure, final (or, while that
//     attempt still streams, tool-failed/stream_in_progress). When the call fails after
//     forwarding — the stream's error, the timeout, a result layer that
//     refuses the whole output — the stream ends with the forwarded
//     chunks' envelope closed and the failure's envelope after it; when a
//     stop ends the run (cancellation), the stream's last item is the
//     *turn.Stop as its error.
//   - What the stack changes in a result after it was forwarded (the
//     redact layer's WithResults scrubbing, a fallback's substitute)
//     cannot reach what was streamed: a substitute follows as an envelope
//     of its own, scrubbing does not apply to forwarded chunks.
//   - A stream that does not end when its context does is read on a
//     goroutine that ends when the stream's next Recv returns; the call
//     itself ends at its deadline. A reader that closes the stream
//     cancels the call at the tool's next chunk (as an Eino pipe tells its
//     writer, on its next Send); so does a reader Eino drops unread (its
//     ToolsNode does when another call of the turn fails), once the
//     garbage collector finds it (schema.StreamReader.SetAutomaticClose).
//
// A user's enhanced streamable tool is read whole inside the stack (its
// timeout covers the stream) and answered as one result. A stream that
// Eino reads with Invoke (an agent not in streaming mode) is joined by
// Eino into one answer: the same envelope.
//
// # Checkpoints
//
// The interrupt's info and state are gob-encoded in Eino's checkpoint
// under the names "toolmw_eino_approval" and "toolmw_eino_pause": keep
// them registered (importing this package does) in every process that
// resumes. A checkpoint is trusted state: whoever can write it chooses the
// key a resumed call is made with.
//
// # Go 1.26
//
// Eino v0.7.36 requires github.com/bytedance/sonic v1.14.1, which does
// not build with Go 1.26 (its internal/rt has no map iterator for it);
// this module requires sonic v1.15.5, which does, so a program that
// requires this module gets it (or later) by minimal version selection.
//
// Everything here is safe for concurrent use: a [Tools] and a [Middleware]
// may serve many runs at once, each with its own context (and run budget).
package eino
