// Package panicked holds the one error toolmw makes of a tool that
// panicked, so that every layer reporting a panic reports the same one.
package panicked

import "github.com/toolmw/toolmw/taxonomy"

// Message is the fixed message of [Err]. The panic value may hold anything
// (arguments, tokens, a customer's data), so it never reaches the error.
const Message = "the tool panicked"

// Err is the error of a call whose tool panicked: tool-failed/tool_panicked,
// permanent, without a cause. It is immutable and safe for concurrent use;
// toolmw.Wrap names the tool in a copy.
var Err = taxonomy.Failure(taxonomy.CodeToolPanicked, Message)

// Exited is the error of a call whose tool called runtime.Goexit, where a
// layer ran the tool on a goroutine of its own and could see it:
// tool-failed/tool_exited, permanent.
var Exited = taxonomy.Failure(taxonomy.CodeToolExited, "the tool ended its goroutine (runtime.Goexit)")
