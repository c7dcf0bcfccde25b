// Package genkit connects toolmw to Genkit Go (github.com/firebase/genkit/go,
// v1.13): a toolmw Toolbox's tools offered to Genkit's generate loop, and
// a toolmw stack around the Genkit tools an application already has. Both
// are Genkit middleware (ai.Middleware), passed to ai.WithUse; import the
// package as toolgenkit.
//
//	tools, err := toolgenkit.New(box)
//	resp, err := genkit.Generate(ctx, g, ai.WithPrompt(q), ai.WithUse(tools))
//
// # Definitions
//
// [New] renders the box's tools once, their input schemas in the profile
// of [WithProfile]: schema.Gemini by default, the dialect of the
// googlegenai and vertexai plugins (constraints Gemini lacks move into the
// descriptions rather than being dropped by the plugin's conversion);
// schema.Plain for the plugins that pass JSON Schema on (compat_oai,
// anthropic, ollama). No schema carries a "$schema". Each generation gets
// the tools as its own values (ai.Hooks.Tools), registered in that
// generation's registry: Genkit writes to a tool when it registers it, so
// one value shared by concurrent generations would race.
//
// # Dispatch
//
// Genkit runs the calls of a turn at once, one goroutine each. Each call of
// a box tool goes through the box with the tool request's ref as its call
// id (toolmw.WithCallID; Genkit gives a request without a ref a UUID, which
// the layers see as toolmw.SafeCallID makes it). Genkit does not check the
// arguments against the schema first: the box does, and answers
// tool-args-invalid. What comes back is a tool response whose output is
// toolmw.ForModel's text — a result, or a failure wrapped as untrusted
// data — never an error: Genkit ends the whole generation on a tool's
// error (ai.ErrToolFailed), and its messages and logs would carry the
// error's text.
//
// A call naming a tool the generation did not offer is answered
// tool-not-found: a name Genkit cannot find (it would fail the generation
// with ai.ErrToolNotFound), and a tool registered on the Genkit instance
// but not offered (Genkit would run it). Genkit looks a tool up before any
// hook runs, so the Tools answers these by registering, once the model has
// asked (Hooks.WrapModel), a tool of that name in the generation's
// registry; it needs the box to have at least one tool, whose registration
// hands it that registry.
//
// # Results with parts
//
// A result's images (png, jpeg, gif, webp) and PDFs go in the tool
// response's content as media parts (data URLs, or http(s) URLs without
// credentials), when their bytes are what their type says, at most 7 MiB
// of base64 a call; the output still holds the envelope, which describes
// every part. Gemini reads media in a function response; plugins that do
// not read the envelope. Everything else a result holds is in the
// envelope only.
//
// # Stops and pauses
//
// A call that waits for a person's approval (the approval layer's
// approval-pending) pauses the generation the Genkit way: the call is a
// tool interrupt (ai.NewToolInterruptError), genkit.Generate returns with
// FinishReason "interrupted" and the call among resp.Interrupts(), and
// [Pending] gives its approval id. The application saves the conversation
// (resp.History(), as JSON), a reviewer decides (approval.Desk), and the
// generation resumes — in the same process or after a restart — with
// ai.WithMessages(history...) and ai.WithToolRestarts([Restarts](history)...),
// in a context with the same run id (budget.WithID): the same call finds
// its decision and runs once if approved. The other calls of the paused
// turn are not run again: Genkit keeps their responses in the interrupted
// message.
//
// Any other reason to stop — the context is done, the run budget has no
// attempt left for the tool, the tool's circuit is open — ends the
// generation: genkit.Generate returns an error that wraps the [*Stop]
// (errors.As finds it; ai.ErrToolFailed, or a cancellation). Genkit runs
// a turn's calls separately, so these rules hold per call: one call that
// meets an open circuit ends the generation though its siblings ran.
//
// # The application's own Genkit tools
//
// [Wrap] returns a middleware whose WrapTool hook runs every Genkit tool
// of a generation through a toolmw stack — one instance of the stack per
// tool name, kept across generations — with the tool request's ref as the
// call id, and the same rules: failures become tool responses, approvals
// interrupts, stops errors. A tool's own interrupt (ToolContext.Interrupt)
// passes through the stack (as tool-cancelled/tool_interrupted, which no
// layer retries) to Genkit untouched. A tool registered but not offered is
// answered tool-not-found. A Genkit tool whose name toolmw does not take
// (Genkit allows dots and slashes) is answered tool-definition-invalid
// rather than run past the stack. Genkit's own span of a wrapped tool,
// and its debug log line for that span, record the tool's error as the
// tool returned it, before the stack sees it; the model and the
// conversation never do.
//
// Tools from New are left to their box's stack. A call of a tool that
// does not exist never reaches a WrapTool hook, so a Wrapper alone cannot
// answer it; with a Tools in the same generation (ai.WithUse(tools,
// wrapper)) it is answered.
//
// Panics: the default stack's recovery layer turns a tool's panic into
// tool-failed/tool_panicked; without it a panic propagates, and Genkit,
// which runs each call on a goroutine of its own, does not recover it.
//
// Everything here is safe for concurrent use. examples/agent runs a
// generation with a pause for approval, offline, on a scripted model.
package genkit
