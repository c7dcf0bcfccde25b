package scrub

import (
	"bytes"
	"strings"
)

// This file holds the matchers that find a secret by its context: the
// value after a secret-ish key (key=value, key: value, "key": "value"),
// the Authorization and Cookie headers, and credentials in URLs.

const (
	maxKey      = 64 // longest key considered
	minValueLen = 3  // shortest value redacted after a secret-ish key
)

// kvKind says what a secret-ish key guards.
type kvKind uint8

const (
	kvNone kvKind = iota
	kvPassword
	kvSecret
	kvAWS
	kvAzure
	kvCookie
	kvAuthorization
)

// keyTerms are matched against the end of a key, lower-cased and with '_',
// '-' and '.' removed, so "DB_PASSWORD", "dbPassword" and "db.password" are
// all "dbpassword". Short, common terms must start a word of the key
// ("db_pass" but not "bypass"). Earlier terms win.
var keyTerms = [...]struct {
	term string
	word bool // the term must start a word of the key
	kind kvKind
}{
	{"sharedaccesssignature", false, kvAzure},
	{"sharedaccesskey", false, kvAzure},
	{"accountkey", false, kvAzure},
	{"authorization", false, kvAuthorization},
	{"cookie", true, kvCookie},
	{"password", false, kvPassword},
	{"passwd", false, kvPassword},
	{"passphrase", false, kvPassword},
	{"pwd", true, kvPassword},
	{"pass", true, kvPassword},
	{"secret", false, kvSecret},
	{"token", false, kvSecret},
	{"credential", false, kvSecret},
	{"credentials", false, kvSecret},
	{"apikey", false, kvSecret},
	{"accesskey", false, kvSecret},
	{"privatekey", false, kvSecret},
	{"secretkey", false, kvSecret},
	{"signingkey", false, kvSecret},
	{"encryptionkey", false, kvSecret},
	{"masterkey", false, kvSecret},
	{"signature", false, kvSecret},
	{"auth", true, kvSecret},
}

// keyEnds holds the last letters of keyTerms and queryKeys, in both cases:
// most keys (error:, at:, name=) are ruled out by their last byte.
var keyEnds = func() (t [256]bool) {
	for _, c := range []byte("dehlnstyg") {
		t[c], t[c-'a'+'A'] = true, true
	}
	return t
}()

// queryKeys are further URL query parameters that carry secrets (signed
// URLs, OAuth codes, sessions), compared like keyTerms but whole.
var queryKeys = [...]string{"key", "sig", "code", "session", "sessionid", "sid", "jwt"}

// stopWords are values that say something about a secret rather than being
// one ("token: expired", "password=none").
var stopWords = [...]string{
	"true", "false", "yes", "null", "nil", "none", "undefined", "empty",
	"unset", "n/a", "redacted", "hidden", "masked", "removed", "omitted",
	"required", "optional", "missing", "invalid", "expired", "revoked",
	"incorrect", "wrong", "not", "was", "must", "should", "cannot",
	"has", "have", "had", "will", "for", "the", "and", "failed", "changed",
	"provided", "needed", "bearer", "basic",
}

// normalizeKey lower-cases key into buf without '_', '-' and '.', and
// returns a bit mask of the positions where a word of the key begins.
func normalizeKey(key string, buf *[maxKey]byte) (norm []byte, words uint64) {
	n := 0
	wordStart, prevLower := true, false
	for i := 0; i < len(key) && n < len(buf); i++ {
		c := key[i]
		if c == '_' || c == '-' || c == '.' {
			wordStart, prevLower = true, false
			continue
		}
		up := isUpper(c)
		if wordStart || up && prevLower {
			words |= 1 << n
		}
		if up {
			c += 'a' - 'A'
		}
		buf[n] = c
		n++
		wordStart, prevLower = false, !up
	}
	return buf[:n], words
}

// classifyKey says what key guards. In a URL query (query is true) a few
// more keys count, and every kind of key is a query secret.
func classifyKey(key string, query bool) kvKind {
	var buf [maxKey]byte
	norm, words := normalizeKey(key, &buf)
	for _, t := range keyTerms {
		p := len(norm) - len(t.term)
		if p < 0 || string(norm[p:]) != t.term || t.word && words&(1<<p) == 0 {
			continue
		}
		if t.kind == kvSecret && (bytes.Contains(norm, []byte("aws")) || bytes.HasSuffix(norm, []byte("secretaccesskey"))) {
			return kvAWS
		}
		return t.kind
	}
	if query {
		for _, q := range queryKeys {
			if string(norm) == q {
				return kvSecret
			}
		}
	}
	return kvNone
}

// matchKeyValue matches the value after a secret-ish key at the separator
// in[i], '=' or ':'. The key is read backwards, never before lo.
func (s *Scrubber) matchKeyValue(in string, i, lo int) (hit, bool) {
	sep := in[i]
	if i+1 < len(in) && (in[i+1] == '=' || sep == ':' && in[i+1] == ':') {
		return hit{}, false // ==, :=, ::
	}
	// The key: optional blanks, an optional (escaped) closing quote, then
	// key bytes.
	j := i
	for j > lo && i-j < 8 && (in[j-1] == ' ' || in[j-1] == '\t') {
		j--
	}
	if j > lo && (in[j-1] == '"' || in[j-1] == '\'') {
		j--
		if j > lo && in[j-1] == '\\' {
			j--
		}
	}
	ke := j
	if j == lo || !keyEnds[in[j-1]] {
		return hit{}, false
	}
	for j > lo && ke-j <= maxKey && chars[in[j-1]]&cKey != 0 {
		j--
	}
	if j == ke || ke-j > maxKey {
		return hit{}, false
	}
	query := sep == '=' && ke == i && j > lo && (in[j-1] == '?' || in[j-1] == '&')
	kind := classifyKey(in[j:ke], query)
	if kind == kvNone {
		return hit{}, false
	}

	// The value.
	v := i + 1
	for v < len(in) && v-i <= 8 && (in[v] == ' ' || in[v] == '\t') {
		v++
	}
	if v >= len(in) {
		return hit{}, false
	}
	if kind == kvAuthorization && !query {
		return s.matchAuthorization(in, v)
	}
	if strings.HasPrefix(in[v:], "-----BEGIN ") {
		if h, ok := matchPEM(in, v); ok && s.on[famPrivateKey] {
			return h, true
		}
	}
	mode := stopValue
	switch {
	case query:
		mode = stopQuery
	case kind == kvAzure:
		mode = stopAzure
	case kind == kvCookie && sep == ':':
		mode = stopLine
	}
	vs, closing := openValue(in, v)
	if !plausibleStart(in[vs:], closing != "") {
		return hit{}, false
	}
	ve := valueEnd(in, vs, closing, mode)
	val := in[vs:ve]
	if !plausibleValue(val) {
		return hit{}, false
	}
	f := famSecret
	switch {
	case query:
		f = famQuerySecret
	case kind == kvPassword:
		f = famPassword
	case kind == kvAzure:
		f = famAzureKey
	case kind == kvCookie:
		f = famCookie
	case kind == kvAWS && len(val) == 40 && skip(val, 0, cB64) == 40:
		f = famAWSSecretKey
	}
	return s.refine(in, vs, ve, f)
}

// refine returns the value in[vs:ve] as a hit of family f, or of the more
// specific family of the vendor token or private key that the value is.
func (s *Scrubber) refine(in string, vs, ve int, f family) (hit, bool) {
	if g, ok := tokenFamily(in[:ve], vs); ok && s.on[g] {
		f = g
	}
	return hit{vs, ve, f}, s.on[f]
}

// tokenFamily returns the family of the vendor token that is exactly
// in[vs:], if any.
func tokenFamily(in string, vs int) (family, bool) {
	if strings.HasPrefix(in[vs:], "-----BEGIN ") {
		return famPrivateKey, true
	}
	h, ok := matchToken(in, vs, vs)
	if !ok && isDigit(in[vs]) {
		if d := skip(in, vs, cDigit); d-vs >= 8 && d-vs <= 10 && d < len(in) && in[d] == ':' {
			h, ok = matchTelegram(in, vs, d)
		}
	}
	return h.fam, ok && h.start == vs && h.end == len(in)
}

// Value modes: the bytes that end an unquoted value.
const (
	stopValue uint8 = 1 << iota // key=value, key: value
	stopQuery                   // URL query parameters
	stopAzure                   // connection strings: only ';' and blanks
	stopLine                    // header values: the rest of the line
)

var valueStops = func() (t [256]uint8) {
	for _, c := range []byte("\n\r") {
		t[c] = stopValue | stopQuery | stopAzure | stopLine
	}
	for _, c := range []byte(" \t\"'") {
		t[c] |= stopValue | stopQuery | stopAzure
	}
	for _, c := range []byte(`"'`) {
		t[c] |= stopLine
	}
	for _, c := range []byte(",;&<>)]}`") {
		t[c] |= stopValue
	}
	for _, c := range []byte("&#<>)`") {
		t[c] |= stopQuery
	}
	for _, c := range []byte(";<>") {
		t[c] |= stopAzure
	}
	return t
}()

// openValue returns where the value that begins at in[v] starts, past an
// opening quote, and the quote that closes it: "", `"`, `'`, or `\"` for
// JSON escaped inside a string.
func openValue(in string, v int) (vs int, closing string) {
	switch {
	case in[v] == '"' || in[v] == '\'':
		return v + 1, in[v : v+1]
	case strings.HasPrefix(in[v:], `\"`):
		return v + 2, `\"`
	}
	return v, ""
}

// valueEnd returns the end of the value starting at in[vs]: the closing
// quote (or the end of the line if it is missing; a backslash escapes the
// byte after it), or for an unquoted value the first byte that ends a value
// in this mode, less a full stop ending a sentence.
func valueEnd(in string, vs int, closing string, mode uint8) int {
	e := vs
	if closing != "" {
		for e < len(in) && in[e] != '\n' && in[e] != '\r' && !strings.HasPrefix(in[e:], closing) {
			if in[e] == '\\' {
				e++
			}
			e++
		}
		return min(e, len(in))
	}
	for e < len(in) && valueStops[in[e]]&mode == 0 {
		e++
	}
	for mode == stopLine && e > vs && in[e-1] == ' ' {
		e--
	}
	for e > vs && in[e-1] == '.' {
		e--
	}
	return e
}

// plausibleStart reports whether a value beginning with rest could be a
// secret: not a placeholder, not a template (${VAR}, {{ .x }}, $(cmd),
// <token>) and, unquoted, not a nested structure. It looks only at the
// first bytes, so that a value rejected here costs nothing to read.
func plausibleStart(rest string, quoted bool) bool {
	switch {
	case rest == "",
		strings.HasPrefix(rest, placeholderPrefix),
		strings.HasPrefix(rest, "${"), strings.HasPrefix(rest, "{{"), strings.HasPrefix(rest, "$("),
		rest[0] == '<',
		!quoted && (rest[0] == '{' || rest[0] == '['):
		return false
	}
	return true
}

// plausibleValue reports whether a whole value could be a secret: long
// enough, not masked (***) and not a stop word.
func plausibleValue(val string) bool {
	if len(val) < minValueLen || strings.Trim(val, "*xX#.•") == "" {
		return false
	}
	for _, w := range stopWords {
		if strings.EqualFold(val, w) {
			return false
		}
	}
	return true
}

// authSchemes are the Authorization schemes whose name is kept in front of
// the redacted credentials.
var authSchemes = [...]string{"bearer", "basic", "token", "digest", "negotiate", "ntlm", "dpop", "apikey", "aws4-hmac-sha256"}

// matchAuthorization matches the credentials of an Authorization header
// value at in[v]. A known scheme ("Bearer", "Basic", ...) stays; the
// credentials after it go: for Bearer and Basic the token68 after the
// scheme, for others the rest of the value. A value without a known scheme
// is a credential itself, up to the first blank.
func (s *Scrubber) matchAuthorization(in string, v int) (hit, bool) {
	a, closing := openValue(in, v)
	w := a
	for w < len(in) && w-a <= 16 && (chars[in[w]]&cAlnum != 0 || in[w] == '-') {
		w++
	}
	if w < len(in) && in[w] == ' ' && isAuthScheme(in[a:w]) {
		c := w
		for c < len(in) && in[c] == ' ' {
			c++
		}
		if !plausibleStart(in[c:], true) {
			return hit{}, false
		}
		var e int
		f := famSecret
		switch {
		case strings.EqualFold(in[a:w], "bearer"):
			e, f = tok68End(in, c), famBearerToken
		case strings.EqualFold(in[a:w], "basic"):
			e, f = tok68End(in, c), famBasicAuth
		default:
			e = valueEnd(in, c, closing, stopLine)
		}
		if !plausibleValue(in[c:e]) {
			return hit{}, false
		}
		if f == famSecret {
			return s.refine(in, c, e, f)
		}
		return hit{c, e, f}, s.on[f]
	}
	if !plausibleStart(in[a:], closing != "") {
		return hit{}, false
	}
	e := valueEnd(in, a, "", stopValue)
	if closing != "" {
		e = a
		for e < len(in) && !isSpace(in[e]) && !strings.HasPrefix(in[e:], closing) {
			e++
		}
	}
	if !plausibleValue(in[a:e]) {
		return hit{}, false
	}
	return s.refine(in, a, e, famSecret)
}

func isAuthScheme(w string) bool {
	for _, s := range authSchemes {
		if strings.EqualFold(w, s) {
			return true
		}
	}
	return false
}

// dbSchemes are URL schemes of databases and brokers; their connection
// strings lose the whole user:password part.
var dbSchemes = [...]string{
	"postgres", "postgresql", "mysql", "mariadb", "mongodb", "mongodb+srv",
	"redis", "rediss", "amqp", "amqps", "mssql", "sqlserver", "clickhouse",
	"cockroachdb", "cassandra", "couchdb", "neo4j", "neo4j+s", "bolt",
	"memcached", "nats", "oracle", "snowflake",
}

// matchURL matches the credentials in scheme://user:password@host at the
// ':' in[i] of "://". The scheme is read backwards, never before lo.
func (s *Scrubber) matchURL(in string, i, lo int) (hit, bool) {
	k := i
	for k > lo && i-k < 32 && chars[in[k-1]]&cScheme != 0 {
		k--
	}
	for k < i && !isLetter(in[k]) {
		k++
	}
	if k == i {
		return hit{}, false
	}
	scheme := in[k:i]
	a := i + len("://")
	// The user information ends at the last '@' before the path. A '['
	// cannot appear in it unescaped: it starts an IPv6 host, or a
	// placeholder.
	at, e := -1, a
	for ; e < len(in) && e-a < 512; e++ {
		c := in[e]
		if c == '/' || c == '?' || c == '#' || c == '[' || c <= ' ' || strings.IndexByte("\"'<>`", c) >= 0 {
			break
		}
		if c == '@' {
			at = e
		}
	}
	if at < 0 {
		return hit{}, false
	}
	user := in[a:at]
	colon := strings.IndexByte(user, ':')
	if colon < 0 {
		return hit{}, false
	}
	// A finding inside the user name comes first, so that a second pass,
	// which sees the password already redacted, finds the same.
	if h, ok := s.next(in, a, a+colon); ok {
		return h, true
	}
	password := user[colon+1:]
	if password == "" {
		return hit{}, false
	}
	for _, db := range dbSchemes {
		if strings.EqualFold(scheme, db) {
			return hit{a, at, famDBCredentials}, s.on[famDBCredentials]
		}
	}
	return s.refine(in, a+colon+1, at, famURLPassword)
}
