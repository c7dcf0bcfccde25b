package tracing

import (
	"context"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/scrub"
)

// cutMark ends a value the layer cut to its bound.
const cutMark = "…"

// clean returns s scrubbed whole by sc, as valid UTF-8, then cut to at most
// n bytes. Scrubbing comes first, so a secret that straddles the cut is
// still found whole; the cut falls on a character boundary and ends in
// cutMark.
func clean(sc *scrub.Scrubber, s string, n int) string {
	s = sc.String(s)
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if len(s) <= n {
		return s
	}
	cut := n - len(cutMark)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + cutMark
}

// resultText is what gen_ai.tool.call.result shows of a result: its
// Content, then the text of each part that has text (a text part's, a JSON
// part's document, an embedded resource's text), one per line. Binary
// parts, names and URIs are left out: toolmw.result.part_descriptions
// describes every part.
func resultText(res toolmw.Result) string {
	parts := res.Parts()
	if len(parts) == 0 {
		return res.Content
	}
	var b strings.Builder
	b.WriteString(res.Content)
	for _, p := range parts {
		if p.Text == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(p.Text)
	}
	return b.String()
}

// agentKey is the context key of ContextWithAgent.
type agentKey struct{}

// ContextWithAgent returns a context whose tool calls the layer attributes
// to the agent named: gen_ai.agent.name on their spans and metrics, over
// [WithAgentName]. Set it where an agent's run starts, for a bounded set of
// names (the metrics get one series per name). "" means no agent for
// those calls; a name that is not valid ([ValidAgentName]) is written as
// [OtherCode], never as given.
func ContextWithAgent(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, agentKey{}, name)
}

// ValidAgentName reports whether name can be a gen_ai.agent.name: 1 to
// [MaxAgentNameBytes] bytes of valid UTF-8 without control characters, in
// which the default scrubber finds nothing. Human-readable names such as
// "Math Tutor" are valid.
func ValidAgentName(name string) bool {
	if name == "" || len(name) > MaxAgentNameBytes || !utf8.ValidString(name) {
		return false
	}
	for _, r := range name {
		if unicode.IsControl(r) {
			return false
		}
	}
	return scrub.String(name) == name
}

// agentOf returns the agent name given for a call, as given: the
// context's, else the option's; "" for none. newLabels checks it.
func (c *config) agentOf(ctx context.Context) string {
	if name, ok := ctx.Value(agentKey{}).(string); ok {
		return name
	}
	return c.agent
}

// agentName returns what the layer writes as gen_ai.agent.name for the
// name given: "" for none, the name when it is valid, OtherCode otherwise.
func agentName(given string) string {
	if given == "" || ValidAgentName(given) {
		return given
	}
	return OtherCode
}
