package toolmw

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"sync/atomic"

	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/internal/runstate"
	"github.com/toolmw/toolmw/scrub"
	"github.com/toolmw/toolmw/taxonomy"
)

// Call describes one call of a tool, as the layers and the tool itself see it
// through [CallFrom].
type Call struct {
	Tool string // the tool's name
	ID   string // the model's call id, set with WithCallID, as [SafeCallID] makes it; may be ""
	// Idempotent reports whether repeating the call is safe: the Spec
	// declares the tool Idempotent, or declares that it honours idempotency
	// keys ([Spec.HonoursKeys]). Every layer that decides on idempotency
	// (classify, timeout, retry, hedge, dedupe) reads it. Whether a call is
	// a read is Spec.Idempotent alone: a fallback serves a remembered
	// result only to a read, since a tool that honours keys acts.
	Idempotent bool
	Attempt    int   // the current attempt, from 1; retry layers advance it
	Spec       *Spec // the full spec; shared and read-only
	// Fallback names what stood in for the tool's own result, set by a
	// fallback layer with [SetFallback] ("last_good", "function"); "" when
	// the result, if any, is the tool's.
	Fallback string
	// Degraded names the layer that decided this call on local state
	// because its shared store (a fleet's Redis, say) failed or did not
	// answer in time, set with [SetDegraded] ("breaker", "ratelimit",
	// "retry_budget", "run_budget", "runlimit", "spend", "dedupe", "cache");
	// "" when none did.
	Degraded string
	// Cache is what a cache layer found for the call, set with [SetCache]:
	// "hit" (the result is a kept one; the tool was not called), "miss" or
	// "bypass" (the tool was called); "" when no cache looked.
	Cache string
	// Chaos names what a chaos layer injected into the call, set with
	// [SetChaos] ("failure", "latency", "timeout", "panic",
	// "malformed_result", "oversized_result", "store_failure",
	// "store_latency"); "" when nothing was. Only observers read it (the
	// tracing layer marks the span): every other layer treats an injected
	// fault as the real one it stands for.
	Chaos string

	c *callCtx // the call's record, for Key
}

// Key returns the call's idempotency key: the same string for every attempt
// and hedge of the call, and for a repeat of the call in the same run; a
// different one for a different call. A tool that honours keys sends it
// upstream, typically as an Idempotency-Key header. See [WithIdempotencyKey]
// for how it is made. It is "" only for a Call not obtained from
// [CallFrom].
//
// The key is made on first use (a hash, or random bytes), so a call that
// never asks for it pays nothing.
func (c Call) Key() string {
	if c.c == nil {
		return ""
	}
	return c.c.key()
}

type ctxKey int

const (
	callKey ctxKey = iota
	callIDKey
	idemKey
)

// callCtx is the context of one call through a Wrap'd tool: the parent plus
// the call's record, in one allocation.
type callCtx struct {
	context.Context
	spec    *Spec
	id      string
	attempt atomic.Int32
	ikey    atomic.Pointer[string] // the idempotency key, once made
	notes   atomic.Pointer[notes]  // what layers noted of the call, once one did
}

// notes are what layers record of a call for the observers outside them;
// rarely written, so one pointer (the call record stays one 64-byte
// allocation) replaced whole on each write.
type notes struct {
	fallback string // what stood in for the result
	degraded string // the layer that fell back from its store to local state
	cache    string // what a cache found
	chaos    string // what a chaos layer injected
}

// note records what set changes in the call's notes.
func (c *callCtx) note(set func(*notes)) {
	for {
		old := c.notes.Load()
		n := notes{}
		if old != nil {
			n = *old
		}
		set(&n)
		if c.notes.CompareAndSwap(old, &n) {
			return
		}
	}
}

func (c *callCtx) Value(key any) any {
	if key == any(callKey) {
		return c
	}
	return c.Context.Value(key)
}

// WithCallID returns a context that gives the next call through a Wrap'd
// tool the model's call id, so telemetry and events can name it. The id is
// data from the model: the Call carries it as [SafeCallID] makes it. Keep
// the original to answer the model.
func WithCallID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, callIDKey, id)
}

// CallFrom returns the Call carried by ctx, and whether there is one: a
// context inside a tool made by [Wrap] always carries one.
func CallFrom(ctx context.Context) (Call, bool) {
	c, ok := ctx.Value(callKey).(*callCtx)
	if !ok {
		return Call{}, false
	}
	var n notes
	if p := c.notes.Load(); p != nil {
		n = *p
	}
	return Call{
		Tool:       c.spec.Name,
		ID:         c.id,
		Idempotent: c.spec.Idempotent || c.spec.HonoursKeys,
		Attempt:    int(c.attempt.Load()),
		Spec:       c.spec,
		Fallback:   n.fallback,
		Degraded:   n.degraded,
		Cache:      n.cache,
		Chaos:      n.chaos,
		c:          c,
	}, true
}

// SetFallback records that a substitute, named by source, stood in for the
// result of the call carried by ctx: the observers outside the fallback
// layer (tracing, logging) read it through CallFrom once the call returns,
// so a served substitute is not taken for the tool's answer. source is a
// name, not data: one that is not a well-formed code (lower-case words
// joined by underscores, see taxonomy.ValidCode) is recorded as "other".
// It does nothing when ctx carries no call.
func SetFallback(ctx context.Context, source string) {
	if c, ok := ctx.Value(callKey).(*callCtx); ok {
		c.note(func(n *notes) { n.fallback = name(source) })
	}
}

// SetDegraded records that layer decided the call carried by ctx on its
// local state because its shared store failed or did not answer in time
// (the layers with a store port call it as they fall back): the observers
// outside (tracing, logging) read it through CallFrom once the call
// returns, so a fleet running on local state shows in its spans and logs.
// layer is a name, like SetFallback's source. It does nothing when ctx
// carries no call.
func SetDegraded(ctx context.Context, layer string) {
	if c, ok := ctx.Value(callKey).(*callCtx); ok {
		c.note(func(n *notes) { n.degraded = name(layer) })
	}
}

// SetCache records what a cache layer found for the call carried by ctx
// ("hit", "miss", "bypass"): the observers outside read it through
// CallFrom once the call returns, so hits show in spans, metrics and logs.
// lookup is a name, like SetFallback's source. It does nothing when ctx
// carries no call.
func SetCache(ctx context.Context, lookup string) {
	if c, ok := ctx.Value(callKey).(*callCtx); ok {
		c.note(func(n *notes) { n.cache = name(lookup) })
	}
}

// SetChaos records that a chaos layer injected fault (a name, like
// SetFallback's source) into the call carried by ctx: the observers
// outside read it through CallFrom once the call returns, so a rehearsed
// failure is never taken for a real one in a trace. When faults are
// injected into several attempts of a call, the last one is recorded. It
// does nothing when ctx carries no call.
func SetChaos(ctx context.Context, fault string) {
	if c, ok := ctx.Value(callKey).(*callCtx); ok {
		c.note(func(n *notes) { n.chaos = name(fault) })
	}
}

// name returns s when it is a well-formed name (a code, see
// taxonomy.ValidCode), else "other": a note in the call record is a name,
// never data.
func name(s string) string {
	if !taxonomy.ValidCode(s) {
		return "other"
	}
	return s
}

// SetAttempt records that attempt n (from 1) of the call carried by ctx is
// starting. Retry layers call it before each attempt; the tool and every
// layer then see the number through CallFrom, and layers outside the retry
// read the number of attempts made once the call returns. It does nothing
// when ctx carries no call.
func SetAttempt(ctx context.Context, n int) {
	if c, ok := ctx.Value(callKey).(*callCtx); ok {
		c.attempt.Store(int32(n))
	}
}

func newCall(ctx context.Context, spec *Spec) *callCtx {
	c := &callCtx{Context: ctx, spec: spec}
	if id, ok := ctx.Value(callIDKey).(string); ok {
		c.id = SafeCallID(id)
	}
	c.attempt.Store(1)
	return c
}

// MaxCallIDLen is the longest call id a Call carries as given.
const MaxCallIDLen = 128

// replacedPrefix starts a call id that SafeCallID replaced.
const replacedPrefix = "invalid_call_id_"

// SafeCallID returns a call id as layers, logs, spans and events see it: id
// itself when it is "" or at most [MaxCallIDLen] bytes of ASCII letters,
// digits and "_-.:" (the shapes model APIs use, such as call_a1B2 and
// toolu_01A…) in which the default scrubber finds nothing at any position
// — not only where a word starts, as it looks in text, but also glued to
// what comes before (call_ghp_…, toolu_01AKIA…, fc_xyzsk-ant-…);
// otherwise "invalid_call_id_" and 16 hex digits of a keyed hash of id,
// with a key made at random when the process starts. So an oversize id or
// one holding anything else (a token, markup, a newline) never reaches a
// sink, while the same bad id reads the same within one process. An id
// already in that replaced form ("invalid_call_id_" and 16 lower-case hex
// digits) is replaced too, so a model cannot send the replaced form of
// another id and pass for it. It allocates only for an id it replaces.
//
// The replaced form names an id for sinks only: it differs from one process
// to the next, so nothing that must survive a restart is keyed by it (the
// idempotency key is made of the id as given, see [WithIdempotencyKey]),
// and a layer that keeps state per call id keys it by [Call.IDSum].
func SafeCallID(id string) string {
	if safeToken(id) && !replacedForm(id) {
		return id
	}
	m := hmac.New(sha256.New, callIDKeyBytes[:])
	m.Write([]byte(id))
	return replacedPrefix + hex.EncodeToString(m.Sum(nil)[:8])
}

// replacedForm reports whether id reads like a replaced call id:
// "invalid_call_id_" and 16 lower-case hex digits.
func replacedForm(id string) bool {
	if len(id) != len(replacedPrefix)+16 || id[:len(replacedPrefix)] != replacedPrefix {
		return false
	}
	for i := len(replacedPrefix); i < len(id); i++ {
		if c := id[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// safeToken reports whether s may reach a sink as it is: at most
// MaxCallIDLen bytes of [A-Za-z0-9_.:-] in which the default scrubber finds
// nothing, wherever it starts (see gluedFinding).
func safeToken(s string) bool {
	if len(s) > MaxCallIDLen {
		return false
	}
	ok, marks := scanID(s)
	return ok && idScrubber.String(s) == s && !gluedFinding(s, marks)
}

// idScrubber is the default scrubber without high_entropy: a model's call
// id is a random run by construction (call_ and 24 letters and digits,
// toolu_01 and base62), so a random run is no sign of a secret in it.
var idScrubber = func() *scrub.Scrubber {
	s, err := scrub.New(scrub.WithoutFamilies("high_entropy"))
	if err != nil {
		return scrub.Default() // a family renamed: every family, rather than none
	}
	return s
}()

// gluedFinding reports whether the default scrubber finds a secret in s,
// a string of [A-Za-z0-9_.:-], that starts inside it rather than where it
// looks in text: a token glued to what comes before it ("call_ghp_…",
// "toolu_01AKIA…") hides from the scrubber, which finds tokens where
// words start, and a vendor token right after a byte of its own alphabet
// ("x-tvly-…") is not read as one.
//
// The scrubber's secret families (gluedScrubber: not its identifiers —
// cards, IBANs, UUIDs, IP and MAC addresses, which it finds where a word
// starts, as in the whole id, but which a random id's digits and hex would
// spell now and then if read from anywhere) are asked again about the rest
// of s from each position i where a secret may start: every position when
// s holds a '.' or a ':' (the bytes that join the parts of a JWT, a
// Discord or Terraform token, a key:value pair — rare in model call ids);
// else only where the two bytes at i begin a vendor token's prefix
// (gluedStarts), or 32 hexadecimal digits and a '-' begin (a Mailchimp or
// Mailgun key). The ids model APIs make (call_ and 24 letters and digits,
// toolu_01 and base62, fc_ and hex) meet few such positions, so the clean
// path costs a scan of s and rarely a second look. At most len(s) scans of
// at most MaxCallIDLen bytes each, whatever s is.
//
// TestSafeCallIDGluedSecrets glues a sample of every secret family of the
// scrubber to the prefixes of model call ids and checks that each id is
// replaced: a new family, or a prefix that gluedStarts does not know, fails
// it.
func gluedFinding(s string, marks uint8) bool {
	every := marks&markJoint != 0 || strings.Contains(s, "_mmk")
	for i := 1; i < len(s); i++ {
		if !every && (i+1 == len(s) || gluedStarts[s[i]][s[i+1]>>6]&(1<<(s[i+1]&63)) == 0) {
			continue
		}
		if rest := s[i:]; gluedScrubber.String(rest) != rest {
			return true
		}
	}
	if every || marks&markDash == 0 {
		return false
	}
	// 32 hex digits before a '-', not where a word starts.
	for p := 33; p < len(s); p++ {
		if s[p] != '-' {
			continue
		}
		i := p - 32
		hex := true
		for k := i; k < p && hex; k++ {
			hex = isHexByte(s[k])
		}
		if rest := s[i:]; hex && gluedScrubber.String(rest) != rest {
			return true
		}
	}
	return false
}

// gluedScrubber is the default scrubber without its identifier families
// and high_entropy (see idScrubber).
var gluedScrubber = func() *scrub.Scrubber {
	s, err := scrub.New(scrub.WithoutFamilies("email", "card", "iban", "phone", "ip", "uuid", "home_user", "ssn", "mac_address", "high_entropy"))
	if err != nil {
		return scrub.Default() // a family renamed: every family, rather than none
	}
	return s
}()

// gluedPrefixes are the beginnings of the vendor tokens the default
// scrubber knows whose prefix can be written in a call id (those with a
// '.' inside, and the tokens without a prefix that need a '.' or a ':',
// are found by trying every position of an id that holds one): AWS key
// ids, Google, Twilio, SendGrid, DigitalOcean, Databricks, GitHub, GitLab,
// Groq, Hugging Face, Mailgun, npm, PyPI, Stripe, OpenAI, Anthropic,
// OpenRouter, Shopify, Slack, xAI, Grafana, Sentry, Linear, Notion,
// Postman, New Relic, Atlassian, Supabase, age, Square, Facebook, Pulumi,
// Docker Hub, PlanetScale, Replicate, Perplexity, LangSmith, Pinecone,
// Tavily, Alibaba, AWS session tokens, Fly.io, RubyGems, Heroku, JWTs;
// and those of issue 31 (1Password, Adobe, Airtable, Artifactory,
// Authress, Bedrock, ClickHouse, Clojars, Cloudflare, Duffel, Dynatrace,
// EasyPost, Flutterwave, Frame.io, Infracost, intra42, Octopus Deploy,
// Prefect, ReadMe, Scalingo, Brevo, SettleMint, Shippo, Sourcegraph,
// Yandex, SonarQube, Typeform, Defined Networking, Plaid, Dropbox,
// Beamer, Twitter, Lob, GoCardless, Harness; Cloudflare's API tokens,
// Vercel, Tailscale, Private Packagist, OpenAI's ek_; NVIDIA, PostHog).
// MaxMind license keys end with "_mmk" rather than begin with a prefix:
// an id that holds "_mmk" is tried at every position.
const gluedPrefixes = "AKIA ASIA ABIA ACCA AGPA AIDA AIPA ANPA ANVA APKA AROA AIza AC SK SG " +
	"dop_ doo_ dor_ dapi gh github_pat_ glpat- gsk_ hf_ key- npm_ pypi- rk_ sk- sk_ shp whsec_ " +
	"xox xapp- xai- ya29 GOCSPX- gl GR1348941 hv sntry lin_ ntn_ secret_ PMAK- NRAK- NRJS- dp " +
	"ATATT3 ATBB sbp_ sb_secret_ AGE- sq0 EAA pul- dckr_ pscale_ r8_ pplx- lsv2_ pcsk_ tvly- LTAI " +
	"IQoJ FwoG fo1_ fm2_ rubygems_ HRKU- eyJ " +
	"A3- ops_ p8e- pat AKCp cmVmd sc_ ext_ authress_ ABSK bedrock- 4b1d CLOJARS_ v1.0- duffel_ dt0c01 " +
	"EZAK EZTK FLW fio- ico- s-s4t2 API- pnu_ rdme_ tk-us- xkeysib- sm_ shippo_ sgp_ AQVN YC t1. " +
	"squ_ sqp_ sqa_ tfp_ dnkey- access- sl. b_ AAAA live_ test_ api_org_ pubkey- NRII- ZXlK fm1 A3T " +
	"cfut_ cfat_ cfk_ vcp_ vci_ vca_ vcr_ vck_ tskey- packagist_ ek_ nvapi- phx_ " +
	"bkua_ shltm_ flb_live_"

// gluedStarts holds the first two bytes of every gluedPrefixes entry, as
// a set of second bytes (a 256-bit mask) per first byte.
var gluedStarts = func() (t [256][4]uint64) {
	for _, p := range strings.Fields(gluedPrefixes) {
		t[p[0]][p[1]>>6] |= 1 << (p[1] & 63)
	}
	return t
}()

func isHexByte(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// The marks scanID reports: which of the punctuation a call id may hold
// it holds.
const (
	markDash  = 1 << iota // '-'
	markJoint             // '.' or ':'
)

// scanID reports whether id is made of [A-Za-z0-9_.:-] only, and which
// punctuation it holds.
func scanID(id string) (ok bool, marks uint8) {
	for i := 0; i < len(id); i++ {
		switch c := id[i]; {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_':
		case c == '-':
			marks |= markDash
		case c == '.', c == ':':
			marks |= markJoint
		default:
			return false, 0
		}
	}
	return true, marks
}

// callIDKeyBytes keys the hash of replaced call ids, for this process only.
var callIDKeyBytes = func() (k [32]byte) {
	_, _ = rand.Read(k[:]) // crypto/rand.Read never fails (Go 1.24+)
	return k
}()

// rawID returns the model's call id as given to WithCallID, and whether
// one was: the call record keeps only its SafeCallID form, and the
// context it wraps holds the original.
func (c *callCtx) rawID() (string, bool) {
	id, ok := c.Context.Value(callIDKey).(string)
	return id, ok && id != ""
}

// IDSum returns the SHA-256 of the model's call id as given to
// [WithCallID] — not as [SafeCallID] makes it for [Call.ID] — and true; or
// false when the call has no id ("" or none given). Two calls have the same
// sum exactly when the model sent the same id, which Call.ID does not
// promise of a replaced id: a layer that keeps state per call id (dedupe)
// keys it by IDSum, so no model id can reach the state of another. The sum
// is a hash of model data, for keys: it is not for sinks, since an id of
// few possible values can be recovered from it.
func (c Call) IDSum() (sum [sha256.Size]byte, ok bool) {
	if c.c == nil {
		return sum, false
	}
	id, ok := c.c.rawID()
	if !ok {
		return sum, false
	}
	h := sha256.New()
	h.Write([]byte("toolmw call id\x00"))
	h.Write([]byte(id))
	h.Sum(sum[:0])
	return sum, true
}

// WithIdempotencyKey returns a context that gives the next call through a
// Wrap'd tool the idempotency key key, for a loop that keeps its own (one
// that survives a restart of the process, say, stored with the call). The
// key reaches the tool through [Call.Key] as given when it is at most
// [MaxCallIDLen] bytes of ASCII letters, digits and "_-.:" in which the
// default scrubber finds nothing, at any position (as for [SafeCallID]),
// and otherwise as "tmk_" and 32 hex digits
// of a hash of it that is the same in every process.
//
// Without one, a call's key is derived from the model's call id as given
// to [WithCallID] (not as [SafeCallID] shows it: an id with a "/", a "+",
// an "@" or over 128 bytes keys its call like any other):
//
//   - with a call id and a run ([budget.WithRun]): "tmk_" and 32 hex digits
//     of an HMAC-SHA-256 of the tool's name and the call id, keyed by the
//     run, so a repeat of the call in the same run (the model re-issuing
//     it) carries the same key, and the same call id in another run does
//     not;
//   - with a call id and no run: the same, keyed by a random value made
//     when the process starts: the key holds within the process only;
//   - with neither: "tmk_" and 32 random hex digits, made once per call.
//
// A run's key is its id when it has one ([budget.WithID]; the SHA-256 of
// "toolmw run id", a zero byte and [budget.Run.ID]): the key is then a pure
// function of the run id, the tool and the call id, the same in every
// process and on every replica, so a call replayed after a restart carries
// the key of its first execution, and an approval asked for it keeps its
// id. No secret goes into it: the key identifies a call to a supplier, it
// does not authenticate anything, and anyone who knows the run id, the
// tool and the call id can derive it (make run ids unguessable, a UUID
// say, if that matters). A run without an id has a random key, made when
// the run first needs it: a key derived in one process is not derived
// again by another, and a loop that replays such calls sets its own key.
func WithIdempotencyKey(ctx context.Context, key string) context.Context {
	return context.WithValue(ctx, idemKey, key)
}

// keyPrefix starts every key toolmw makes.
const keyPrefix = "tmk_"

func (c *callCtx) key() string {
	if k := c.ikey.Load(); k != nil {
		return *k
	}
	k := c.makeKey()
	if c.ikey.CompareAndSwap(nil, &k) {
		return k
	}
	return *c.ikey.Load() // another goroutine of the call (a hedge) made it first
}

func (c *callCtx) makeKey() string {
	if k, ok := c.Context.Value(idemKey).(string); ok {
		if k != "" && safeToken(k) {
			return k
		}
		return keyPrefix + keyHash(loopKeyKey[:], "loop", k)
	}
	id, ok := c.rawID()
	if !ok {
		var b [16]byte
		_, _ = rand.Read(b[:])
		return keyPrefix + hex.EncodeToString(b[:])
	}
	nonce := processNonce[:]
	if run, ok := budget.RunFrom(c.Context); ok {
		if rid := run.ID(); rid != "" {
			h := sha256.Sum256([]byte("toolmw run id\x00" + rid))
			nonce = h[:]
		} else {
			nonce = runNonces.Get(run, newNonce)[:]
		}
	}
	return keyPrefix + keyHash(nonce, c.spec.Name, id)
}

// loopKeyKey keys the hash of a loop's key that cannot reach the tool as
// it is: a constant, so that the hash is the same in every process.
var loopKeyKey = sha256.Sum256([]byte("toolmw loop key"))

// keyHash returns 32 hex digits of a hash of nonce, tool and id.
func keyHash(nonce []byte, tool, id string) string {
	m := hmac.New(sha256.New, nonce)
	m.Write([]byte(tool))
	m.Write([]byte{0})
	m.Write([]byte(id))
	return hex.EncodeToString(m.Sum(nil)[:16])
}

// runNonces holds each run's random part of its calls' keys, for as long
// as the run lives.
var runNonces runstate.Slot[[16]byte]

func newNonce() *[16]byte {
	var n [16]byte
	_, _ = rand.Read(n[:])
	return &n
}

// processNonce stands in for the run when a call has none.
var processNonce = newNonce()
