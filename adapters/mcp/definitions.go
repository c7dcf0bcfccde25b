package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw/adapters/mcp/internal/wire"
	"github.com/toolmw/toolmw/scrub"
	"github.com/toolmw/toolmw/taxonomy"
)

// A remote server's tool definitions are untrusted input: its names,
// titles and descriptions, and the descriptions in its input schemas, reach
// the model. A Remote scrubs them, and records their digest, so that a
// later listing that changes them (a "rug pull": a tool approved with one
// description and then served with another) is refused.

// The codes of a Remote's definition errors (tool-definition-invalid).
const (
	// CodeDefinitionsChanged: the server's tool definitions are not the
	// pinned ones ([WithPin]), or changed since the Remote recorded them.
	CodeDefinitionsChanged = "definitions_changed"
	// CodeToolListTooLarge: the server's tool list is over the bound of
	// [LimitTransport].
	CodeToolListTooLarge = "tool_list_too_large"
	// CodeTooManyTools: the server lists more than [MaxTools] tools, or
	// pages without end.
	CodeTooManyTools = "too_many_tools"
)

// DefinitionChange reports a listing whose definitions are not the
// recorded ones: at NewRemote against [WithPin]'s digest, or later
// ([Remote.Verify], a reconnection) against the digest the Remote
// recorded. Names are the model names of the tools (names in which a
// secret shows are given as tool_<hash>), never the server's text.
type DefinitionChange struct {
	Recorded string   // the digest expected: pinned, or recorded at NewRemote
	Listed   string   // the digest of the listing refused
	Added    []string // tools listed now and not before (none when only a pin was known)
	Removed  []string // tools listed before and not now
	Changed  []string // tools whose definition changed
}

// WithPin makes NewRemote refuse a server whose tool definitions do not
// have the digest given ([Remote.Digest] of a listing you reviewed):
// tool-definition-invalid/definitions_changed, reported to
// [WithOnDefinitionChange]. A digest is "sha256:" and 64 hex digits; any
// other non-empty value is an option_invalid error. "" (the default) pins
// nothing: the Remote records the first listing's digest and holds later
// listings to it.
func WithPin(digest string) RemoteOption {
	return func(o *remoteOptions) {
		if digest != "" && !validDigest(digest) {
			o.reject("WithPin: want \"sha256:\" and 64 hex digits")
			return
		}
		o.pin = digest
	}
}

// WithOnDefinitionChange sets a callback told of every listing refused
// because its definitions changed ([DefinitionChange]), on the goroutine
// that listed (NewRemote's, [Remote.Verify]'s, or the call's that
// reconnected), outside every lock; a panic in it is dropped. nil means
// none (the default).
func WithOnDefinitionChange(f func(DefinitionChange)) RemoteOption {
	return func(o *remoteOptions) { o.onChange = f }
}

func validDigest(d string) bool {
	h, ok := strings.CutPrefix(d, "sha256:")
	if !ok || len(h) != 64 {
		return false
	}
	_, err := hex.DecodeString(h)
	return err == nil && strings.ToLower(h) == h
}

// definitions are the digests of a listing: of each tool by its MCP name,
// and of the whole.
type definitions struct {
	tools  map[string]string // MCP name → digest of its definition
	digest string            // "sha256:…" of the whole listing
}

// definedBy is what of a tool the digest covers: what reaches the model or
// decides how a call is made. _meta and icons are left out.
type definedBy struct {
	Name         string               `json:"name"`
	Title        string               `json:"title,omitempty"`
	Description  string               `json:"description,omitempty"`
	InputSchema  any                  `json:"inputSchema"`
	OutputSchema any                  `json:"outputSchema,omitempty"`
	Annotations  *sdk.ToolAnnotations `json:"annotations,omitempty"`
}

// digestOf returns the digests of a listing, as the server sent it (before
// scrubbing). Each tool is encoded as JSON with its object keys sorted;
// the whole is the SHA-256 of the tools' digests in the order of their
// names, so the server's order does not count.
func digestOf(listed []*sdk.Tool) definitions {
	d := definitions{tools: make(map[string]string, len(listed))}
	for _, t := range listed {
		b, err := json.Marshal(definedBy{t.Name, t.Title, t.Description, t.InputSchema, t.OutputSchema, t.Annotations})
		if err != nil {
			b = []byte(fmt.Sprintf("unencodable %q", t.Name))
		}
		sum := sha256.Sum256(b)
		d.tools[t.Name] = hex.EncodeToString(sum[:])
	}
	names := make([]string, 0, len(d.tools))
	for n := range d.tools {
		names = append(names, n)
	}
	slices.Sort(names)
	h := sha256.New()
	for _, n := range names {
		fmt.Fprintf(h, "%d:%s%s\n", len(n), n, d.tools[n])
	}
	d.digest = "sha256:" + hex.EncodeToString(h.Sum(nil))
	return d
}

// change describes how now differs from before (before.tools is nil when
// only a pinned digest is known).
func (r *Remote) change(before, now definitions) DefinitionChange {
	c := DefinitionChange{Recorded: before.digest, Listed: now.digest}
	for n, d := range now.tools {
		switch old, ok := before.tools[n]; {
		case before.tools == nil:
		case !ok:
			c.Added = append(c.Added, r.reportName(n))
		case old != d:
			c.Changed = append(c.Changed, r.reportName(n))
		}
	}
	for n := range before.tools {
		if _, ok := now.tools[n]; !ok {
			c.Removed = append(c.Removed, r.reportName(n))
		}
	}
	slices.Sort(c.Added)
	slices.Sort(c.Removed)
	slices.Sort(c.Changed)
	return c
}

// reportName is the name a report gives the MCP tool n: its model name.
func (r *Remote) reportName(n string) string { return r.modelName(n) }

// errDefinitionsChanged refuses a listing whose definitions changed.
var errDefinitionsChanged = taxonomy.New(taxonomy.KindDefinitionInvalid, taxonomy.Declare(CodeDefinitionsChanged),
	"the MCP server's tool definitions are not the ones recorded for it; its tools are not used")

// refuse reports c and returns the error that refuses the listing.
func (r *Remote) refuse(c DefinitionChange) error {
	if f := r.o.onChange; f != nil {
		func() {
			defer func() { _ = recover() }()
			f(c)
		}()
	}
	return errDefinitionsChanged
}

// Digest returns the digest of the tool definitions the Remote serves, as
// the server listed them (before scrubbing): "sha256:" and 64 hex digits.
// Pin it with [WithPin] to refuse a server whose definitions differ from
// the ones reviewed.
func (r *Remote) Digest() string { return r.defs.digest }

// Verify lists the server's tools again and compares their definitions
// with those the Remote recorded. A change is refused: Verify returns
// tool-definition-invalid/definitions_changed, reports it to
// [WithOnDefinitionChange], and every later call of the Remote's tools
// fails with the same error, for the tools the model was shown are no
// longer the server's. Call it when the server notifies that its tool list
// changed (the go-sdk client's ToolListChangedHandler). A listing that
// cannot be made returns its error and changes nothing. The listing is
// bounded as NewRemote's is.
func (r *Remote) Verify(ctx context.Context) error {
	if ctx == nil {
		return optionError("Verify: the context is nil")
	}
	cs, err := r.session(ctx)
	if err != nil {
		return err
	}
	return r.verify(ctx, cs)
}

// verify lists the tools of cs and holds them to the recorded definitions.
func (r *Remote) verify(ctx context.Context, cs *sdk.ClientSession) error {
	listed, err := r.list(ctx, cs)
	if err != nil {
		return err
	}
	now := digestOf(listed)
	if now.digest == r.defs.digest {
		return nil
	}
	r.mu.Lock()
	r.changed = true
	r.mu.Unlock()
	return r.refuse(r.change(r.defs, now))
}

// untrusted returns a copy of a listed tool with what reaches the model
// scrubbed: title, description, annotations' title, and the descriptive
// keywords of its schemas (description, title, $comment, examples,
// default), at any depth. What decides validation (types, properties,
// enum, const, pattern, …) is kept as listed. The name is kept: it is what
// calls are made with; the model is shown a model name (see modelName).
func untrusted(t *sdk.Tool) *sdk.Tool {
	c := *t
	c.Title = scrub.String(strings.ToValidUTF8(t.Title, "\uFFFD"))
	c.Description = scrub.String(strings.ToValidUTF8(t.Description, "\uFFFD"))
	if t.Annotations != nil {
		a := *t.Annotations
		a.Title = scrub.String(strings.ToValidUTF8(a.Title, "\uFFFD"))
		c.Annotations = &a
	}
	c.InputSchema = scrubSchema(t.InputSchema)
	c.OutputSchema = scrubSchema(t.OutputSchema)
	return &c
}

// describing are the schema keywords whose values are text for readers.
var describing = map[string]bool{"description": true, "title": true, "$comment": true, "examples": true, "default": true}

// scrubSchema returns a copy of a decoded schema with the values of its
// describing keywords scrubbed (every string in them), at any depth.
func scrubSchema(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			if describing[k] {
				out[k] = scrubStrings(x)
			} else {
				out[k] = scrubSchema(x)
			}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = scrubSchema(x)
		}
		return out
	case json.RawMessage:
		var d any
		if json.Unmarshal(v, &d) != nil {
			return v
		}
		return scrubSchema(d)
	}
	return v
}

// scrubStrings returns a copy of v with every string in it scrubbed.
func scrubStrings(v any) any {
	switch v := v.(type) {
	case string:
		return scrub.String(strings.ToValidUTF8(v, "\uFFFD"))
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = scrubStrings(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = scrubStrings(x)
		}
		return out
	}
	return v
}

// maxNameScan is the longest MCP name whose parts are searched for
// secrets; a longer one gets a hashed model name.
const maxNameScan = 128

// modelName returns the model name of the MCP tool n: WithNames' mapping
// when given, else ModelName with the prefix, unless a secret shows in n
// (a token, even glued to a word; see wire.SafeName) or n is too long to
// search: then the prefix, "tool_" and 8 hex digits of n's SHA-256.
func (r *Remote) modelName(n string) string {
	if r.o.names != nil {
		return r.o.names(n)
	}
	name := wire.ModelName(r.o.prefix, n)
	if len(n) > maxNameScan || wire.SecretIn(n) || wire.SecretIn(name) {
		sum := sha256.Sum256([]byte(n))
		return r.o.prefix + "tool_" + hex.EncodeToString(sum[:4])
	}
	return name
}

// quote returns an MCP name as an error message may quote it.
func quote(n string) string {
	if len(n) > maxNameScan || wire.SecretIn(n) {
		return "[withheld]"
	}
	return truncate(scrub.String(strings.ToValidUTF8(n, "\uFFFD")), 128)
}
