package scrub

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"math/bits"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// placeholderPrefix begins every placeholder: [REDACTED:<family>] or, for
// identifiers under WithKeyedHash, [REDACTED:<family>:<8 hex digits>].
const placeholderPrefix = "[REDACTED:"

// hashBytes is how many bytes of the HMAC a keyed placeholder shows.
const hashBytes = 4

// Match is one finding: the bytes in[Start:End] of the input belong to the
// named family.
type Match struct {
	Start, End int    // byte offsets into the input
	Family     string // e.g. "github_token", "email"
}

// A Scrubber finds secrets and identifiers in text and replaces them with
// typed placeholders. It is immutable after New and safe for concurrent use
// by multiple goroutines.
type Scrubber struct {
	names   []string // family names: the built-ins, then those of extra patterns
	holders []string // the placeholder of each family
	on      []bool   // whether each family is enabled
	extras  []extra
	allow   map[string]struct{}
	key     []byte // HMAC key for identifiers; nil for plain placeholders
}

// extra is a pattern added with WithPattern.
type extra struct {
	fam    family
	re     *regexp.Regexp
	prefix string // a literal every match starts with, or ""
}

// An Option configures a Scrubber made by New.
type Option func(*options)

type options struct {
	only, without []string
	onlySet       bool
	patterns      []pattern
	allow         []string
	key           []byte
}

type pattern struct {
	family string
	re     *regexp.Regexp
}

// WithoutFamilies disables the named families. A name that is neither built
// in (see Families) nor given to WithPattern is an error of New.
func WithoutFamilies(names ...string) Option {
	return func(o *options) { o.without = append(o.without, names...) }
}

// WithOnlyFamilies enables the named families and disables every other,
// including those of patterns added with WithPattern unless they are named.
// WithoutFamilies still applies on top. An unknown name is an error of New.
func WithOnlyFamilies(names ...string) Option {
	return func(o *options) {
		o.only = append(o.only, names...)
		o.onlySet = true
	}
}

// WithPattern adds a pattern whose matches are redacted as family, which may
// be a built-in family or a new name of lower-case letters, digits and
// underscores. A nil re or another family name is an error of New.
//
// Extra patterns cost far more than the built-in families: each runs the
// regexp engine over the input. When every match of re starts with a literal
// (such as "corp_" in `\bcorp_[a-z0-9]{32}\b`), a substring search for that
// literal skips the engine on inputs without it, and clean input stays fast.
// A pattern without such a literal runs on every input; expect roughly the
// cost of Go's regexp package on the whole text. A pattern is also
// responsible for its own false positives and must not match placeholders,
// or scrubbing would not be idempotent. Overlapping findings are merged.
func WithPattern(family string, re *regexp.Regexp) Option {
	return func(o *options) { o.patterns = append(o.patterns, pattern{family, re}) }
}

// WithAllow lists exact values that are never redacted, such as a
// well-known test e-mail address. A finding whose text, with escapes
// decoded, equals one of them is left in place.
func WithAllow(values ...string) Option {
	return func(o *options) { o.allow = append(o.allow, values...) }
}

// WithKeyedHash makes identifiers (email, card, iban, phone, ip, uuid,
// home_user, ssn, mac_address) redact to a stable pseudonym,
// [REDACTED:email:ab12cd34]: the first four bytes of HMAC-SHA256(key,
// value) in hex, of the value as written. Equal values give equal
// placeholders within one Scrubber, so a reader can still tell two users
// apart; secrets always get the plain [REDACTED:family].
func WithKeyedHash(key []byte) Option {
	return func(o *options) { o.key = slices.Clone(key) }
}

// New returns a Scrubber with every built-in family enabled, changed by
// opts; nil options are skipped. An unknown family name or an invalid
// pattern is an error, and no Scrubber is returned: a scrubber that quietly
// left a family out would let what it should catch through. The error is a
// plain error (this package imports only the standard library); a layer
// taking scrub options reports it as tool-definition-invalid/option_invalid.
func New(opts ...Option) (*Scrubber, error) {
	var o options
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	s := &Scrubber{names: slices.Clone(familyNames[:])}
	for _, p := range o.patterns {
		if p.re == nil || !validFamilyName(p.family) {
			return nil, fmt.Errorf("scrub: WithPattern(%q, %v): need a non-nil regexp and a family name of [a-z0-9_]", p.family, p.re)
		}
		f := slices.Index(s.names, p.family)
		if f < 0 {
			f = len(s.names)
			s.names = append(s.names, p.family)
		}
		s.extras = append(s.extras, extra{fam: f, re: p.re, prefix: literalPrefix(p.re)})
	}
	s.holders = make([]string, len(s.names))
	s.on = make([]bool, len(s.names))
	for f, name := range s.names {
		s.holders[f] = placeholderPrefix + name + "]"
		s.on[f] = !o.onlySet
	}
	for _, name := range o.only {
		f, err := s.family(name)
		if err != nil {
			return nil, err
		}
		s.on[f] = true
	}
	for _, name := range o.without {
		f, err := s.family(name)
		if err != nil {
			return nil, err
		}
		s.on[f] = false
	}
	if len(o.allow) > 0 {
		s.allow = make(map[string]struct{}, len(o.allow))
		for _, v := range o.allow {
			s.allow[v] = struct{}{}
		}
	}
	s.key = o.key
	return s, nil
}

// family returns the index of the family called name.
func (s *Scrubber) family(name string) (family, error) {
	f := slices.Index(s.names, name)
	if f < 0 {
		return 0, fmt.Errorf("scrub: unknown family %q", name)
	}
	return f, nil
}

// validFamilyName reports whether name can appear in a placeholder.
func validFamilyName(name string) bool {
	if name == "" || len(name) > 40 || !isLower(name[0]) {
		return false
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !isLower(c) && !isDigit(c) && c != '_' {
			return false
		}
	}
	return true
}

// std is the default Scrubber. New without options cannot fail.
var std, _ = New()

// Default returns the package's default Scrubber, the one String uses: every
// built-in family, no extras, plain placeholders.
func Default() *Scrubber { return std }

// String returns s with every secret and identifier found by the default
// Scrubber replaced by its placeholder. Clean input is returned as is,
// without allocating.
func String(s string) string { return std.String(s) }

// Families returns the names of the built-in families, sorted.
func Families() []string {
	names := slices.Clone(familyNames[:])
	sort.Strings(names)
	return names
}

// String returns in with every finding replaced by its placeholder. If
// there is none it returns in itself, without allocating.
func (s *Scrubber) String(in string) string {
	// Room for the findings of most messages, on the stack; a small one,
	// since every call clears it (a message with more findings grows it
	// on the heap).
	var buf [4]hit
	hits := s.collect(buf[:0], in)
	if len(hits) == 0 {
		return in
	}
	return s.replace(in, hits)
}

// Find returns the findings in in, sorted and not overlapping.
func (s *Scrubber) Find(in string) []Match {
	hits := s.collect(nil, in)
	if len(hits) == 0 {
		return nil
	}
	ms := make([]Match, len(hits))
	for k, h := range hits {
		ms[k] = Match{Start: h.start, End: h.end, Family: s.names[h.fam]}
	}
	return ms
}

// collect appends the findings in in to dst. A message with escapes or
// invisible characters is matched in its decoded view, and the findings
// mapped back (see decode.go).
//
// Finding out whether a message has escapes costs next to nothing: the
// scan notes the bytes an escape may begin with as it skips them and
// stops at the first escape; only a message with one of them that the
// scan did not read (inside a finding, a non-ASCII run or an allowed
// value: escapeUnread) is searched for escapes, and scanned in its view
// if it has any.
func (s *Scrubber) collect(dst []hit, in string) []hit {
	n := len(dst)
	var seen uint32
	dst = s.scan(dst, in, nil, &seen)
	// (A scan that found nothing read every byte an escape may begin
	// with, unless escapeUnread says otherwise, and found no escape.)
	if seen&cEscape != 0 && (len(dst) > n || seen&(escapeFound|escapeUnread) != 0) {
		if k := firstEscape(in); k >= 0 {
			w := views.Get().(*view)
			v := w.build(in, k, false)
			dst = s.scan(dst[:n], v, w.esc, &seen)
			if len(dst) > n {
				// Copies as decoded: a value found escaped and written
				// plainly elsewhere, or the other way round.
				dst = s.appendCopies(dst, n, v)
			}
			dst = append(dst[:n], w.mapHits(dst[n:])...)
			if w.invisible {
				// Read again with each invisible character as a blank:
				// one glued to a token hides its start otherwise.
				m := len(dst)
				dst = s.scan(dst, w.build(in, k, true), w.esc, &seen)
				dst = append(dst[:m], w.mapHits(dst[m:])...)
				dst = append(dst[:n], union(dst[n:])...)
			}
			w.release()
		}
	}
	if len(s.extras) > 0 {
		dst = s.appendExtras(dst, in)
	}
	if len(dst) > n {
		dst = s.appendCopies(dst, n, in)
	}
	return dst
}

// Copies: a value found once in a message is redacted wherever else it
// appears in it ("token=X … retrying with X"), also where no matcher
// would find it on its own. The work is bounded: only the first
// maxCopyValues distinct values of at least minCopyLen bytes are looked
// for, each with one left-to-right substring search of the message, so a
// dirty message costs at most maxCopyValues more linear searches and a
// clean one nothing.
const (
	maxCopyValues = 16
	minCopyLen    = 6
)

// appendCopies appends to dst, whose findings from n on are sorted and
// disjoint, every other copy of their values in in, and returns the
// findings sorted with overlapping ones merged. A copy is the same bytes
// as a finding, not inside a longer word (the bytes around it do not
// continue a word that the value begins or ends with) and not inside a
// placeholder. Only random-looking values (randomish) are looked for
// elsewhere: a word, such as the user name of a home directory (ubuntu,
// runner) or a plain password, is often used otherwise too, and may be
// the context (OID, version, a phrase) that a matcher read another
// value by, which a second pass must read the same.
func (s *Scrubber) appendCopies(dst []hit, n int, in string) []hit {
	m := len(dst)
	var done [maxCopyValues]string
	values := 0
	for k := n; k < m && values < maxCopyValues; k++ {
		h := dst[k]
		// A value that a line break split (a wrapped key) is looked for
		// line by line.
		for seg, rest := "", in[h.start:h.end]; rest != "" && values < maxCopyValues; {
			if b := indexLineBreak(rest); b >= 0 {
				seg, rest = rest[:b], strings.TrimLeft(rest[b:], "\r\n \t")
			} else {
				seg, rest = rest, ""
			}
			if len(seg) < minCopyLen || h.fam == famHomeUser || !randomish(seg) || slices.Contains(done[:values], seg) {
				continue
			}
			done[values] = seg
			values++
			for from := 0; from < len(in); {
				p := strings.Index(in[from:], seg)
				if p < 0 {
					break
				}
				p += from
				e := p + len(seg)
				from = e
				if !copyBounds(in, p, e) || covered(dst[n:m], p, e) || inPlaceholder(in, p) {
					continue
				}
				dst = append(dst, hit{p, e, h.fam})
			}
		}
	}
	if len(dst) == m {
		return dst
	}
	return append(dst[:n], union(dst[n:])...)
}

// copyBounds reports whether in[p:e] is a whole value: a word byte at
// either end of it is not continued by one outside.
func copyBounds(in string, p, e int) bool {
	if p > 0 && chars[in[p]]&cWord != 0 && chars[in[p-1]]&cWord != 0 {
		return false
	}
	return e >= len(in) || chars[in[e-1]]&cWord == 0 || chars[in[e]]&cWord == 0
}

// covered reports whether in[p:e] is inside one of hits, sorted and
// disjoint. A copy that a finding covers only in part (another matcher
// found a token at its start, 'EAAA…=roK23I…' where the copy goes on past
// the token's end) is added, and the two merge.
func covered(hits []hit, p, e int) bool {
	k, _ := slices.BinarySearchFunc(hits, p, func(h hit, p int) int { return h.end - 1 - p })
	return k < len(hits) && hits[k].start <= p && e <= hits[k].end
}

// inPlaceholder reports whether in[p] is inside a placeholder.
func inPlaceholder(in string, p int) bool {
	k := strings.LastIndexByte(in[max(0, p-128):p], '[')
	if k < 0 {
		return false
	}
	k += max(0, p-128)
	return placeholderLen(in[k:]) > p-k
}

// union sorts hits, the findings of two readings, each sorted and
// disjoint, by start and merges those that overlap, in place.
func union(hits []hit) []hit {
	slices.SortFunc(hits, func(a, b hit) int { return a.start - b.start })
	out := hits[:0]
	for _, h := range hits {
		if k := len(out); k > 0 && h.start < out[k-1].end {
			out[k-1].end = max(out[k-1].end, h.end)
			continue
		}
		out = append(out, h)
	}
	return out
}

// escapeFound is the bit of a scan's seen that says it stopped at an
// escape in raw text, and escapeUnread the bit that says it passed a byte
// an escape or invisible character may begin with unread (inside a
// non-ASCII run, or inside a value allowed through); no byte class has
// either. A raw scan that found nothing and has neither read every such
// byte: collect then knows the message has no escape without a search.
const (
	escapeFound  uint32 = 1 << 31
	escapeUnread uint32 = 1 << 30
)

// scan appends the findings in in, marked by esc, to dst, and notes in
// seen (cEscape) whether a byte in or outside findings may begin an escape.
func (s *Scrubber) scan(dst []hit, in string, esc escMarks, seen *uint32) []hit {
	var later hit // a finding next found after the one it returned
	for i := 0; ; {
		h, ok := s.next(in, esc, i, len(in), seen, &later)
		if !ok {
			return dst
		}
		for _, h := range [2]hit{h, later} {
			if h.end == 0 {
				break
			}
			dst = append(dst, h)
			if *seen&cEscape == 0 && mayEscape(in[h.start:h.end]) {
				*seen |= cEscape // an escape inside a finding may hide a longer one
			}
			i = h.end
		}
		later = hit{}
	}
}

// next returns the first finding that starts at or after from and ends by
// limit. Backward looks (an e-mail's local part, a key before '=') stop at
// from: to them, from is the end of the previous finding, which in the
// output is the ']' of its placeholder. That is what makes scrubbing
// idempotent.
//
// This is the one pass over the input. Boring bytes (lower-case letters,
// blanks, common punctuation) cost one table lookup each in a tight loop.
// A digit, an upper-case letter or '_' makes the scanner try its word, from
// the word's start; a trigger byte runs the matchers that begin with it.
//
// A matcher may find its value past text the scan has not read yet: a
// command-line flag's value after the flag's name (--<name> <value>), a
// call's second argument after its first. A finding in that text must
// come first, as a second pass, which sees the value redacted, finds it
// there. So next reads from from up to the value for one; if it finds
// one, it returns it and puts the value in *later (if later is nil, the
// value is dropped).
func (s *Scrubber) next(in string, esc escMarks, from, limit int, seen *uint32, later *hit) (hit, bool) {
	lo := from
	// The scan's state besides i, kept in memory: the compiler then does
	// not carry it in registers around the loop, to spill and reload at
	// every call.
	st := struct {
		tried   int // the end of the last word tried
		encoded int // where the next run of encoded characters may begin
		runs    int // where the next run of base64 bytes may begin (matchRandomRun)
		// A run that looks generated is found only if no other matcher
		// finds a token that begins inside it: it waits, as pending,
		// until the scan has passed its end.
		pending     hit
		pendingCore int // pending's end without a password's symbols glued to it
		waiting     bool
	}{tried: -1, encoded: lo, runs: lo}
	var blk blockCache
	var schemes schemeLook
	judgeRuns := s.on[famHighEntropy] || s.on[famAzureKey] // matchRandomRun's families
	for i := from; i < limit; {
		if st.waiting && i >= st.pending.end {
			return st.pending, true
		}
		if chars[in[i]]&cBoring != 0 {
			if i = skipBoring(in[:limit], i); i >= limit {
				break
			}
		}
		c := in[i]
		if chars[c]&cEscape != 0 {
			// A byte an escape or an invisible character may begin with:
			// noted, so that collect looks for escapes, and skipped with
			// the run of its kind ('\\' is also a trigger). At an escape
			// the scan of the raw text stops: collect scans the view.
			*seen |= cEscape
			if esc == nil && escapeLen(in, i) > 0 {
				*seen |= escapeFound
				return hit{}, false
			}
			switch {
			case c >= 0x80:
				for i++; i < limit && in[i] >= 0x80; i++ {
					if specialLead[in[i]] {
						*seen |= escapeUnread // another character, maybe invisible
					}
				}
				continue
			case c != '\\':
				i++
				continue
			}
		}
		if c == '[' {
			i += max(1, placeholderLen(in[i:]))
			continue
		}
		if (c == '/' || c == '(') && !punctMayMatch(in, i, lo) {
			// A '/' or a '(', the most common triggers in text besides
			// ':', begins nothing unless matchPunct's case for it may
			// match: passed at once, as the boring bytes.
			i++
			continue
		}
		var h hit
		ok := false
		resume := i + 1 // where to go on if nothing is found here
		if chars[c]&cWord != 0 {
			ws, e := wordStart(in, i, lo), skip(in, i, cWord)
			first := ws-1 != st.tried
			st.tried, resume = e, e
			if g := wordGate(in, ws, e, lo, first); g != 0 {
				h, ok = s.matchWordAt(in, ws, e, lo, first, g == gateWorth, &schemes)
			}
			if !ok && e-ws >= 8 && ws >= st.encoded {
				// A base64 or hexadecimal run that decodes to text with
				// a finding inside (see decode.go).
				h, st.encoded, ok = s.tryEncoded(in, ws, e, max(lo, st.encoded), limit, *seen)
			}
			if !ok && judgeRuns && ws >= st.runs && !st.waiting && mayRun(in, ws, e, lo, limit) {
				if st.pending, st.runs, st.pendingCore, st.waiting = s.matchRandomRun(in, ws, lo, st.runs, limit, &blk); st.waiting && s.allowed(in[st.pending.start:st.pending.end]) {
					st.waiting = false
				}
			}
		} else {
			// A '-' or ':' may end the lower-case word of a prefix (sk-,
			// glpat-) or of an IPv6 group (fe:), which was skipped as boring.
			if (c == '-' || c == ':') && i > st.tried && i > lo && chars[in[i-1]]&cWord != 0 {
				ws := wordStart(in, i, lo)
				first := ws-1 != st.tried
				st.tried = i
				if g := wordGate(in, ws, i, lo, first); g != 0 {
					h, ok = s.matchWordAt(in, ws, i, lo, first, g == gateWorth, &schemes)
				}
			}
			// (A '/' or a '(' that begins nothing was passed above.)
			if !ok || h.end > limit {
				h, ok = s.matchPunct(in, esc, i, lo)
			}
		}
		switch {
		case !ok || h.end > limit:
			i = resume
		case s.allowed(in[h.start:h.end]):
			*seen |= escapeUnread
			i = max(h.end, i+1)
		case st.waiting && h.start >= st.pending.end:
			return st.pending, true // found first; h is found again after it
		case st.waiting && h.start >= st.pendingCore:
			// h begins in the symbols glued to the run (…a111!0@0.AA: an
			// e-mail address): the run goes without them, as a second
			// pass, which sees h redacted, finds it; h is found again
			// after it.
			st.pending.end = st.pendingCore
			return st.pending, true
		default:
			h = s.whole(in, h, limit)
			if h.start > resume && skipBoring(in[:h.start], resume) < h.start {
				// (Blanks, quotes and the like between hold nothing.)
				if f, ok := s.next(in, esc, from, h.start, seen, nil); ok {
					if later != nil {
						*later = h
					}
					return f, true
				}
			}
			return h, true
		}
	}
	return st.pending, st.waiting
}

// proseQuote is 1 if p, the byte before a value in prose, is a quote
// (which the blanks before the value end at), and 0 if it is a blank.
func proseQuote(p byte) int {
	if p == '"' || p == '\'' || p == '`' {
		return 1
	}
	return 0
}

// mayRun reports whether the word in[ws:e] may belong to a run long
// enough for matchRandomRun to judge: it is long, or a byte of a run
// touches it on either side. Most words in text stand alone and are short;
// for them the scan's loop skips the call.
func mayRun(in string, ws, e, lo, limit int) bool {
	return e-ws >= minShortRun || ws > lo && runClass[in[ws-1]]&runByte != 0 ||
		e < limit && (runClass[in[e]]&runByte != 0 || in[e] == '=')
}

// whole returns h, or the grouped identifier (a card number, an IBAN, a
// phone number) whose first group h is: a value after a key or a scheme
// ends at a blank ("Bearer GB82 WEST …", "api_key= 4556 7375 …"), where
// the identifier goes on, and the rest of it would be left.
func (s *Scrubber) whole(in string, h hit, limit int) hit {
	if h.end >= limit {
		return h
	}
	if in[h.end] == ' ' {
		var g hit
		ok := false
		switch c := in[h.start]; {
		case chars[c]&cWord != 0:
			g, ok = s.matchGrouped(in, h.start)
		case c == '+':
			g, ok = matchPhone(in, h.start)
			ok = ok && s.on[g.fam]
		}
		if ok && g.start == h.start && g.end > h.end && g.end <= limit {
			h = g
		}
	}
	// Or one of h's last words begins one ("0 100-01 4556 7375 …": a social
	// security number and a card sharing a group; "TOKEN=x 123e4567-e89b-…":
	// a value and a UUID; two IBANs sharing groups): h goes on to its end,
	// and again from there. The words tried and the times are bounded, so
	// the work stays linear.
	for n := 0; n < 4 && h.end < limit && strings.IndexByte(" -.:", in[h.end]) >= 0; n++ {
		best := h.end
		p := h.end
		for k := 0; k < 12; k++ {
			e := p
			for e > h.start && chars[in[e-1]]&cWord == 0 {
				e--
			}
			ws := wordStart(in, e, h.start)
			if e <= h.start || ws <= h.start {
				break
			}
			if g, ok := s.matchGrouped(in, ws); ok && g.end > best && g.end <= limit {
				best = g.end
			}
			p = ws
		}
		if best == h.end {
			break
		}
		h.end = best
	}
	return h
}

// matchGrouped tries the matchers of identifiers written in groups (UUIDs,
// MAC addresses, social security numbers, card numbers, IBANs) at in[i].
func (s *Scrubber) matchGrouped(in string, i int) (hit, bool) {
	c := in[i]
	if chars[c]&cHex != 0 {
		if h, ok := matchHexStart(in, i, i); ok && h.start == i && s.on[h.fam] {
			return h, true
		}
	}
	if isLetter(c) && i+4 <= len(in) && isDigit(in[i+2]) && isDigit(in[i+3]) {
		if h, ok := matchIBAN(in, i); ok && h.start == i && s.on[h.fam] {
			return h, true
		}
	}
	return hit{}, false
}

// skipBoring returns the index of the first byte at or after i that is not
// boring. This loop is where clean text spends its time, so it looks at
// four bytes per branch while it can: the AND of their marks in boringByte
// is 1 only if all four are boring, and the first that is not is found
// without a branch per byte.
func skipBoring(in string, i int) int {
	// Read from a slice of in at i, with j counting up from 0: the
	// compiler then proves the four reads in bounds and checks none.
	s := in[i:]
	j := 0
	for j < len(s)-3 {
		a, b, c, d := boringByte[s[j]], boringByte[s[j+1]], boringByte[s[j+2]], boringByte[s[j+3]]
		if a&b&c&d != 0 {
			j += 4
			continue
		}
		return i + j + bits.TrailingZeros8(^(a | b<<1 | c<<2)) // (3 if a, b and c are boring)
	}
	for j < len(s) && boringByte[s[j]] != 0 {
		j++
	}
	return i + j
}

// boringByte is 1 for the boring bytes (cBoring) and 0 for the others: a
// byte a mark, which skipBoring combines with shifts (chars' words would
// need their bit picked out first).
var boringByte = func() (t [256]uint8) {
	for c := range t {
		if chars[c]&cBoring != 0 {
			t[c] = 1
		}
	}
	return t
}()

// wordStart returns the start of the word around in[i], not before lo.
func wordStart(in string, i, lo int) int {
	// (The unsigned test takes the place of the read's bounds check.)
	for i > lo && uint(i-1) < uint(len(in)) && chars[in[i-1]]&cWord != 0 {
		i--
	}
	return i
}

// matchWordAt tries the matchers for the word in[ws:e]: those that begin at
// its start, an Authorization scheme ("bearer") before it, and, in a long
// word, a token whose prefix the word runs into (matchGlued). first is
// false when the word right before it, in the same run of bytes, was tried
// already, and with it that scheme. worth is worthTrying's answer for the
// word, which the scan asks before it calls (see wordInContext). schemes
// is the scan's record of the run of token68 bytes the last word looked
// at was in (see schemeLook).
func (s *Scrubber) matchWordAt(in string, ws, e, lo int, first, worth bool, schemes *schemeLook) (hit, bool) {
	if worth {
		switch mayMatchWord(in, ws, e, lo) {
		case wordAny:
			if h, ok := s.matchWord(in, ws, lo); ok {
				return h, true
			}
		case wordBehind:
			if h, ok := matchBehind(in, ws, lo); ok && s.on[h.fam] {
				return h, true
			}
		}
	}
	if ws-lo < 2 {
		if e-ws >= minGluedWord {
			return s.matchGlued(in, ws, e)
		}
		return hit{}, false
	}
	switch p := in[ws-1]; {
	case p == ' ':
		// Credentials after "bearer " or "basic ": a blank after an 'r', a
		// 'c' or another blank.
		if q := in[ws-2] | 0x20; (q == 'r' || q == 'c' || q == ' ') && ws-lo >= len("basic ") {
			if h, ok := matchAfterAuthScheme(in, ws, lo); ok && s.on[h.fam] {
				return h, true
			}
		}
		fallthrough
	case p == '\t' || p == '"' || p == '\'' || p == '`':
		// A value after a secret-ish word in prose: 6 bytes or more after a
		// blank or a quote, with a digit (in its first word or further on:
		// ico-YDwoz024…, pat.6jmu…), not a date.
		// (first does not matter here: a blank or a quote before the word
		// ends the run of bytes the word before belongs to.)
		// (The byte after a short word tells first whether proseRun may
		// hold: a word "123 " is too short a value.)
		if (e-ws >= 6 || e < len(in) && proseByte[in[e]]) && afterProseKey(in, ws-proseQuote(p), lo) && proseRun(in, ws, 6) && (hasDigit(in[ws:e]) || proseDigit(in, e) || e-ws >= minMixed && hasUpperAndLower(in[ws+1:e])) && !dateLike(in[ws:]) {
			if h, ok := s.matchAfterWord(in, ws, lo); ok && s.on[h.fam] {
				return h, true
			}
		}
	case first && chars[p]&cTok68 != 0:
		// The body of a token whose prefix has a dot inside (hvs.…,
		// dp.st.…) after a lower-case word and a dot.
		if p == '.' && isLower(in[ws-2]) {
			if h, ok := s.matchDotted(in, ws, lo); ok {
				return h, true
			}
		}
		// Credentials after "bearer " or "basic " in a run of token68
		// bytes that starts so ("bearer abc.d3f": from "d3f"), if such a
		// word stands near enough before.
		if ws-lo >= len("basic ") && schemes.near(in, lo, ws) {
			if h, ok := matchAfterAuthScheme(in, ws, lo); ok && s.on[h.fam] {
				return h, true
			}
		}
	}
	if e-ws >= minGluedWord {
		return s.matchGlued(in, ws, e)
	}
	return hit{}, false
}

// wordInContext reports whether matchWordAt may find something at the
// word in[ws:e] that worthTrying rules out: after a blank or a quote (a
// value in prose, credentials after a scheme), inside a run of token68
// bytes (first, as matchWordAt's), or in a word long enough for
// matchGlued. Most words that worthTrying rules out are none of these,
// and the scan then skips the call.
func wordInContext(in string, ws, e, lo int, first bool) bool {
	if e-ws >= minGluedWord {
		return true
	}
	if ws-lo < 2 {
		return false
	}
	p := in[ws-1]
	if chars[p]&cProseOpen != 0 {
		// (matchWordAt's tests: a value in prose is 6 bytes or more or
		// goes on after the word; credentials follow a scheme's last
		// letter or another blank and a blank.)
		return e-ws >= 6 || e < len(in) && proseByte[in[e]] || p == ' ' && schemeEnd[in[ws-2]]
	}
	return first && chars[p]&cTok68 != 0
}

// schemeEnd marks the bytes before the blank before a word that
// matchWordAt reads credentials after: the last letter of "bearer" or
// "basic", in either case, or another blank (the bytes whose lower case,
// c|0x20, is 'r', 'c' or ' ', as matchWordAt tests).
var schemeEnd = byteSet("rRcC \x00")

// authRunBack is how far matchAfterAuthScheme looks back over the run of
// token68 bytes a word of credentials is in ("bearer abc.d3f": from "d3f"
// to "abc"), and authBlanks the most blanks it reads between that run's
// start and the scheme.
const (
	authRunBack = 64
	authBlanks  = 9
)

// A schemeLook records, for one call of next, the run of token68 bytes
// that the last word looked at is in, and whether it may hold credentials
// after a scheme: matchAfterAuthScheme reads a word there only if the run
// begins within authRunBack bytes before it, after blanks and the last
// letter of "bearer" or "basic" in either case. Most runs (paths, dotted
// names) do not, and the words of one run share the answer: near finds
// the run's start once, by a look back of at most authRunBack bytes, and
// for each later word of the run reads only the bytes since the word
// before, so that every byte is read a bounded number of times.
type schemeLook struct {
	start int  // where the run begins, or where the look back stopped
	end   int  // in[start:end] is known to be token68 bytes; 0 if nothing is known
	after bool // the run begins at start, after blanks and an 'r' or a 'c'
	// Whether in[lo:] holds "bearer" or "basic" in some case: 0 before
	// near first looks, then 1 or -1. Without either no word after lo is
	// credentials after a scheme, and near answers at once.
	schemes int8
}

// near reports whether the word at in[ws], after a token68 byte, may be
// credentials after a scheme: the run of token68 bytes it is in begins
// no further back than authRunBack bytes and no earlier than lo, after one
// to authBlanks blanks and an 'r' or a 'c' in either case.
func (l *schemeLook) near(in string, lo, ws int) bool {
	if l.schemes == 0 {
		l.schemes = -1
		if holdsScheme(in[lo:]) {
			l.schemes = 1
		}
	}
	if l.schemes < 0 {
		return false
	}
	if l.end > 0 && l.end <= ws && skip(in[:ws], l.end, cTok68) == ws {
		l.end = ws // the same run as the word before
		return l.after && ws-l.start <= authRunBack
	}
	// (m: the bound of lo and authRunBack; t: reads the compiler does not
	// check.)
	r, t, m := ws, in[:ws], max(lo, ws-authRunBack, 0)
	for r-4 >= m && chars[t[r-1]]&chars[t[r-2]]&chars[t[r-3]]&chars[t[r-4]]&cTok68 != 0 {
		r -= 4 // four bytes at one look while all four are token68 bytes
	}
	for r > m && chars[t[r-1]]&cTok68 != 0 {
		r--
	}
	l.start, l.end, l.after = r, ws, false
	if r > lo && in[r-1] == ' ' {
		j := r - 1
		for j > lo && r-j < authBlanks && in[j-1] == ' ' {
			j--
		}
		l.after = j > lo && (in[j-1]|0x20 == 'r' || in[j-1]|0x20 == 'c')
	}
	return l.after
}

// holdsScheme reports whether s holds "bearer" or "basic" in any case,
// the schemes matchAfterAuthScheme reads credentials after. (Not
// indexFold, which tries every byte: IndexByte goes from 'b' to 'b'.)
func holdsScheme(s string) bool {
	for _, b := range [...]byte{'b', 'B'} {
		for t := s; ; {
			k := strings.IndexByte(t, b)
			if k < 0 || k+5 > len(t) {
				break
			}
			if c := t[k+1] | 0x20; c == 'e' && hasPrefixFold(t[k:], "bearer") || c == 'a' && hasPrefixFold(t[k:], "basic") {
				return true
			}
			t = t[k+1:]
		}
	}
	return false
}

// tryEncoded matches the encoded run of the word in[ws:e] (matchEncoded)
// when it may be one, and returns where the next run may begin. It is
// kept out of next, the scan's loop, which stays small.
//
//go:noinline
func (s *Scrubber) tryEncoded(in string, ws, e, from, limit int, seen uint32) (hit, int, bool) {
	if seen&depthMask >= maxDecodeDepth<<depthShift || !longRun(in, ws, e, from, limit) || !mayEncode(in[ws+1:e]) {
		return hit{}, from, false
	}
	return s.matchEncoded(in, ws, e, from, limit, seen&depthMask>>depthShift)
}

// longRun reports whether the word in[ws:e] may belong to a run of
// encoded characters long enough to be decoded: it is, or base64's '+',
// '/' or '=' joins it to more. (Base64 of text is mostly long words: '+'
// and '/', like the URL-safe '-', stand for bytes text rarely has; a
// short word joined by '-' is a name, orders-709486214.)
func longRun(in string, ws, e, lo, limit int) bool {
	return e-ws >= minEncoded || e < limit && (in[e] == '+' || in[e] == '/' || in[e] == '=') ||
		ws > lo && (in[ws-1] == '+' || in[ws-1] == '/')
}

// mayEncode reports whether the bytes of a word after its first could be
// part of an encoded run: hexadecimal is mostly digits, and base64 of
// text has a digit every few bytes (one in seven characters stands for
// one), which a long run almost never lacks; names in code and text
// (IllegalStateException, Unavailable) have none.
func mayEncode(w string) bool {
	for i := 0; i < len(w); i++ {
		if isDigit(w[i]) {
			return true
		}
	}
	return false
}

// proseDigit reports whether the run of bytes a value in prose may hold
// that goes on at in[e] has a digit, within 24 bytes.
func proseDigit(in string, e int) bool {
	for k := e; k < len(in) && k-e < 24 && proseByte[in[k]]; k++ {
		if isDigit(in[k]) {
			return true
		}
	}
	return false
}

// proseRun reports whether in[i:] begins with n bytes that a value in
// prose may hold.
func proseRun(in string, i, n int) bool {
	if i+n > len(in) {
		return false
	}
	for _, c := range []byte(in[i : i+n]) {
		if !proseByte[c] {
			return false
		}
	}
	return true
}

// dottedPrefixStarts are the first bytes of the vendor prefixes with a
// '.' inside (hvs., dp.st., sk.eyJ), which the scanner reaches only at the
// first word after a dot.
const dottedPrefixStarts = "dhs"

// (matchDotted compares a byte with each of the three.)
var _ = [1]int{}[len(dottedPrefixStarts)-3]

// matchDotted tries the vendor tokens whose prefix has a '.' inside and
// whose body begins with the word at in[ws], right after a '.': the prefix
// is one of the few words and dots before it.
func (s *Scrubber) matchDotted(in string, ws, lo int) (hit, bool) {
	// (m: the bound of lo and 12 bytes; t: reads the compiler does not
	// check.)
	r, t, m := ws-1, in[:ws], max(lo, ws-12, 0)
	for r > m && chars[t[r-1]]&(cLowerDigit|cDotted) != 0 {
		r--
	}
	for p := r; p < ws-1; p++ {
		if c := in[p]; c != dottedPrefixStarts[0] && c != dottedPrefixStarts[1] && c != dottedPrefixStarts[2] ||
			p > lo && (chars[in[p-1]]&cWord != 0 || in[p-1] != '.' && p != r) {
			continue
		}
		if !mayBeDotted(in, p) {
			continue
		}
		if h, ok := matchVendor(in, p, lo); ok && h.end > ws && s.on[h.fam] {
			return h, true
		}
	}
	return hit{}, false
}

// mayBeDotted reports whether a vendor token that reaches past a '.' may
// begin at in[i]: one whose prefix holds a '.' or whose body may, by the
// first two bytes of its prefix. matchDotted reads only those: another
// token at in[i] ends before the '.'.
func mayBeDotted(in string, i int) bool { return dottedPairs.at(in, i) }

// dottedPairs are the first two bytes of the prefixes mayBeDotted looks
// for.
var dottedPairs = func() (t pairSet) {
	for _, v := range vendors {
		if strings.IndexByte(v.prefix, '.') >= 0 || v.set&cDotted != 0 {
			t.add(v.prefix[0], v.prefix[1])
		}
	}
	return t
}()

// wordGate is the scan's gate before matchWordAt for the word in[ws:e]
// (a run of [A-Za-z0-9_]): gateWorth if the word could begin a token or an
// identifier, gateContext if only its context may hold a finding
// (wordInContext), 0 if neither, and the scan goes on. It is worthTrying
// and wordInContext in one call, kept out of next's loop.
//
// The first test rules out almost every ordinary word and number by its
// first byte, its length and the byte after it: tokens are long or
// continue with '-' or '.'; IPv4 addresses are short numbers before a '.',
// IPv6 groups before a ':'; card numbers start with 2 to 6; the short
// words that matter are four-character IBAN groups and "Bearer" or
// "Basic".
func wordGate(in string, ws, e, lo int, first bool) uint8 {
	c := in[ws]
	w := e - ws
	var next byte
	if e < len(in) {
		next = in[e]
	}
	if chars[c]&cStart == 0 {
		// An IBAN in lower case, an Azure AD client secret, a Terraform
		// Cloud token.
		if w >= 4 && isLetter(in[ws+1]) && isDigit(in[ws+2]) && isDigit(in[ws+3]) &&
			(w >= 15 || w == 4 && (next == ' ' || next == '-')) ||
			next == '~' && w == 5 || next == '.' && w == 14 {
			return gateWorth
		}
		goto context
	}
	if isDigit(c) {
		if w >= 13 {
			return gateWorth
		}
		// A Google OAuth refresh token: 1//0…
		if next == '/' && w == 1 && c == '1' && e+1 < len(in) && in[e+1] == '/' {
			return gateWorth
		}
		// (Most numbers in text end before a byte none of the cases
		// below reads.)
		if !digitNext[next] {
			goto context
		}
		p := prev(in, ws, lo)
		// A number after "<digit>." continues a dotted number (1.2.3.4.5).
		if p == '.' && ws-2 >= lo && isDigit(in[ws-2]) {
			goto context
		}
		// Card numbers are written in groups of four or more digits.
		card := '2' <= c && c <= '6' && w >= 4 && skipMax(in, e+1, cDigit, 4) == e+5
		switch next {
		case '.':
			// An IPv4 address, a MAC address written 3c22.fb9a.10e4.
			if w <= 3 && is(in, e+1, cDigit) && p != '.' || w == 4 && p != '.' {
				return gateWorth
			}
			goto context
		case '-':
			// A UUID, a card, a social security number, a MAC address;
			// not the groups of a date (2025-06-01).
			if w == 8 || card || (w == 3 || w == 2) && p != '-' {
				return gateWorth
			}
			goto context
		case ':':
			if w <= 4 && p != ':' && p != '.' || w >= 8 && w <= 10 {
				return gateWorth
			}
			goto context
		case ' ':
			if card {
				return gateWorth
			}
			goto context
		case '$':
			// A password hash's identifier ($1$, $2b$, $6$; see
			// matchCryptHash).
			if w <= 2 && p == '$' {
				return gateWorth
			}
			goto context
		case '\n', '\r':
			// A card number that a line break split (41111111⏎11111111).
			if '2' <= c && c <= '6' && w >= 4 && (is(in, e+1, cDigit) || next == '\r' && is(in, e+2, cDigit)) {
				return gateWorth
			}
			goto context
		}
		goto context
	}
	switch next {
	case '-', '.':
		return gateWorth
	case ':':
		if w <= 4 && chars[c]&cHex != 0 || w >= 10 {
			return gateWorth
		}
		goto context
	case '~':
		if w == 5 && in[e-1] == 'Q' { // an Azure AD client secret
			return gateWorth
		}
		goto context
	case '$':
		if ws > lo && in[ws-1] == '$' { // a password hash's identifier ($argon2id$, $krb5tgs$)
			return gateWorth
		}
		goto context
	case ' ':
		switch w {
		case 4:
			// An IBAN's first group.
			if isLetter(in[ws+1]) && isDigit(in[ws+2]) && isDigit(in[ws+3]) {
				return gateWorth
			}
			goto context
		case 5:
			if hasPrefixFold(in[ws:], "basic") {
				return gateWorth
			}
			goto context
		case 6:
			if hasPrefixFold(in[ws:], "bearer") {
				return gateWorth
			}
			goto context
		}
	}
	if w >= 10 {
		return gateWorth
	}
	goto context
context:
	if wordInContext(in, ws, e, lo, first) {
		return gateContext
	}
	return 0
}

// worthTrying reports whether the word in[ws:e] could begin a token or an
// identifier (wordGate's gateWorth).
func worthTrying(in string, ws, e, lo int) bool {
	return wordGate(in, ws, e, lo, false) == gateWorth
}

// wordGate's answers.
const (
	gateContext = 1 + iota
	gateWorth
)

// digitNext are the bytes after a number that worthTrying's cases read.
var digitNext = byteSet(".-: \n\r$")

// mayMatchWord reports which matchers of matchWord may find something at
// the word in[ws:e]: none (wordNone), as for most words of text, which
// start nothing; only matchBehind (wordBehind), as for most words after a
// '.' or a '/' (java.lang.IllegalStateException, /usr/lib/Python3); or
// any (wordAny). It lets through, by what each matcher needs to begin:
//   - to matchBehind only, a word after a byte that may end a token's
//     prefix ('/', '+', '=', '~', '.', '-');
//   - a word after a bot id (':' before 'A'; see matchUnprefixed);
//   - a password hash's identifier between '$'s (matchCryptHash);
//   - a word whose first three bytes begin a prefix (startTriples; or
//     whose first two are a prefix of two, wildPairs);
//   - a word of hexadecimal digits in the shape of a MAC address, an IPv6
//     group, a UUID or a hexadecimal token's first group (matchHexStart),
//     and a number (an IPv4 address, a card, a bot id, …);
//   - the start of an IBAN, an Azure AD client secret or a Terraform Cloud
//     token (matchIBAN, matchShapedToken);
//   - a MaxMind license key, a Dropbox long-lived token, a Discord bot
//     token's first part, a New Relic license key and a Salesforce
//     session id, which have no prefix (matchUnprefixed,
//     matchDiscordToken, matchHexStart).
func mayMatchWord(in string, ws, e, lo int) uint8 {
	c := in[ws]
	behind := uint8(wordNone)
	if ws > lo {
		switch in[ws-1] {
		case '/', '+', '=', '~', '.', '-':
			behind = wordBehind
		case ':':
			if c == 'A' {
				return wordAny
			}
		case '$':
			if e < len(in) && in[e] == '$' {
				return wordAny // a password hash's identifier
			}
		}
	}
	if startPairs.at(in, ws) && (wildPairs.at(in, ws) || startTriples.at(in, ws)) {
		return wordAny
	}
	w := e - ws
	var next byte
	if e < len(in) {
		next = in[e]
	}
	if chars[c]&cHex != 0 {
		switch next {
		case '-':
			if w == 2 || w == 8 || w == 32 {
				return wordAny
			}
		case ':':
			if w <= 4 {
				return wordAny
			}
		case '.':
			if w == 4 {
				return wordAny
			}
		}
		if isDigit(c) && skip(in, ws, cDigit) == e {
			return wordAny
		}
	}
	if w >= 4 && isLetter(c) && isLetter(in[ws+1]) && isDigit(in[ws+2]) && isDigit(in[ws+3]) {
		return wordAny
	}
	if ws+5 < len(in) && in[ws+5] == '~' || ws+14 < len(in) && in[ws+14] == '.' {
		return wordAny
	}
	switch {
	case w >= 40 && in[ws+6] == '_', w >= 21 && in[ws+11:ws+21] == "AAAAAAAAAA", w == 40 && in[ws+36:e] == "NRAL":
		return wordAny
	case w >= 24 && next == '.' && (c == 'M' || c == 'N' || c == 'O'):
		return wordAny
	case next == '!' && (w == 15 || w == 18) && c == '0':
		return wordAny // a Salesforce organization's id (matchSalesforce)
	}
	return behind
}

// What mayMatchWord lets a word through to.
const (
	wordNone   = iota // no matcher
	wordBehind        // matchBehind only
	wordAny           // any matcher of matchWord
)

// matchWord tries the matchers that begin at a word start.
func (s *Scrubber) matchWord(in string, i, lo int) (hit, bool) {
	if i > lo && in[i-1] == '$' {
		if h, ok := matchCryptHash(in, i-1); ok && s.on[h.fam] {
			return h, true
		}
	}
	if h, ok := matchToken(in, i, lo); ok && s.on[h.fam] {
		return h, true
	}
	c := in[i]
	if chars[c]&cHex != 0 {
		if h, ok := matchHexStart(in, i, lo); ok && s.on[h.fam] {
			return h, true
		}
	}
	if isLetter(c) && i+4 <= len(in) && isDigit(in[i+2]) && isDigit(in[i+3]) {
		if h, ok := matchIBAN(in, i); ok && s.on[h.fam] {
			return h, true
		}
	}
	if i+5 < len(in) && in[i+5] == '~' || i+14 < len(in) && in[i+14] == '.' {
		if h, ok := matchShapedToken(in, i); ok && s.on[h.fam] {
			return h, true
		}
	}
	return hit{}, false
}

// punctMayMatch reports whether matchPunct may find something at the
// trigger in[i], as far as the bytes next to a '/' or a '(' tell: a '/'
// after '<' (an XML element's end) or 'm' (a webhook's host) or before 'h'
// or 'U' (a home directory); a '(' before a quote (a call's argument) or
// a digit from 2 to 9 (a phone number's area code).
func punctMayMatch(in string, i, lo int) bool {
	switch in[i] {
	case '/':
		return i > lo && (in[i-1] == '<' || in[i-1] == 'm') || i+1 < len(in) && (in[i+1] == 'h' || in[i+1] == 'U')
	case '(':
		return i+1 < len(in) && afterParen[in[i+1]]
	}
	return true
}

// afterParen marks the bytes after a '(' that matchPunct reads on from:
// a quote (matchSetter) and a digit from 2 to 9 (matchNANPPhone).
var afterParen = byteSet("\"'`23456789")

// matchPunct tries the matchers that begin at the trigger byte in[i].
func (s *Scrubber) matchPunct(in string, esc escMarks, i, lo int) (hit, bool) {
	var h hit
	var ok bool
	switch in[i] {
	case '@':
		h, ok = matchEmail(in, i, lo)
	case ':':
		switch {
		case strings.HasPrefix(in[i:], "://"):
			return s.matchURL(in, esc, i, lo)
		case strings.HasPrefix(in[i:], "::"):
			if i > lo && (chars[in[i-1]]&cWord != 0 || in[i-1] == ':' || in[i-1] == '.') {
				return hit{}, false
			}
			h, ok = matchIPv6(in, i)
		default:
			if h, ok := s.matchKeyValue(in, esc, i, lo); ok {
				return h, true
			}
			if i+1 >= len(in) || in[i+1] <= ' ' {
				return hit{}, false // (matchBarePair's first test: no pair before a blank)
			}
			return s.matchBarePair(in, i, lo)
		}
	case '=':
		return s.matchKeyValue(in, esc, i, lo)
	case '+':
		if i > lo && chars[in[i-1]]&cWord != 0 {
			return hit{}, false
		}
		h, ok = matchPhone(in, i)
	case '-':
		if i > lo && gluedBefore[in[i-1]] != 0 {
			// A prefix that the word before runs into (tokenxoxb-…).
			if h, ok := s.gluedAt(in, wordStart(in, i, lo), i); ok {
				return h, true
			}
		}
		if i+1 < len(in) && in[i+1] == '-' {
			if h, ok = matchPEM(in, i); !ok {
				return s.matchFlag(in, esc, i, lo)
			}
		} else if i+2 < len(in) && in[i+1] == 'u' && in[i+2] == ' ' {
			return s.matchFlag(in, esc, i, lo)
		} else if i+2 < len(in) && in[i+1] == 'p' && chars[in[i+2]]&cWord != 0 {
			return s.matchMySQLPassword(in, i, lo)
		}
	case '/':
		if i > lo && in[i-1] == '<' {
			return s.matchXML(in, i-1, lo)
		}
		// A webhook's host ends with "com"; a home directory is
		// /home/… or /Users/….
		if i > lo && in[i-1] == 'm' {
			h, ok = matchWebhookAt(in, i, lo)
		}
		if !ok && i+1 < len(in) && (in[i+1] == 'h' || in[i+1] == 'U') {
			h, ok = matchHome(in, i, lo)
		}
	case '\\':
		h, ok = matchHome(in, i, lo)
	case '(':
		if i+1 < len(in) && isDigit(in[i+1]) {
			h, ok = matchNANPPhone(in, i, lo)
			break
		}
		return s.matchSetter(in, esc, i, lo)
	}
	return h, ok && s.on[h.fam]
}

// placeholderLen returns the length of the placeholder at the start of s,
// or 0 if there is none.
func placeholderLen(s string) int {
	if !strings.HasPrefix(s, placeholderPrefix) {
		return 0
	}
	for j := len(placeholderPrefix); j < len(s) && j < 128; j++ {
		switch c := s[j]; {
		case c == ']':
			if j == len(placeholderPrefix) {
				return 0
			}
			return j + 1
		case !isLower(c) && !isDigit(c) && c != '_' && c != ':':
			return 0
		}
	}
	return 0
}

func (s *Scrubber) allowed(v string) bool {
	if s.allow == nil {
		return false
	}
	_, ok := s.allow[v]
	return ok
}

func (s *Scrubber) keyed(f family) bool {
	return s.key != nil && isIdentifier(f)
}

// replace returns in with every hit replaced by its placeholder, built in
// one buffer of exactly the right size.
func (s *Scrubber) replace(in string, hits []hit) string {
	size := len(in)
	for _, h := range hits {
		size += len(s.holders[h.fam]) - (h.end - h.start)
		if s.keyed(h.fam) {
			size += 1 + 2*hashBytes
		}
	}
	var b strings.Builder
	b.Grow(size)
	var mac hash.Hash
	prev := 0
	for _, h := range hits {
		b.WriteString(in[prev:h.start])
		if s.keyed(h.fam) {
			if mac == nil {
				mac = hmac.New(sha256.New, s.key)
			}
			s.writeKeyed(&b, mac, h.fam, in[h.start:h.end])
		} else {
			b.WriteString(s.holders[h.fam])
		}
		prev = h.end
	}
	b.WriteString(in[prev:])
	return b.String()
}

// writeKeyed writes [REDACTED:<family>:<hmac prefix>] for the value v.
func (s *Scrubber) writeKeyed(b *strings.Builder, mac hash.Hash, f family, v string) {
	mac.Reset()
	io.WriteString(mac, v)
	var sum [sha256.Size]byte
	var digits [2 * hashBytes]byte
	hex.Encode(digits[:], mac.Sum(sum[:0])[:hashBytes])
	b.WriteString(placeholderPrefix)
	b.WriteString(s.names[f])
	b.WriteByte(':')
	b.Write(digits[:])
	b.WriteByte(']')
}
