package scrub

import (
	"bytes"
	"slices"
	"strings"
)

// This file holds the matchers that find a secret by its context: the
// value after a secret-ish key (key=value, key: value, "key": "value",
// key => value, a list of values), the Authorization and Cookie headers,
// and credentials in URLs. prose.go has the values after secret-ish words
// and command-line flags.

const (
	maxKey       = 64  // longest key considered
	minValueLen  = 3   // shortest value redacted after a secret-ish key
	maxQuoted    = 512 // how far a quoted value is followed across line breaks
	maxListItems = 64  // elements of a list read after a secret-ish key
	maxList      = 2048
	maxUserinfo  = 512 // longest user:password in a URL
	maxHost      = 253 // longest host name
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
	kvSSN
)

// keyTerm is matched against the end of a key, lower-cased and with '_',
// '-' and '.' removed, so "DB_PASSWORD", "dbPassword", "db-password" and
// "db.password" are all "dbpassword", and "X-Api-Key", "x-api-key",
// "API_KEY" and "apiKey" all end in "apikey".
type keyTerm struct {
	term string
	word bool // the term must start a word of the key ("db_pass" but not "bypass")
	kind kvKind
	// counts: the key may name a count rather than secrets (a plural:
	// "api_keys" holds keys, "api_keys: 3" counts them), so a number
	// after it is not redacted.
	counts bool
}

// keyTerms: earlier terms win.
var keyTerms = [...]keyTerm{
	{"sharedaccesssignature", false, kvAzure, false},
	{"sharedaccesskey", false, kvAzure, false},
	{"accountkey", false, kvAzure, false},
	{"authorization", false, kvAuthorization, false},
	{"cookie", true, kvCookie, false},
	{"cookies", true, kvCookie, true},
	{"password", false, kvPassword, false},
	{"passwords", false, kvPassword, true},
	{"passwd", false, kvPassword, false},
	{"passphrase", false, kvPassword, false},
	{"passcode", false, kvPassword, false},
	{"pwd", true, kvPassword, false},
	{"pass", true, kvPassword, false},
	{"passwort", false, kvPassword, false},
	{"wachtwoord", false, kvPassword, false},
	{"motdepasse", false, kvPassword, false},
	{"contrasena", false, kvPassword, false},
	{"senha", true, kvPassword, false},
	{"secret", false, kvSecret, false},
	{"secrets", false, kvSecret, true},
	{"token", false, kvSecret, false},
	{"accesstokens", false, kvSecret, true},
	{"refreshtokens", false, kvSecret, true},
	{"apitokens", false, kvSecret, true},
	{"authtokens", false, kvSecret, true},
	{"sessiontokens", false, kvSecret, true},
	{"credential", false, kvSecret, false},
	{"credentials", false, kvSecret, true},
	{"creds", true, kvSecret, true},
	{"apikey", false, kvSecret, false},
	{"apikeys", false, kvSecret, true},
	{"accesskey", false, kvSecret, false},
	{"accesskeys", false, kvSecret, true},
	{"privatekey", false, kvSecret, false},
	{"secretkey", false, kvSecret, false},
	{"signingkey", false, kvSecret, false},
	{"encryptionkey", false, kvSecret, false},
	{"masterkey", false, kvSecret, false},
	{"subscriptionkey", false, kvSecret, false},
	{"functionkey", false, kvSecret, false},
	{"functionskey", false, kvSecret, false},
	{"hmackey", false, kvSecret, false},
	{"licensekey", false, kvSecret, false},
	{"clientkey", false, kvSecret, false},
	{"appkey", true, kvSecret, false},
	{"sessionkey", false, kvSecret, false},
	{"sessionid", false, kvSecret, false},
	{"sessid", false, kvSecret, false},
	{"signature", false, kvSecret, false},
	{"cvv", true, kvSecret, false},
	{"cvv2", true, kvSecret, false},
	{"cvc", true, kvSecret, false},
	{"ssn", true, kvSSN, false},
	{"socialsecuritynumber", false, kvSSN, false},
	{"socialsecurityno", false, kvSSN, false},
	{"auth", true, kvSecret, false},
	{"pat", true, kvSecret, false},          // a personal access token (GITHUB_PAT, ADO_PAT); its value must look random (keyKind)
	{"identified", true, kvPassword, false}, // SQL: IDENTIFIED BY '…'
}

// keyQualifiers make "key" secret-ish when they come before it, as in
// "API key" or "secret key".
var keyQualifiers = [...]string{
	"api", "access", "secret", "private", "signing", "encryption", "license",
	"master", "subscription", "client", "account", "auth", "app", "hmac",
}

// qualifiedKey reports whether the word in[k:e] is "key" or "keys" and
// the word before it, after a blank, is one of keyQualifiers.
func qualifiedKey(in string, k, e, lo int) bool {
	if w := in[k:e]; len(w) < 3 || len(w) > 4 || !strings.EqualFold(w, "key") && !strings.EqualFold(w, "keys") {
		return false
	}
	p := blanksBefore(in, k, lo)
	if p == k {
		return false
	}
	q := p
	for q > lo && p-q < 16 && isLetter(in[q-1]) {
		q--
	}
	if q == p {
		return false
	}
	for _, qual := range keyQualifiers {
		if strings.EqualFold(in[q:p], qual) {
			return true
		}
	}
	return false
}

// lastPair returns the pair of the last two letters or digits of key, past
// separators ('_', '-', '.').
func lastPair(key string) uint16 {
	var b [2]byte
	n := 0
	for k := len(key) - 1; k >= 0 && n < 2; k-- {
		if c := key[k]; !isKeySep(c) {
			b[1-n] = c
			n++
		}
	}
	return pair(b[0], b[1])
}

// termsByLast indexes keyTerms by their last byte, in order.
var termsByLast = func() (t [256][]uint8) {
	for k, term := range keyTerms {
		c := term.term[len(term.term)-1]
		t[c] = append(t[c], uint8(k))
	}
	return t
}()

// queryKeys are further URL query parameters that carry secrets (signed
// URLs, OAuth codes, sessions), compared like keyTerms but whole.
var queryKeys = [...]string{"key", "sig", "code", "session", "sid", "jwt"}

// keyEnds holds the last bytes of keyTerms and queryKeys, in both cases:
// most keys (error:, at:, name=) are ruled out by their last byte.
var keyEnds = func() (t [256]bool) {
	mark := func(s string) {
		c := s[len(s)-1]
		t[c] = true
		if isLower(c) {
			t[c-'a'+'A'] = true
		}
	}
	for _, k := range keyTerms {
		mark(k.term)
	}
	for _, q := range queryKeys {
		mark(q)
	}
	return t
}()

// stopWords are values that say something about a secret rather than being
// one ("token: expired", "password=none"), and configuration words that
// name a kind of secret or where it comes from ("auth=oauth2",
// "credentials: default").
var stopWords = [...]string{
	"true", "false", "yes", "no", "null", "nil", "none", "undefined", "empty",
	"unset", "n/a", "redacted", "hidden", "masked", "removed", "omitted",
	"required", "optional", "missing", "invalid", "expired", "revoked",
	"incorrect", "wrong", "not", "was", "must", "should", "cannot",
	"has", "have", "had", "will", "for", "the", "and", "failed", "changed",
	"provided", "needed", "bearer", "basic", "is", "are", "set", "off",
	// Configuration words.
	"oauth", "oauth1", "oauth2", "oidc", "openid", "saml", "saml2", "ldap", "ldaps",
	"kerberos", "ntlm", "negotiate", "digest", "sso", "mfa", "totp", "tls", "mtls",
	"ssl", "x509", "iam", "hmac", "jwt", "apikey", "api_key", "token", "password",
	"secret", "plain", "plaintext", "scram", "scram-sha-256", "md5", "sha1",
	"sha256", "env", "environment", "file", "keychain", "keyring", "vault",
	"default", "disabled", "enabled", "enable", "disable", "local", "static",
	"dynamic", "managed", "auto", "internal", "external", "anonymous", "anon",
	"public", "private", "custom", "header", "query", "cookie", "session",
	"sigv4", "aws", "gcp", "azure", "unknown", "pending", "valid", "ok",
	"rotated", "generated", "configured", "present", "absent", "stored",
	"sent", "used", "accepted", "rejected", "denied", "granted",
	// Placeholders in examples and manifests.
	"foo", "bar", "baz", "qux", "quux", "abc", "xyz", "example", "sample", "dummy", "demo",
	"test", "pass",
}

// normalizeKey lower-cases key into buf without '_', '-' and '.', and
// returns a bit mask of the positions where a word of the key begins.
func normalizeKey(key string, buf *[maxKey]byte) (norm []byte, words uint64) {
	n := 0
	wordStart, prevLower := true, false
	for i := 0; i < len(key) && n < len(buf); i++ {
		c := key[i]
		if isKeySep(c) {
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

// endsWithTerm reports whether key, normalized (normalizeKey), ends with
// one of keyTerms: the test classifyKey makes first, reading key from its
// end, without normalizing it.
func endsWithTerm(key string) bool {
	// The last three bytes of the normalized key rule out most terms
	// before tailIs reads them (every term has three bytes or more). A key
	// that ends with three lower-case letters, as most do, has them as
	// written.
	k := len(key) - 1
	var tail uint32
	if k >= 2 && isLower(key[k]) && isLower(key[k-1]) && isLower(key[k-2]) {
		tail = tail3(key[k-2], key[k-1], key[k])
	} else {
		var last, c, b byte
		if k, last = keyByteBefore(key, len(key)); k < 0 {
			return false
		}
		j, c := keyByteBefore(key, k)
		if j < 0 {
			return false
		}
		m, b := keyByteBefore(key, j)
		if m < 0 {
			return false
		}
		tail = tail3(b, c, last)
	}
	// The byte before the tail tells apart most terms that share it (keys
	// ending with "key" have many: apikey, accesskey, licensekey, …), read
	// once when a term has the key's tail.
	fourth := -1
	for _, t := range termsByTail[tailBucket(tail)] {
		if termTails[t] != tail {
			continue
		}
		if fourth < 0 {
			// The fourth last byte, 0 if the key has three.
			m, c := k+1, byte(0)
			for n := 0; n < 4 && m >= 0; n++ {
				m, c = keyByteBefore(key, m)
			}
			fourth = int(c)
		}
		if (termFourths[t] == 0 || int(termFourths[t]) == fourth) && tailIs(key[:k+1], keyTerms[t].term) {
			return true
		}
	}
	return false
}

// termFourths are the fourth last bytes of keyTerms' terms, 0 for a term
// of three.
var termFourths = func() (t [len(keyTerms)]byte) {
	for k, term := range keyTerms {
		if n := len(term.term); n > 3 {
			t[k] = term.term[n-4]
		}
	}
	return t
}()

// tail3 packs the last three bytes of a key or a term.
func tail3(a, b, c byte) uint32 { return uint32(a)<<16 | uint32(b)<<8 | uint32(c) }

// tailBucket hashes a packed tail (tail3) to one of 64 buckets.
func tailBucket(tail uint32) uint32 { return tail * 0x9e3779b1 >> 26 }

// termTails are the last three bytes of each of keyTerms, packed (tail3),
// and termsByTail indexes keyTerms by their tail's bucket (tailBucket):
// most keys' buckets hold no term, or one with another tail.
var termTails, termsByTail = func() (t [len(keyTerms)]uint32, b [64][]uint8) {
	for k, term := range keyTerms {
		n := len(term.term)
		if n < 3 {
			panic("scrub: key term " + term.term + " is shorter than endsWithTerm reads")
		}
		t[k] = tail3(term.term[n-3], term.term[n-2], term.term[n-1])
		h := tailBucket(t[k])
		b[h] = append(b[h], uint8(k))
	}
	return t, b
}()

// tailIs reports whether key, without '_', '-' and '.' and in lower
// case, ends with term.
func tailIs(key, term string) bool {
	k := len(key)
	for t := len(term) - 1; t >= 0; t-- {
		j, c := keyByteBefore(key, k)
		if j < 0 || c != term[t] {
			return false
		}
		k = j
	}
	return true
}

// keyByteBefore returns where the last byte of key[:k] that is no
// separator (isKeySep) stands, and that byte in lower case; -1 if there
// is none.
func keyByteBefore(key string, k int) (int, byte) {
	for k > 0 && isKeySep(key[k-1]) {
		k--
	}
	if k == 0 {
		return -1, 0
	}
	c := key[k-1]
	if isUpper(c) {
		c += 'a' - 'A'
	}
	return k - 1, c
}

// isKeySep reports whether c is one of the separators normalizeKey drops.
func isKeySep(c byte) bool { return c == '_' || c == '-' || c == '.' }

// classifyKey says what key guards, and whether it may name a count. In
// a URL query (query is true) a few more keys count, and every kind of
// key is a query secret.
func classifyKey(key string, query bool) (kvKind, bool) {
	if len(key) > maxKey {
		return kvNone, false
	}
	if !query && !endsWithTerm(key) {
		return kvNone, false // most keys: no term ends them, and the key need not be normalized
	}
	var buf [maxKey]byte
	norm, words := normalizeKey(key, &buf)
	if len(norm) == 0 {
		return kvNone, false
	}
	for _, k := range termsByLast[norm[len(norm)-1]] {
		t := &keyTerms[k]
		p := len(norm) - len(t.term)
		if p < 0 || string(norm[p:]) != t.term || t.word && words&(1<<p) == 0 {
			continue
		}
		if publicBefore(norm[:p]) {
			return kvNone, false // publicToken, csrf-token
		}
		if t.kind == kvSecret && (bytes.Contains(norm, []byte("aws")) || bytes.HasSuffix(norm, []byte("secretaccesskey"))) {
			return kvAWS, t.counts
		}
		return t.kind, t.counts
	}
	if query {
		for _, q := range queryKeys {
			if string(norm) == q || q == "session" && string(norm) == "sessionid" {
				return kvSecret, false
			}
		}
	}
	return kvNone, false
}

// innerTerms are the secret-ish words that make a key secret-ish wherever
// they stand in it, as whole words: password_super_secure,
// mySecretString, todo_secret_do_not_commit, some_api_token_123. A value
// after such a key must look random unless it is quoted (quotedValue).
var innerTerms = [...]struct {
	term string
	kind kvKind
}{
	{"password", kvPassword}, {"passwd", kvPassword}, {"passphrase", kvPassword},
	{"secret", kvSecret}, {"token", kvSecret}, {"apikey", kvSecret}, {"accesskey", kvSecret},
	{"secretkey", kvSecret}, {"privatekey", kvSecret}, {"credential", kvSecret},
	{"credentials", kvSecret}, {"creds", kvSecret},
}

// innerLead marks the first bytes of innerTerms: a word of a key that
// begins with another byte is none of them.
var innerLead = func() (t [256]bool) {
	for _, term := range innerTerms {
		t[term.term[0]] = true
	}
	return t
}()

// aboutWords are words that, after a secret-ish word in a key, make the
// key name something about the secret rather than the secret itself:
// its id, name, length, file, expiry, owner (secret_name, token_url,
// password_min_length, api_key_id).
var aboutWords = [...]string{
	"id", "ids", "name", "names", "size", "len", "length", "type", "types", "kind", "file", "files",
	"filename", "path", "paths", "dir", "url", "uri", "urls", "endpoint", "host", "server", "version",
	"format", "prefix", "suffix", "header", "field", "param", "env", "var", "variable", "hash",
	"count", "max", "min", "limit", "ttl", "expiry", "expires", "expiration", "exp", "lifetime",
	"timeout", "age", "duration", "policy", "mode", "pattern", "regex", "label", "ref", "location",
	"provider", "source", "store", "alias", "algorithm", "alg", "hint", "rotation", "strength",
	"status", "state", "at", "by", "on", "time", "date", "created", "updated", "issued", "issuer",
	"audience", "scope", "scopes", "user", "username", "owner", "email", "enabled", "required",
	"valid", "validation", "chars", "charset", "generator", "manager", "service", "handler",
	"helper", "method", "config", "settings", "option", "options", "flag", "index", "offset",
	"usage", "used", "total", "rate", "cache", "list", "map", "table", "column", "template",
	"placeholder", "reset", "rule", "rules", "error", "errors", "message", "msg", "missing",
	"expired", "invalid", "check", "attempts", "retries", "budget", "usage", "endpoint", "type",
	// How it is stored or checked, and the words of a form (password_encoder,
	// secret_backend; "password_prompt": "Enter your password").
	"encoder", "hasher", "backend", "engine", "storage", "title", "text", "button", "prompt",
	"description", "desc", "tooltip", "icon", "input", "form", "page", "dialog", "screen", "link",
	"help", "info", "visible", "hidden", "toggle", "show",
}

// plainKeyQualifiers are words before "key" that make it the key of a
// record, a map or a cipher's public half rather than a secret:
// primaryKey, public_key, cache_key, partitionKey.
var plainKeyQualifiers = [...]string{
	"public", "pub", "primary", "foreign", "bucket", "hot", "idx", "index", "natural", "schema",
	"sequence", "sort", "partition", "cache", "object", "row", "map", "dict", "lookup", "unique",
	"composite", "routing", "shard", "hash", "dedup", "dedupe", "group", "idempotency", "cursor",
	"page", "continuation", "marker", "trace", "correlation", "request", "tenant", "user",
	"customer", "order", "product", "item", "entity", "node", "file", "blob", "registry", "setting",
	"config", "translation", "locale", "lang", "i18n", "field", "column", "table", "json", "yaml",
	"form", "input", "meta", "metadata", "label", "tag", "sequence", "storage", "s3", "issuer",
	"message", "event", "job", "task", "queue", "topic", "stream", "record", "doc", "document",
}

// publicQualifiers before a secret-ish word make it public or a form's:
// publicToken, publishable_key, csrf-token, authenticity_token (Rails').
var publicQualifiers = [...]string{"public", "publishable", "csrf", "xsrf", "authenticity"}

// weakKey classifies a key that does not end in a key term (keyTerms):
// one with a secret-ish word inside (innerTerms) whose value must look
// random, or one whose last word is "key" (Using Key=…, sshKey) whose
// value must look generated.
func weakKey(key string) (kvKind, strength) {
	if len(key) < 3 || len(key) > maxKey || !weakPairs(key) {
		return kvNone, anyValue
	}
	var buf [maxKey]byte
	norm, words := normalizeKey(key, &buf)
	last := 0
	for p := range norm {
		if words&(1<<p) == 0 {
			continue
		}
		last = p
		if !innerLead[norm[p]] {
			continue
		}
		for _, t := range innerTerms {
			e := p + len(t.term)
			if e > len(norm) || t.term[0] != norm[p] || string(norm[p:e]) != t.term || e < len(norm) && words&(1<<e) == 0 {
				continue
			}
			if publicBefore(norm[:p]) || aboutAfter(norm[e:], words>>e) {
				return kvNone, anyValue
			}
			return t.kind, quotedValue
		}
	}
	if string(norm[last:]) == "session" {
		// A session cookie's name (_gitlab_session, laravel_session,
		// ci_session): its value is the session's bearer secret.
		return kvSecret, generatedValue
	}
	if string(norm[last:]) == "key" {
		for _, q := range plainKeyQualifiers {
			// (The qualifier a word of its own: bitbucket_key is no
			// bucket's key.)
			if hasSuffixBytes(norm[:last], q) && words&(1<<(last-len(q))) != 0 {
				return kvNone, anyValue
			}
		}
		return kvSecret, generatedValue
	}
	return kvNone, anyValue
}

// weakPairs reports whether key holds, in either case, one of the byte
// pairs that every inner term and "key" has: "ss" (password, passwd,
// passphrase, accesskey), "cr" (secret, credential, creds), "ok" (token)
// or "ey" (key). Most keys are ruled out by it in one pass.
func weakPairs(key string) bool {
	for i := 1; i < len(key); i++ {
		if p := weakBefore[key[i]]; p != 0 && key[i-1]|0x20 == p {
			return true
		}
	}
	return false
}

// weakBefore maps the second byte of each of weakPairs' pairs, in either
// case, to the first, in lower case.
var weakBefore = [256]byte{'s': 's', 'S': 's', 'r': 'c', 'R': 'c', 'k': 'o', 'K': 'o', 'y': 'e', 'Y': 'e'}

// keyBack is worthKey's table for its look back over a key: 0 for a byte
// that is not a key's (cKey), weakBefore's byte for the second byte of a
// weak pair, 1 for the other key bytes (one read a byte, not two).
var keyBack = func() (t [256]byte) {
	for c := range t {
		switch {
		case weakBefore[c] != 0:
			t[c] = weakBefore[c]
		case chars[c]&cKey != 0:
			t[c] = 1
		}
	}
	return t
}()

// publicBefore reports whether the normalized key before a secret-ish
// word ends with a public qualifier.
func publicBefore(head []byte) bool {
	for _, q := range publicQualifiers {
		if hasSuffixBytes(head, q) {
			return true
		}
	}
	return false
}

// aboutAfter reports whether a word of the normalized key after a
// secret-ish word, whose word starts are marked in words, is one of
// aboutWords.
func aboutAfter(tail []byte, words uint64) bool {
	for p := 0; p < len(tail); {
		e := p + 1
		for e < len(tail) && words&(1<<e) == 0 {
			e++
		}
		for _, w := range aboutWords {
			if string(tail[p:e]) == w {
				return true
			}
		}
		p = e
	}
	return false
}

// hasSuffixBytes reports whether b ends with s, without copying either.
func hasSuffixBytes(b []byte, s string) bool {
	return len(b) >= len(s) && string(b[len(b)-len(s):]) == s
}

// weakQueryKey reports whether a URL query parameter's name is too vague
// for any value to be a secret: ?key=booking_42.
func weakQueryKey(key string) bool {
	return strings.EqualFold(key, "key")
}

// noValueAfter are the bytes after '=' that leave no value (key=&,
// key=, …), and assignOps those of the operators before '=' (:=, ?=, +=,
// ||=, !=, .=).
var (
	noValueAfter = byteSet(",;)]}&")
	assignOps    = byteSet(":?+|!.")
)

// matchKeyValue matches the value after a secret-ish key at the separator
// in[i], ':' or '='. A '=' may come with the operator bytes of code and
// configuration before it (Go's and Makefiles' :=, ::=, :::=, ?=, ??=,
// PHP's .=, +=, ||=, !=) or after it (=>, and the comparisons == and ===),
// and a type may stand between the key and it (Go's var key string =,
// Kotlin's and TypeScript's key: String =, Python's key: str =). The key
// is read backwards, never before lo.
func (s *Scrubber) matchKeyValue(in string, esc escMarks, i, lo int) (hit, bool) {
	sep := in[i]
	v := i + 1
	code := false // an assignment in code: Go's :=, and Makefiles'
	op := i       // where the operator before the value begins
	if sep == ':' && i > lo && isDigit(in[i-1]) && is(in, i+1, cDigit) {
		return hit{}, false // a time or a port after a number: 10:20:30, 10.0.0.7:8080
	}
	if sep == ':' {
		if i+1 < len(in) && (in[i+1] == '=' || in[i+1] == ':') {
			return hit{}, false // :=, ::= and :::= are read at their '='; a::b is no key
		}
	} else {
		if i+1 == len(in) || noValueAfter[in[i+1]] || padding(in, i) {
			return hit{}, false // no value: key=&, key=, base64 padding
		}
		if i+1 < len(in) {
			switch in[i+1] {
			case '>':
				v = i + 2
			case '=':
				v = i + 2 // password == "…"
				if v < len(in) && in[v] == '=' {
					v++
				}
			}
		}
		for op > lo && i-op < 3 && assignOps[in[op-1]] {
			op--
		}
		if o := in[op:i]; strings.IndexByte(o, '.') >= 0 && (o != "." || op == lo || !isBlank(in[op-1])) {
			op = i // a '.' ends a key (a.=) only as PHP's " .="
		}
		code = strings.IndexByte(in[op:i], ':') >= 0
		if in[i+1] == '=' || in[op] == '!' {
			// A comparison: the value may come first ("…" == password).
			if h, ok := s.matchComparedFirst(in, esc, op, v, lo); ok {
				return h, true
			}
		}
	}
	if !worthKey(in, op, v, lo, sep) {
		return hit{}, false
	}
	// The key: optional blanks, an optional (escaped) closing quote, then
	// key bytes.
	j, ke, quoted, ok := keyBefore(in, op, lo)
	if !ok {
		return hit{}, false
	}
	key := in[j:ke]
	if sep == ':' && j > lo && (in[j-1] == '/' || in[j-1] == '\\') {
		return hit{}, false // a path's last name: open /run/secrets/token: permission denied
	}
	query := sep == '=' && v == i+1 && op == i && ke == i && j > lo && (in[j-1] == '?' || in[j-1] == '&')
	kind, counts, need := s.keyKind(in, j, ke, lo, query)
	if kind == kvNone && sep == '=' && !quoted && isTypeName(key) {
		// var apiToken string = "…", apiToken: String = "…": the key is
		// the word before the type.
		if j, ke, quoted, ok = keyBefore(in, typeStart(in, j, lo), lo); ok {
			kind, counts, need = s.keyKind(in, j, ke, lo, false)
			code = true
		}
	}
	if kind == kvNone && isValueKey(key) {
		// A value field named by a field before it, or by the key of
		// the object it opens: name: DB_PASSWORD⏎value: …, <add
		// key="ApiKey" value="…"/>, {"credentials": {"value": …}}.
		kind = namedValue(in, j, lo)
	}
	if kind == kvNone && sep == ':' {
		// An entry of the data of a Kubernetes Secret (kubectl get
		// secret -o yaml): a base64 value, whatever its key.
		if h, ok := s.secretData(in, j, i); ok {
			return h, true
		}
	}
	if kind == kvNone {
		return hit{}, false
	}
	if sep == ':' && typeThenEquals(in, i) {
		return hit{}, false // key: String = "…" is read at its '='
	}
	if sep == ':' && v < len(in) && isBlank(in[v]) && !quoted && inPhrase(in, phraseStart(in, j, ke, lo), lo) {
		// The last word of a phrase in an error chain ("failed to get
		// current token: EOF"): what follows is more often the next error
		// than a secret, so it must look random.
		need = max(need, randomValue)
	}

	// The value, after blanks; after ':' maybe many, that align it with
	// the values of other keys (fbApiKey:            "…").
	gap := 8
	if sep == ':' {
		gap = maxValueGap
	}
	for v < len(in) && v-i <= gap && (in[v] == ' ' || in[v] == '\t') {
		v++
	}
	if v >= len(in) {
		return hit{}, false
	}
	if !quoted && j > lo && (in[j-1] == '"' || in[j-1] == '\'') && in[v] == in[j-1] && (v+1 == len(in) || literalEnd[in[v+1]]) {
		// The key ends a string literal that the quote after it closes,
		// and code follows ("MasterUserPassword: " + getPassword(),
		// 'password = '.$p['password'], passwordLabel:"Password:",): no
		// value. (A value right after the quote is one: "token: "8h3s….)
		return hit{}, false
	}
	if sep == ':' && in[v] == '!' {
		if t, ref, ok := yamlTag(in, v); ok {
			if ref || t >= len(in) {
				return hit{}, false // password: !secret db_password names a secret, and holds none
			}
			v = t // password: !!binary aHVu…: the value follows the tag
		}
	}
	if lineBreak(in, v) > 0 {
		// password=⏎value: the value alone on the next line.
		return s.valueOnNextLine(in, v, kind, counts, need)
	}
	if query && (in[v] == '"' || in[v] == '\'') {
		// A URL holds no quote: this one closes the string or attribute
		// the URL is in (connectionURL="…&password=" userTable=…, "…&token="
		// + tok), and the parameter is empty.
		return hit{}, false
	}
	h, ok := s.valueAfterKey(in, esc, v, kind, counts, query, code, esc.at(i), sep == ':', need, lineStart(in, j, lo))
	if !ok && sep == '=' && !query {
		// The value is code; a literal it falls back to is the key's:
		// TOKEN = process.env.API_TOKEN || "…".
		if f := fallbackLiteral(in, v); f > 0 {
			return s.valueAfterKey(in, esc, f, kind, counts, false, false, esc.at(f), false, need, false)
		}
	}
	return h, ok
}

// maxValueGap bounds the blanks matchKeyValue reads between a ':' and
// the value after it (8 after '=').
const maxValueGap = 32

// literalEnd are the bytes after a string literal's closing quote that
// begin code rather than a value: an operator, a separator, a blank.
var literalEnd = byteSet(" \t\r\n+.,;)&|")

// maxYAMLTag bounds the length of a YAML tag that yamlTag reads.
const maxYAMLTag = 32

// referenceTags are the YAML tags of common configuration formats whose
// value names a value kept elsewhere rather than holding it: Home
// Assistant's !secret and !env_var, pyyaml-env-tag's !ENV, !include,
// CloudFormation's functions (!Ref, !Sub, …), GitLab CI's !reference.
var referenceTags = [...]string{
	"!secret", "!env_var", "!ENV", "!include", "!input", "!reference",
	"!Ref", "!Sub", "!GetAtt", "!ImportValue", "!FindInMap", "!Join", "!Select", "!If",
}

// valueTags are the YAML tags with one '!' that yamlTag reads as tags:
// a value after them is the value (Ansible's !vault and !unsafe). Other
// words after one '!' may begin the value itself (password: !Qaz2wsx).
var valueTags = [...]string{"!vault", "!unsafe", "!binary", "!str"}

// yamlTag reads a YAML tag at in[v] ('!'), before a key's value: "!!"
// and a word (!!binary, !!str), or one of referenceTags and valueTags,
// followed by blanks. It returns where the value begins after them,
// whether the tag makes the value a reference, and whether there is such
// a tag.
func yamlTag(in string, v int) (t int, ref, ok bool) {
	t = v + 1
	if t < len(in) && in[t] == '!' {
		t++
	}
	t = skipMax(in, t, cAlnum, maxYAMLTag)
	if t-v > maxYAMLTag || t == v+1 || in[v+1] == '!' && t == v+2 || t < len(in) && !isBlank(in[t]) && lineBreak(in, t) == 0 {
		return v, false, false
	}
	tag := in[v:t]
	if in[v+1] != '!' {
		switch {
		case slices.Contains(referenceTags[:], tag):
			ref = true
		case !slices.Contains(valueTags[:], tag):
			return v, false, false
		}
	}
	for t < len(in) && isBlank(in[t]) {
		t++
	}
	return t, ref, true
}

// maxFallback bounds how far fallbackLiteral reads an expression.
const maxFallback = 160

// fallbackLiteral returns where the quoted literal begins that the
// expression at in[v] falls back to (a || "…", a ?? "…", a ?: "…", a or
// "…", c ? a : "…"), or 0 if there is none. The expression is read as
// terms and operators between them: it ends where a term follows a term
// (token=a token=b), at a line's end, ';' or ',', and after maxFallback
// bytes. Brackets, no more than four deep, and the strings inside them
// (calls' arguments: getenv("API_TOKEN")) are read over.
func fallbackLiteral(in string, v int) int {
	const (
		wantTerm = iota // at the start, or after an operator
		inTerm
		wantOp // after a term and blanks
	)
	state, depth, ternary, after := wantTerm, 0, false, false
	for v < len(in) && in[v] == '(' {
		v++ // (os.getenv("API_TOKEN") or "…")
	}
	if placeholderLen(in[v:]) > 0 {
		// The key's value, which a first pass found: that pass read no
		// further (password=[REDACTED:password] || "…").
		return 0
	}
	for p := v; p < len(in) && p-v < maxFallback; p++ {
		c := in[p]
		switch {
		case c == '"' || c == '\'' || c == '`':
			if depth == 0 && after && state == wantTerm {
				return p
			}
			q := strings.IndexByte(in[p+1:min(len(in), v+maxFallback)], c)
			if q < 0 || depth == 0 && state == wantOp {
				return 0
			}
			p += q + 1
			state = inTerm
		case c == '(' || c == '[' || c == '{':
			if depth++; depth > 4 || depth == 1 && state == wantOp {
				return 0
			}
			state = inTerm
		case c == ')' || c == ']' || c == '}':
			if depth--; depth < 0 {
				return 0
			}
		case c == '\n' || c == ';' || c == ',' && depth == 0:
			return 0
		case depth > 0:
		case c == ' ' || c == '\t':
			if state == inTerm {
				state = wantOp
			}
		case c == '|' && p+1 < len(in) && in[p+1] == '|', c == '?' && p+1 < len(in) && (in[p+1] == '?' || in[p+1] == ':'),
			c == 'o' && state == wantOp && strings.HasPrefix(in[p:], "or "):
			if state == wantTerm {
				return 0
			}
			state, after = wantTerm, true
			p++
		case c == '?' || c == ':' && ternary:
			if state == wantTerm {
				return 0
			}
			state, after, ternary = wantTerm, c == ':', c == '?'
		default:
			if state == wantOp {
				return 0
			}
			state, after = inTerm, false
		}
	}
	return 0
}

// matchComparedFirst matches a quoted value compared with a secret-ish
// name after it, at the comparison operator that begins at in[op] (==,
// ===, != or !==) and whose right side begins at in[v]: if ("…" ==
// password), "…" !== api_key. The value is read back from the operator no
// further than maxProseValue bytes, and never before lo.
func (s *Scrubber) matchComparedFirst(in string, esc escMarks, op, v, lo int) (hit, bool) {
	k := op
	for k > lo && op-k < 8 && isBlank(in[k-1]) {
		k--
	}
	if k-lo < 2 || in[k-1] != '"' && in[k-1] != '\'' {
		return hit{}, false
	}
	q := in[k-1]
	a := k - 2 // the opening quote
	for a >= lo && k-a <= maxProseValue && in[a] != q && in[a] != '\n' {
		a--
	}
	if a < lo || k-a > maxProseValue || in[a] != q || a > lo && in[a-1] == '\\' {
		return hit{}, false
	}
	w := skipBlanks(in, v, false)
	ke := skip(in, w, cKey)
	if ke == w || ke-w > maxKey || ke < len(in) && (in[ke] == '(' || in[ke] == '.') {
		return hit{}, false // no name, or a call or a field of it: "…" == f(x)
	}
	kind, counts, need := s.keyKind(in, w, ke, w, false)
	if kind == kvNone || kind == kvCookie {
		return hit{}, false
	}
	return s.valueAfterKey(in, esc, a, kind, counts, false, false, esc.at(a), false, need, false)
}

// matchCallArgs matches the value of a call that passes a secret-ish key
// and its value as two quoted arguments, at the call's '(' in[i]:
// System.setProperty("db.password", "…"), os.Setenv("API_TOKEN", "…"),
// localStorage.setItem('token', '…'), define('DB_PASSWORD', '…'). An
// unquoted value is code.
func (s *Scrubber) matchCallArgs(in string, esc escMarks, i, lo int) (hit, bool) {
	q := in[i+1]
	j := i + 2
	ke := j
	for ke < len(in) && ke-j <= maxKey && chars[in[ke]]&cKey != 0 {
		ke++
	}
	if ke == j || ke-j > maxKey || ke >= len(in) || in[ke] != q {
		return hit{}, false
	}
	c := skipBlanks(in, ke+1, false)
	if c >= len(in) || in[c] != ',' {
		return hit{}, false
	}
	v := skipBlanks(in, c+1, true)
	if v >= len(in) || in[v] != '"' && in[v] != '\'' && in[v] != '`' {
		return hit{}, false
	}
	kind, counts, need := s.keyKind(in, j, ke, i+1, false)
	if kind == kvNone {
		return hit{}, false
	}
	return s.valueAfterKey(in, esc, v, kind, counts, false, false, false, false, need, false)
}

// valueKeys are the keys of a value whose name another field holds.
var valueKeys = [...]string{"value", "val", "default", "defaultValue", "default_value"}

// namingKeys are the keys of the field that names a value: name:
// DB_PASSWORD, key="ApiKey", <property name="db.password" …>.
var namingKeys = [...]string{
	"name", "key", "id", "param", "parameter", "variable", "var", "property", "field", "env",
	"setting", "secretName", "secret_name", "ParameterKey", "OptionName", "Name", "Key",
}

func isValueKey(key string) bool {
	return len(key) >= 3 && len(key) <= 13 && (key[0]|0x20 == 'v' || key[0]|0x20 == 'd') && containsFold(valueKeys[:], key)
}

// maxNaming bounds how far back namedValue reads.
const maxNaming = 160

// namedValue returns what the value field whose key begins at in[j]
// holds, from what comes before it, read backwards never before lo: a
// naming field whose value is a secret-ish key (name: DB_PASSWORD,
// key="ApiKey", "name": "API_TOKEN", then the value field), or the
// secret-ish key of the object the value field opens
// ({"credentials": {"value": …}}, password { value = … }).
func namedValue(in string, j, lo int) kvKind {
	lim := max(lo, j-maxNaming)
	p := j
	if p > lim && (in[p-1] == '"' || in[p-1] == '\'') {
		p--
	}
	// Back over what separates two fields.
	q := p
	for q > lim && strings.IndexByte(" \t\r\n,;\"'", in[q-1]) >= 0 {
		q--
	}
	if q > lim && in[q-1] == '{' {
		// The first field of an object: the object's key.
		q--
		for q > lim && strings.IndexByte(" \t\r\n", in[q-1]) >= 0 {
			q--
		}
		if q > lim && (in[q-1] == ':' || in[q-1] == '=') {
			q--
		}
		if k, ke, _, ok := keyBefore(in, q, lim); ok {
			kind, _ := classifyKey(in[k:ke], false)
			if kind != kvAuthorization && kind != kvCookie {
				return kind
			}
		}
		return kvNone
	}
	// The value of the field before: a secret-ish key, after a naming
	// key and its separator.
	b := q
	for b > lim && chars[in[b-1]]&cKey != 0 && q-b <= maxKey {
		b--
	}
	if b == q || q-b > maxKey {
		return kvNone
	}
	kind, _ := classifyKey(in[b:q], false)
	if kind == kvNone || kind == kvAuthorization || kind == kvCookie {
		return kvNone
	}
	c := b
	if c > lim && (in[c-1] == '"' || in[c-1] == '\'') {
		c--
	}
	for c > lim && isBlank(in[c-1]) {
		c--
	}
	if c == lim || in[c-1] != ':' && in[c-1] != '=' {
		return kvNone
	}
	if k, ke, _, ok := keyBefore(in, c-1, lim); ok && containsFold(namingKeys[:], in[k:ke]) {
		return kind
	}
	return kvNone
}

// Kubernetes Secrets keep their values base64-encoded under data:, with
// keys that name them as their owner chose (username, extra, tls.key,
// .dockercfg). An entry there is found by the structure around it: its
// line's indentation, a parent line "data:" less indented, and
// "kind: Secret" in the same YAML document. These are read before lo, but
// redaction does not change them (it replaces values, never a line break
// or these words), so a second pass reads the same. The look is bounded
// by maxDataLines lines back to the parent and maxDataDoc bytes around it
// for the kind.
const (
	maxDataLines = 64
	maxDataDoc   = 4096
)

// secretData matches the value after the key in[j:] and its ':' at in[i]
// if the pair is an entry of a Kubernetes Secret's data: a base64 value
// of 12 bytes or more.
func (s *Scrubber) secretData(in string, j, i int) (hit, bool) {
	vs := skipBlanks(in, i+1, false)
	if vs == i+1 || vs >= len(in) {
		return hit{}, false
	}
	vs, closing := openValue(in, vs)
	ve := vs
	for ve < len(in) && chars[in[ve]]&cB64 != 0 {
		ve++
	}
	pad := ve
	for ve < len(in) && ve-pad < 2 && in[ve] == '=' {
		ve++
	}
	if ve-vs < 12 || (ve-vs)%4 != 0 || ve < len(in) && (closing != "" && in[ve] != closing[0] || closing == "" && !isSpace(in[ve])) {
		return hit{}, false
	}
	ls := j
	for ls > 0 && isBlank(in[ls-1]) {
		ls--
	}
	if ls == j || ls > 0 && in[ls-1] != '\n' {
		return hit{}, false // not an indented key at a line start
	}
	p, ok := parentLine(in, ls, j-ls)
	if !ok || !strings.HasPrefix(in[p:], "data:") || skipBlanks(in, p+len("data:"), false) < len(in) && lineBreak(in, skipBlanks(in, p+len("data:"), false)) == 0 {
		return hit{}, false
	}
	if !secretKind(in, p) {
		return hit{}, false
	}
	return hit{vs, ve, famSecret}, s.on[famSecret]
}

// parentLine returns where the text of the nearest line before the line
// that starts at in[ls] and is less indented than indent begins, skipping
// blank and comment lines; within maxDataLines lines.
func parentLine(in string, ls, indent int) (int, bool) {
	for n := 0; n < maxDataLines && ls > 0; n++ {
		e := ls - 1 // the line break that ends the line before
		b := strings.LastIndexByte(in[:e], '\n') + 1
		t := skipBlanks(in, b, false)
		ls = b
		if t >= e || in[t] == '#' || in[t] == '\r' {
			continue
		}
		if t-b < indent {
			return t, true
		}
	}
	return 0, false
}

// secretKind reports whether the YAML document around in[p] (between
// "---" lines, within maxDataDoc bytes each way) says kind: Secret.
func secretKind(in string, p int) bool {
	lo := max(0, p-maxDataDoc)
	if k := lastIndex(in[lo:p], "\n---"); k >= 0 {
		lo += k
	}
	hi := min(len(in), p+maxDataDoc)
	if k := strings.Index(in[p:hi], "\n---"); k >= 0 {
		hi = p + k
	}
	doc := in[lo:hi]
	for k := 0; ; {
		x := strings.Index(doc[k:], "kind:")
		if x < 0 {
			return false
		}
		k += x + len("kind:")
		v := skipBlanks(doc, k, false)
		if v < len(doc) && (doc[v] == '"' || doc[v] == '\'') {
			v++
		}
		if hasPrefixFold(doc[v:], "secret") && !is(doc, v+len("secret"), cWord) {
			return true
		}
	}
}

// setterVerbs begin method names that read, check or change a secret
// rather than set it: getPassword("user") looks one up.
var setterVerbs = [...]string{
	"get", "read", "load", "fetch", "lookup", "find", "has", "is", "check", "verify", "validate",
	"delete", "remove", "revoke", "rotate", "refresh", "generate", "create", "new", "reset", "mask",
	"redact", "hash", "print", "log", "format", "parse", "decode", "encode", "compare", "match",
	"clear", "unset", "require", "expect", "assert", "test", "describe", "list",
}

// matchSetter matches the quoted argument of a call whose name is
// secret-ish, at its '(' in[i], and the second argument of a call whose
// first names a secret (matchCallArgs): setPassword("…"), .password("…"),
// withApiKey('…'), Token("…"), as builders and setters take a secret. The
// name is read backwards, never before lo; a name that begins with a verb
// of setterVerbs is no setter.
func (s *Scrubber) matchSetter(in string, esc escMarks, i, lo int) (hit, bool) {
	if i+1 >= len(in) || in[i+1] != '"' && in[i+1] != '\'' && in[i+1] != '`' {
		return hit{}, false
	}
	if in[i+1] != '`' {
		if h, ok := s.matchCallArgs(in, esc, i, lo); ok {
			return h, true
		}
	}
	j := i
	for j > lo && i-j <= maxKey && chars[in[j-1]]&cWord != 0 {
		j--
	}
	if j == i || i-j > maxKey || !keyEnds[in[i-1]] || pairFlags[lastPair(in[j:i])]&pairTerm == 0 {
		return hit{}, false
	}
	name := in[j:i]
	kind, counts := classifyKey(name, false)
	if kind == kvNone || kind == kvCookie || kind == kvSSN {
		return hit{}, false
	}
	for _, v := range setterVerbs {
		if len(name) > len(v) && hasPrefixFold(name, v) && (isUpper(name[len(v)]) || name[len(v)] == '_') {
			return hit{}, false
		}
	}
	return s.valueAfterKey(in, esc, i+1, kind, counts, false, false, false, false, anyValue, false)
}

// pairFlags tells by the last two letters or digits of a word (lastPair,
// pair), in one lookup, whether it may end a key term, a query key, "key"
// or "keys" (pairTerm: most keys, such as msg, detail, path and name, are
// ruled out by it before they are read), a value field's name
// (pairValue), a type (pairType), a secret-ish word of prose (pairProse:
// password, token, API key, secret keys) or a link word (pairLink, see
// isLinkWord). One table, not one for each, keeps these lookups in fewer
// lines of cache.
var pairFlags = func() (t [1 << 14]uint8) {
	mark := func(f uint8, words ...string) {
		for _, w := range words {
			t[lastPair(w)] |= f
		}
	}
	for _, k := range keyTerms {
		mark(pairTerm, k.term)
		if k.kind == kvPassword || k.kind == kvSecret {
			t[pair(k.term[len(k.term)-2], k.term[len(k.term)-1])] |= pairProse
		}
	}
	mark(pairTerm, queryKeys[:]...)
	mark(pairTerm, "key", "keys")
	t[pair('e', 'y')] |= pairProse // API key
	t[pair('y', 's')] |= pairProse // secret keys
	for _, w := range [...]string{"is", "was", "are", "be", "now", "set", "to", "as", "equals", "reads", "by"} {
		t[pair(w[len(w)-2], w[len(w)-1])] |= pairLink
	}
	mark(pairValue, valueKeys[:]...)
	mark(pairType, "string", "str", "bytes", "byte", "text", "char", "secretstr", "securestring",
		"charsequence", "any", "object", "password")
	return t
}()

const (
	pairTerm uint8 = 1 << iota
	pairValue
	pairType
	pairProse
	pairLink
)

// worthKey reports, from a look at the separator's surroundings (the
// operator before it begins at in[op], the value at in[v]), whether any
// reading of a key there could match, before the key is read whole: its
// last two letters end a key term (before ':', where error chains put
// words that end so, a term must end it, a weak pair be in it or the key
// be indented too), a value field's name or a type; or it holds a pair of
// letters that a secret-ish word inside a key or "key" has (weakPairs)
// and the value looks random; or it begins an indented line before ':'
// (a Kubernetes Secret's data). Most separators in text (file.go:42,
// error: …, failed: …, name=x) are ruled out by it.
func worthKey(in string, op, v, lo int, sep byte) bool {
	k := op
	if k > lo && isBlank(in[k-1]) {
		for k > lo && op-k < 8 && isBlank(in[k-1]) {
			k--
		}
	}
	if k > lo && (in[k-1] == '"' || in[k-1] == '\'') {
		k--
		if k > lo && in[k-1] == '\\' {
			k--
		}
	}
	if k == lo {
		return false
	}
	if in[k-1] == ']' {
		return true // os.environ["API_TOKEN"] =
	}
	if chars[in[k-1]]&cKey == 0 {
		return false
	}
	if isDigit(in[k-1]) {
		k = unnumbered(in, k, lo)
	}
	var p uint16
	if k-lo >= 2 && chars[in[k-2]]&cAlnum != 0 && chars[in[k-1]]&cAlnum != 0 {
		p = pair(in[k-2], in[k-1])
	} else {
		p = lastPair(in[max(lo, k-8):k])
	}
	f := pairFlags[p]
	term := f&pairTerm != 0 && keyEnds[in[k-1]]
	if term && sep != ':' || f&pairValue != 0 || sep == '=' && f&pairType != 0 {
		return true
	}
	// The key whole, back to its start, and whether a weak pair is in it
	// (weakPairs; or across its start, where the look back stopped inside
	// a longer key).
	// (Read from a slice that ends at k and begins where the look back
	// must stop, so that the compiler checks no read.)
	m := max(lo, k-maxKey-1)
	t := in[m:k]
	q := len(t)
	weak := false
	for q > 0 {
		b := keyBack[t[q-1]]
		if b == 0 {
			break
		}
		q--
		if b != 1 {
			if q > 0 {
				weak = weak || t[q-1]|0x20 == b
			} else if m > lo {
				weak = weak || in[m-1]|0x20 == b
			}
		}
	}
	j := m + q
	// Before ':', whose keys in text are mostly the words of an error
	// chain (failed:, connection:, IllegalStateException:), a key whose
	// last letters are a term's is read further only if keyKind may find
	// it secret-ish (a term ends it, or a weak pair is in it: a
	// secret-ish word inside, "key" after a qualifier) or secretData may
	// find it a Secret's data (it is indented at a line start).
	if term && (weak || endsWithTerm(in[j:k]) || indentedAt(in, j)) {
		return true
	}
	if sep == ':' {
		b := j
		for b > lo && isBlank(in[b-1]) {
			b--
		}
		if b < j && b > lo && in[b-1] == '\n' {
			return true // an indented key: maybe a Secret's data
		}
	}
	if !weak {
		return false
	}
	w := skipBlanks(in, v, false)
	if w < len(in) && (in[w] == '"' || in[w] == '\'' || in[w] == '`') {
		return true // a quoted value, which keyKind may let be any (quotedValue)
	}
	if w >= len(in) || lineBreak(in, w) > 0 {
		return w < len(in) // a value on the next line
	}
	e := w
	for e < len(in) && e-w < 64 && chars[in[e]]&cTok68 != 0 {
		e++
	}
	return e-w >= 6 && randomish(in[w:e])
}

// indentedAt reports whether the key at in[j] is indented at the start of
// a line or of in, as secretData needs it to be.
func indentedAt(in string, j int) bool {
	ls := j
	for ls > 0 && isBlank(in[ls-1]) {
		ls--
	}
	return ls < j && (ls == 0 || in[ls-1] == '\n')
}

// padding reports whether the '=' at in[i] begins the padding at the end
// of a base64 run ("…Qk9==" before a blank or the end), not a comparison
// (token == "…", a==b, token !== "…").
func padding(in string, i int) bool {
	if i == 0 || chars[in[i-1]]&(cB64|cB64URL) == 0 || i+1 >= len(in) || in[i+1] != '=' {
		return false
	}
	k := i + 1
	for k < len(in) && k-i < 3 && in[k] == '=' {
		k++
	}
	return k == len(in) || isSpace(in[k]) // at most "==": longer runs are no padding
}

// keyBefore reads a key backwards from its end at in[e] (before it maybe
// a few blanks and a closing quote, escaped or not), never before lo, and
// returns its bounds and whether it was quoted. It rules out most words
// by their last bytes before it reads them.
func keyBefore(in string, e, lo int) (j, ke int, quoted, ok bool) {
	j = e
	for j > lo && e-j < 8 && (in[j-1] == ' ' || in[j-1] == '\t') {
		j--
	}
	if j-lo >= 2 && in[j-1] == ']' {
		if in[j-2] == '"' || in[j-2] == '\'' {
			j-- // os.environ["API_TOKEN"] = …, ENV['PASSWORD'] = …
		} else {
			// An array's name: secret[] = "…", char secret[25] = "…".
			k := j - 1
			for k > lo && j-k <= 6 && isDigit(in[k-1]) {
				k--
			}
			if k > lo && in[k-1] == '[' {
				j = k - 1
			} else if n := skipBack(in, j-1, lo, cKey, maxKey); n < j-1 && n-2 >= lo && (in[n-1] == ':' || in[n-1] == '$') && in[n-2] == '[' {
				j-- // A symbol or a variable as the key: auth[:token] = …, $cfg[$password] = …
			}
		}
	}
	if j > lo && (in[j-1] == '"' || in[j-1] == '\'') {
		quoted = true
		j--
		if j > lo && in[j-1] == '\\' {
			j--
		}
	}
	ke = j
	if j == lo || chars[in[j-1]]&cKey == 0 {
		return 0, 0, false, false
	}
	for j > lo && ke-j <= maxKey && chars[in[j-1]]&cKey != 0 {
		j--
	}
	if ke-j > maxKey {
		return 0, 0, false, false
	}
	return j, ke, quoted, true
}

// keyKind classifies the key in[j:ke] and says what a value after it
// needs. The common keys are told by their end (keyEnds, pairFlags) at the
// price of a table lookup or two; only the keys those let through, and
// those with a secret-ish word inside (password_super_secure,
// mySecretString) or the word "key" (Using Key=…), are read whole.
func (s *Scrubber) keyKind(in string, j, ke, lo int, query bool) (kvKind, bool, strength) {
	ke = unnumbered(in, ke, j)
	key := in[j:ke]
	if keyEnds[in[ke-1]] && pairFlags[lastPair(key)]&pairTerm != 0 {
		kind, counts := classifyKey(key, query)
		if kind == kvNone && qualifiedKey(in, j, ke, lo) {
			kind = kvSecret // API Key: …, Secret Key = …
		}
		if kind != kvNone {
			need := anyValue
			if query && weakQueryKey(key) {
				need = generatedValue // ?key=booking_42 is no secret
			}
			if len(key) >= 3 && strings.EqualFold(key[len(key)-3:], "pat") {
				need = max(need, randomValue) // PAT, a personal access token, is also a pattern's name: glob_pat=*.go
			}
			return kind, counts, need
		}
	}
	if len(key) >= 24 && generated(key) {
		return kvNone, false, anyValue // a run of random bytes before '=' or ':' is base64, not a key
	}
	if kind, need := weakKey(key); kind != kvNone {
		return kind, false, need
	}
	return kvNone, false, anyValue
}

// unnumbered returns the end of the key that ends at in[ke] without its
// number: numbered keys (password1, static_password03, DB_PASSWORD_2,
// token-2) are read as the key they number. The key keeps its number if
// fewer than three letters would be left (x509, s3) or no letter ends
// them (v1.2). It reads back no further than lo. A key that ends with no
// digit is returned as it is.
func unnumbered(in string, ke, lo int) int {
	if ke <= lo || !isDigit(in[ke-1]) {
		return ke
	}
	d := ke
	for d > lo && ke-d < 8 && isDigit(in[d-1]) {
		d--
	}
	if d > lo && (in[d-1] == '_' || in[d-1] == '-') {
		d--
	}
	if d-lo < 3 || !isLetter(in[d-1]) || !isLetter(in[d-2]) || !isLetter(in[d-3]) {
		return ke
	}
	return d
}

// valueAfterKey matches the value at in[v] after a key of this kind. The
// key may name a count (counts), is a URL query parameter (query), an
// assignment in code (code), was followed by an escaped separator (lvl),
// or is a header name (header: a Cookie header's value is the rest of its
// line). need says what the value must look like; wholeLine, that the key
// begins its line, where a value after ':' is the rest of the line
// (password: correct horse battery staple).
func (s *Scrubber) valueAfterKey(in string, esc escMarks, v int, kind kvKind, counts, query, code, lvl, header bool, need strength, wholeLine bool) (hit, bool) {
	if kind == kvAuthorization && !query {
		return s.matchAuthorization(in, esc, v, 0)
	}
	if strings.HasPrefix(in[v:], "-----BEGIN ") {
		if h, ok := matchPEM(in, v); ok && s.on[famPrivateKey] {
			return h, true
		}
	}
	f := valueFamily(kind, query)
	if in[v] == '[' {
		if need != anyValue || strings.HasPrefix(in[v:], placeholderPrefix) || bracketedPhrase(in[v:]) {
			return hit{}, false
		}
		return s.matchList(in, esc, v, kind, f)
	}
	mode := stopValue
	switch {
	case query:
		mode = stopQuery
	case kind == kvAzure:
		mode = stopAzure
	case kind == kvCookie && header:
		mode = stopLine
	}
	if in[v] == '|' || in[v] == '>' {
		if vs, ve, ok := blockScalar(in, v); ok {
			if ve > vs && plausibleStart(in[vs:], true) && plausibleValue(in[vs:ve]) && looksLike(in[vs:ve], need, true) {
				return s.refine(in, vs, ve, f)
			}
			return hit{}, false
		}
	}
	vs, closing := openValue(in, v)
	if closing != "" {
		lvl = esc.at(v)
	}
	if !plausibleStart(in[vs:], closing != "") {
		return hit{}, false
	}
	lim := maxValue
	if need != anyValue {
		lim = maxProseValue
		if mode == stopValue {
			mode |= stopToken
		}
	} else if code && closing == "" {
		// An unquoted value in code must look random (below), which its
		// first bytes decide: a run of token:=token:=… read whole from
		// every separator would cost maxValue bytes a byte.
		lim = maxProseValue
	}
	ve := valueEndMax(in, esc, vs, closing, mode, lvl, lim)
	if mode&stopToken != 0 && ve+1 < len(in) && in[ve] == '=' && in[ve+1] == '[' && placeholderLen(in[ve+1:]) > 0 {
		// What a first pass found after the '=': that pass read the value
		// on into it, as below, and judged it with it, so this value is
		// not judged without it (idempotence; …KEY=…ACCESS.KEY=0100).
		return hit{}, false
	}
	if mode&stopToken != 0 && ve+1 < len(in) && in[ve] == '=' && chars[in[ve+1]]&cTok68 != 0 && in[ve+1] != '=' {
		// One '=' inside a token (whos3vck04=_tzu2…, _gitlab_session=h3q…):
		// read on to the next one. Reading no further keeps a run of
		// key=key=… linear at a small cost per separator.
		ve = valueEndMax(in, esc, ve+1, closing, mode, lvl, lim-(ve+1-vs))
	}
	if mode&stopToken != 0 && ve > vs && ve < len(in) && in[ve] == '=' && chars[in[ve-1]]&cAlnum != 0 {
		// Base64's padding ends the value (KEY = ZHVtbXk…YQ==): one or
		// two '=' that no token byte follows.
		k := ve
		for k < len(in) && k-ve < 2 && in[k] == '=' {
			k++
		}
		if k == len(in) || chars[in[k]]&cTok68 == 0 && in[k] != '[' {
			ve = k
		}
	}
	if kind == kvSSN && closing == "" && vs+11 <= len(in) && isSSNValue(in[vs:vs+11]) && !is(in, vs+11, cWord) {
		ve = vs + 11 // 536 90 4412
	}
	if header && closing == "" && mode&stopValue != 0 && !wholeLine && phraseValue(in, vs, ve) {
		return hit{}, false // AWS_SECRET_ACCESS_KEY: unbound variable
	}
	if wholeLine && header && closing == "" && mode == stopValue && need == anyValue && ve > vs && !isStopWord(in[vs:ve]) && kind != kvSSN {
		// (A social security number is its 11 bytes, read above.)
		// But not over an identifier written in groups, which whole
		// takes as itself: password: GB82 WEST 1234 … is an IBAN.
		if g, ok := s.matchGrouped(in, vs); !ok || g.end <= ve {
			// The line, if it reads as a value; else its first word.
			if e := restOfLine(in, vs, ve); e > ve && plausibleValue(in[vs:e]) {
				ve = e
			}
		}
	}
	val := in[vs:ve]
	if (need == randomValue || need == quotedValue) && closing == "" && len(val) > minMixed && val[len(val)-1] == ':' && (generated(val[:len(val)-1]) || mixedGenerated(val[:len(val)-1])) {
		// A generated value that ends a link of an error chain (…:
		// password: UyFCXCpkJHpEc2I9: unexpected EOF): the ':' is the
		// chain's, the value is no error's prefix.
		ve--
		val = in[vs:ve]
	}
	if need == anyValue && closing == "" && len(val) > 1 && val[len(val)-1] == ':' && ve+1 < len(in) && in[ve] == ' ' {
		// A label, then the value (password=key: bXlwYXNzd29yZA==, a
		// YAML line pasted as a value): the value goes too when it looks
		// generated.
		e := ve + 1
		for e < len(in) && e-ve <= maxProseValue && proseByte[in[e]] {
			e++
		}
		if w := strings.TrimRight(in[ve+1:e], ".,;:"); len(w) >= minMixed && (generated(w) || mixedGenerated(w)) {
			ve = ve + 1 + len(w)
			val = in[vs:ve]
		}
	}
	if closing == "" {
		val = firstLine(val)
	}
	if closing != "" && formatString(in, vs, ve) {
		return hit{}, false // format_password = f"prefix_{value}", "prefix_{}".format(value)
	}
	// A plural key (api_keys, secrets) names a list or a count more often
	// than it holds a secret: a lone unquoted value after it must look
	// generated (keyVaultToStoreSecrets: cmp2-qat-1208358310).
	if !looksLike(val, need, closing != "") || !plausibleValue(val) || closing == "" && (codeValue(val) || castAt(in, vs)) || counts && isNumber(val) ||
		counts && closing == "" && !generated(val) || closing == "" && isTypeName(val) ||
		code && closing == "" && !randomish(val) && !misnested(val) || !looksLike(val, need, closing != "") {
		return hit{}, false
	}
	switch {
	case kind == kvSSN:
		if !isSSNValue(val) {
			return hit{}, false
		}
	case kind == kvAWS && len(val) == 40 && skip(val, 0, cB64) == 40:
		f = famAWSSecretKey
	}
	if ve-vs >= lim && lim < maxValue {
		// Judged by its first bytes, the value goes on to its end.
		ve = valueEndMax(in, esc, vs, closing, mode&^stopToken, lvl, maxValue)
	}
	return s.refine(in, vs, ve, f)
}

// phraseValue reports whether the unquoted value in[vs:ve] after ':'
// begins a phrase rather than being a value: a word of lower-case letters
// and, after a blank, another such word, as error messages go on
// ("unbound variable", "permission denied", "dial tcp: lookup …").
func phraseValue(in string, vs, ve int) bool {
	if ve-vs > 16 || ve >= len(in) || in[ve] != ' ' {
		return false
	}
	for k := vs; k < ve; k++ {
		if !isLower(in[k]) {
			return false
		}
	}
	// The next word is plain lower-case letters, which no finding is:
	// a second pass reads it the same.
	e := ve + 1
	for e < len(in) && e-ve <= 16 && isLower(in[e]) {
		e++
	}
	if e-(ve+1) < 2 {
		return false
	}
	// …and ends there: not the prefix of a token (pypi-…, sk.eyJ…).
	// (A placeholder there stands for a finding that a first pass read
	// glued to the word, which it read as a phrase then too, or redacted
	// the value before.)
	switch {
	case e == len(in) || isSpace(in[e]) || strings.IndexByte(",;:!?)'\"", in[e]) >= 0:
		return true
	case in[e] == '.':
		return e+1 == len(in) || isSpace(in[e+1])
	case in[e] == '[':
		return placeholderLen(in[e:]) > 0
	}
	return false
}

// valueFamily returns the family of a value after a key of this kind.
func valueFamily(kind kvKind, query bool) family {
	switch {
	case query:
		return famQuerySecret
	case kind == kvPassword:
		return famPassword
	case kind == kvAzure:
		return famAzureKey
	case kind == kvCookie:
		return famCookie
	case kind == kvSSN:
		return famSSN
	}
	return famSecret
}

// strength says what a value after a key must look like to be redacted.
type strength uint8

const (
	// anyValue: any plausible value, after a key that names a secret.
	anyValue strength = iota
	// quotedValue: any plausible value if it is quoted, else as
	// randomValue, after a key that only has a secret-ish word inside
	// (password_super_secure = "…", mySecretString: …): the quotes say it
	// is the key's value, not the next words of a sentence.
	quotedValue
	// randomValue: 6 bytes or more with a digit and a letter or letters
	// of both cases (randomish), after a key that ends a phrase in prose
	// (failed to get current token: EOF) or that may name a pattern
	// (glob_pat).
	randomValue
	// generatedValue: a machine-made value (generated), after a key as
	// vague as "key" (Using Key=…, ?key=…).
	generatedValue
)

// looksLike reports whether val looks as need requires. An unquoted
// value that ends with ':' is the prefix of the next error in a chain
// (token: x509: …), not a value.
func looksLike(val string, need strength, quoted bool) bool {
	switch {
	case need == quotedValue && quoted:
		return true
	case need == quotedValue, need == randomValue:
		return len(val) >= 6 && randomish(val) && (quoted || val[len(val)-1] != ':') && strings.IndexByte(val, ' ') < 0
	case need == generatedValue:
		return generated(val) || mixedGenerated(val) || generatedToken(val)
	}
	return true
}

// generatedToken reports whether val is one run of base64 or base64url
// bytes (and padding) that matchRandomRun would find on its own, where no
// key stood before it: a value after a key as vague as "key" is no less a
// secret for the key (codemagic_key: "PSIYbVgf…_cKmOp…", which has no
// digit for generated to count).
func generatedToken(val string) bool {
	t := strings.TrimRight(val, "=")
	return len(t) >= minRandomRun && skip(t, 0, cB64|cB64URL) == len(t) && generatedRun(t, minRandomRun) && !dummy(t)
}

// minMixed is the shortest value mixedGenerated accepts.
const minMixed = 8

// mixedGenerated reports whether val, 8 to 64 letters and digits (and
// base64's padding at its end), looks machine-made by its letters alone:
// both cases (two of each, or one of each and a digit), their case
// changing as random bytes change it (randomBody)
// and not read as words: not CamelCase, not in Go's words (inWords), and
// fewer than one name-like part in three bytes (aGNIVWlPaU, cGRpSTZJ;
// not OAuthToken, XMLHttpRequest, NoSuchKey). It is the test for a short
// value whose key or word names a secret but no digit says it was made by
// a generator (generated asks for one).
func mixedGenerated(val string) bool {
	v := strings.TrimRight(val, "=")
	if len(v) < minMixed || len(v) > 64 || len(val)-len(v) > 2 {
		return false
	}
	var u, l, tokens int
	var last uint8
	digits := false
	for k := 0; k < len(v); k++ {
		c := v[k]
		var cl uint8
		switch {
		case isDigit(c):
			cl, digits = 1, true
		case isUpper(c):
			cl, u = 2, u+1
		case isLower(c):
			cl, l = 3, l+1
		default:
			return false
		}
		switch {
		case k == 0 || cl == 1 && last != 1 || cl == 3 && last == 1:
			tokens++
		case cl == 2 && (last != 2 || k+1 < len(v) && isLower(v[k+1])):
			tokens++
		}
		last = cl
	}
	return (u >= 2 && l >= 2 || u >= 1 && l >= 1 && digits) && len(v) < tokens*3 && randomBody(v) && !inWords(v)
}

// generated reports whether val looks machine-made: 10 bytes or more,
// letters with digits (or base64's '+', '/' and '='), changing between
// lower case, upper case and digits at least once every five bytes, or
// a run of 16 letters and digits with digits in two places, as random
// keys do and names, words, versions and ids (booking_42,
// rc0.15.0-SNAPSHOT, prod5zyxlmy-cmk, customer_123456789) do not.
func generated(val string) bool {
	if len(val) < 10 {
		return false
	}
	letters, others, switches := 0, 0, 0
	var last uint8
	for i := 0; i < len(val); i++ {
		c := val[i]
		var cl uint8
		switch {
		case isDigit(c):
			cl, others = 1, others+1
		case isUpper(c):
			cl, letters = 2, letters+1
		case isLower(c):
			cl, letters = 3, letters+1
		case c == '+' || c == '/' || c == '=':
			others++
		}
		if cl != 0 {
			if last != 0 && cl != last {
				switches++
			}
			last = cl
		}
	}
	if letters == 0 || others == 0 {
		return false
	}
	if switches*5 >= len(val) {
		return true
	}
	// A long run of lower case and digits, digits in two places or more
	// (0tgrzujhhrnzr28r), as generators that avoid upper case make; not a
	// word with a number after it (ProductionDb2024).
	run, best, groups := 0, 0, 0
	for i := 0; i < len(val); i++ {
		c := val[i]
		if chars[c]&cAlnum == 0 {
			run = 0
			continue
		}
		run++
		best = max(best, run)
		if isDigit(c) && (i == 0 || !isDigit(val[i-1])) {
			groups++
		}
	}
	return best >= 16 && groups >= 2
}

// restOfLine returns the end of an unquoted value after ':' at the start
// of a line whose first word ends at in[e]: the rest of the line, as YAML
// and header values run (password: correct horse battery staple), when
// it is plain words; up to a comment (" # …"). A word with '=' or ':' in
// it, or a bracket or a quote, is the sign of a line of pairs or prose,
// where the value is its first word only: then e itself.
func restOfLine(in string, vs, e int) int {
	if isNumber(in[vs:e]) {
		return e // a quantity: password:  16 bytes (kubectl describe)
	}
	end := e
	for k := e; k < len(in) && k-vs < maxProseValue; {
		b := skipBlanks(in, k, false)
		if b == len(in) || lineBreak(in, b) > 0 {
			return end
		}
		if in[b] == '#' {
			return end
		}
		w := b
		for w < len(in) && !isSpace(in[w]) {
			if c := in[w]; c == '=' || c == ':' || valueStops[c]&stopValue != 0 || strings.IndexByte("([{", c) >= 0 {
				return e
			}
			w++
		}
		end, k = w, w
	}
	if end == len(in) {
		return end
	}
	return e
}

// valueOnNextLine matches a value written alone on the line after its key
// (password=⏎hunter2, password:⏎  hunter2 in YAML) at the line break
// in[v]: past its indentation the next line is one run of value bytes
// that is no key itself (no ':' in it, no '=' but as base64 padding at
// its end), no comment, list item, bracket or path, and random-looking.
func (s *Scrubber) valueOnNextLine(in string, v int, kind kvKind, counts bool, need strength) (hit, bool) {
	if kind == kvAuthorization || kind == kvSSN {
		return hit{}, false
	}
	vs := skipBlanks(in, v+lineBreak(in, v), false)
	ve := vs
	for ve < len(in) && ve-vs <= maxProseValue && !isSpace(in[ve]) {
		ve++
	}
	if ve == vs || ve-vs > maxProseValue {
		return hit{}, false
	}
	if t := skipBlanks(in, ve, false); t < len(in) && lineBreak(in, t) == 0 {
		return hit{}, false
	}
	val := in[vs:ve]
	if strings.IndexByte("#/-<{[;*$%`'\"", val[0]) >= 0 || strings.IndexByte(val, ':') >= 0 ||
		strings.IndexByte(strings.TrimRight(val, "="), '=') >= 0 ||
		!plausibleValue(val) || codeValue(val) || counts && isNumber(val) ||
		!looksLike(val, max(need, randomValue), false) {
		return hit{}, false
	}
	return s.refine(in, vs, ve, valueFamily(kind, false))
}

// isTypeName reports whether w, a word, names a string type, as written
// between a key and its value in code: Go's var apiToken string = …,
// Kotlin's val apiToken: String = …, Python's api_token: str = ….
func isTypeName(w string) bool {
	if len(w) < 3 || len(w) > 12 || strings.IndexByte("sbtcaopSBTCAOP", w[0]) < 0 {
		return false
	}
	var buf [12]byte
	for i := 0; i < len(w); i++ {
		buf[i] = w[i] | 0x20
	}
	switch string(buf[:len(w)]) {
	case "string", "str", "bytes", "byte", "text", "char", "secretstr", "securestring",
		"charsequence", "any", "object", "password":
		return true
	}
	return false
}

// typeStart returns where the key before the type that begins at in[t]
// ends: past the type's "[]", '*' or '&' and, before them, the blanks and
// the ':' of key: Type.
func typeStart(in string, t, lo int) int {
	for t > lo && strings.IndexByte("[]*&", in[t-1]) >= 0 {
		t--
	}
	b := t
	for b > lo && t-b < 8 && isBlank(in[b-1]) {
		b--
	}
	if b > lo && in[b-1] == ':' {
		return b - 1
	}
	if b == t {
		return t // no blank: not a type after a key
	}
	return b
}

// typeThenEquals reports whether the ':' at in[i] is followed by a type
// and '=' (key: String = …), which matchKeyValue reads at the '='.
func typeThenEquals(in string, i int) bool {
	t := skipBlanks(in, i+1, false)
	e := t
	for e < len(in) && e-t <= 16 && (chars[in[e]]&cWord != 0 || in[e] == '[' || in[e] == ']' || in[e] == '*' || in[e] == '&' || in[e] == '?') {
		e++
	}
	if f := skipBlanks(in, e, false); e == t || f+1 >= len(in) || in[f] != '=' || in[f+1] == '=' {
		return false
	}
	w := in[t:e]
	for len(w) > 0 && (w[0] == '[' || w[0] == ']' || w[0] == '*' || w[0] == '&') {
		w = w[1:]
	}
	for len(w) > 0 && w[len(w)-1] == '?' {
		w = w[:len(w)-1]
	}
	return isTypeName(w)
}

// inPhrase reports whether the key that begins at in[k] ends a phrase: a
// blank and a free word (after a blank or a line break) or a placeholder
// before it, as in "failed to get current token: …", rather than a key
// that begins a line, a field or a pair.
func inPhrase(in string, k, lo int) bool {
	b := blanksBefore(in, k, lo)
	if b == k {
		return false
	}
	if prev(in, b, lo) == ']' {
		return b == lo || placeholderEnds(in, b, lo)
	}
	w := b
	for w > lo && b-w < 64 && chars[in[w-1]]&cAlnum != 0 {
		w--
	}
	if w == b {
		return false
	}
	p := prev(in, w, lo)
	return w == 0 || isSpace(p) || p == ']' && (w == lo || placeholderEnds(in, w, lo))
}

// placeholderEnds reports whether a placeholder ends at in[e], after lo.
func placeholderEnds(in string, e, lo int) bool {
	k := strings.LastIndexByte(in[max(lo, e-64):e], '[')
	return k >= 0 && placeholderLen(in[max(lo, e-64)+k:]) == e-(max(lo, e-64)+k)
}

// phraseStart returns where the key in[j:ke] begins as words: at its
// qualifier for a key such as "private key".
func phraseStart(in string, j, ke, lo int) int {
	if !qualifiedKey(in, j, ke, lo) {
		return j
	}
	p := blanksBefore(in, j, lo)
	q := p
	for q > lo && p-q < 16 && isLetter(in[q-1]) {
		q--
	}
	return q
}

// lineStart reports whether the key that begins at in[j] begins its line,
// after indentation or "export ".
func lineStart(in string, j, lo int) bool {
	k := j
	if k-lo >= len("export ") && in[k-len("export "):k] == "export " {
		k -= len("export ")
	}
	for k > lo && j-k < 32 && isBlank(in[k-1]) {
		k--
	}
	if k == lo {
		return lo == 0
	}
	return in[k-1] == '\n' || in[k-1] == '\r'
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' }

// refine returns the value in[vs:ve] as a hit of family f, or of the more
// specific family of the vendor token or private key that the value is.
func (s *Scrubber) refine(in string, vs, ve int, f family) (hit, bool) {
	if ve < len(in) && chars[in[ve]]&cTok68 != 0 {
		// A vendor token that a value's stops or bound cut short, at an
		// '=' inside it (sntrys_…=_…) or after maxValue bytes: the token
		// whole.
		if h, ok := matchToken(in, vs, vs); ok && h.start == vs && h.end > ve && s.on[h.fam] {
			return h, true
		}
	}
	if g, ok := tokenFamily(in[:ve], vs); ok && s.on[g] {
		f = g
	}
	return hit{vs, ve, f}, s.on[f]
}

// tokenFamily returns the family of the vendor token that is exactly
// in[vs:], if any.
func tokenFamily(in string, vs int) (family, bool) {
	if vs >= len(in) {
		return 0, false
	}
	if strings.HasPrefix(in[vs:], "-----BEGIN ") {
		return famPrivateKey, true
	}
	h, ok := matchToken(in, vs, vs)
	if !ok && chars[in[vs]]&cHex != 0 {
		h, ok = matchHexToken(in, vs)
	}
	if !ok {
		h, ok = matchShapedToken(in, vs)
	}
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
	stopList                    // elements of Go's %v of a slice
	stopToken                   // with stopValue: one token, after a vaguer key (no '=' inside)
)

var valueStops = func() (t [256]uint8) {
	for _, c := range []byte("\n\r") {
		t[c] = stopValue | stopQuery | stopAzure | stopLine | stopList
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
	for _, c := range []byte("[]{}\"") {
		t[c] |= stopList
	}
	t['='] |= stopToken
	return t
}()

// openValue returns where the value that begins at in[v] starts, past an
// opening quote, and the quote that closes it: "", `"`, `'`, or `\"` for
// JSON escaped inside a string; a backtick closes a Markdown code span.
func openValue(in string, v int) (vs int, closing string) {
	switch {
	case in[v] == '"' || in[v] == '\'' || in[v] == '`':
		return v + 1, in[v : v+1]
	case strings.HasPrefix(in[v:], `\"`):
		return v + 2, `\"`
	}
	// A string literal's prefix: C#'s and Objective-C's @"…", C#'s $"…",
	// Python's r'…', b"…", f"…" and rb'…', C's L"…".
	for q := v; q < len(in) && q-v < 2 && strings.IndexByte(literalPrefixes, in[q]) >= 0; q++ {
		if q+1 < len(in) && (in[q+1] == '"' || in[q+1] == '\'') {
			return q + 2, in[q+1 : q+2]
		}
	}
	return v, ""
}

// literalPrefixes are the bytes a string literal's prefix is made of.
const literalPrefixes = "@$rRbBfFuUL"

// valueEnd returns the end of the value starting at in[vs]: for a quoted
// one the closing quote, for an unquoted one the first byte that ends a
// value in this mode, less a full stop ending a sentence. lvl says
// whether the value was opened by an escaped separator or quote: only
// then do escaped delimiters end it.
func valueEnd(in string, esc escMarks, vs int, closing string, mode uint8, lvl bool) int {
	return valueEndMax(in, esc, vs, closing, mode, lvl, maxValue)
}

// maxValue bounds how far a value is read: a value a matcher then
// rejects is read again from each separator inside it, so the bound keeps
// that work linear. Values after the vaguer keys (a random-looking one is
// needed) are read maxProseValue bytes at most.
const maxValue = 4096

// valueEndMax is valueEnd reading at most max bytes.
func valueEndMax(in string, esc escMarks, vs int, closing string, mode uint8, lvl bool, max int) int {
	if closing != "" {
		return quotedEndMax(in, esc, vs, closing, lvl, max)
	}
	e := vs
	depth := 0 // brackets opened inside the value: p@ss{w0rd}, f(x)
loop:
	for e < len(in) && e-vs < max {
		c := in[e]
		if valueStops[c]&mode != 0 && !(!lvl && esc.at(e) && !schemeAfter(in, e)) && !(c == '&' && mode&stopValue != 0 && e > vs && !formPairAt(in, e+1)) {
			switch {
			case depth == 0 || mode&stopValue == 0:
				break loop
			case c == ')' || c == ']' || c == '}':
				depth--
			case c != ',' && c != ';' && c != '<' && c != '>':
				// (Inside brackets those are the value's own bytes:
				// m{{h}o)p${e]nob(ody[finds>-_$#…}}.)
				break loop
			}
		} else if mode&stopValue != 0 && (c == '(' || c == '[' || c == '{') && depth < 8 {
			depth++
		}
		e++
	}
	for mode == stopLine && e > vs && in[e-1] == ' ' {
		e--
	}
	for e > vs && in[e-1] == '.' {
		e--
	}
	if mode&(stopValue|stopQuery) != 0 {
		e = wrapValue(in, vs, e)
	}
	return e
}

// formPairAt reports whether a form's next pair begins at in[i] (a key of
// up to 64 bytes and '='): only then does '&' end a value that is not a
// URL's (password=x&user=y); a '&' inside a password (…x8#P7r5&@*xC$…)
// is one of its bytes.
func formPairAt(in string, i int) bool {
	if i >= len(in) || in[i] <= ' ' || in[i] == '&' {
		return true // "a && b", "x & y": a shell's or a language's operator
	}
	k := i
	for k < len(in) && k-i <= maxKey && chars[in[k]]&cKey != 0 {
		k++
	}
	return k > i && k < len(in) && (in[k] == '=' || in[k] == '[')
}

// schemeAfter reports whether the escaped delimiter at in[e] is a blank
// before an Authorization scheme and its blank ("token=x%20Bearer abc…"):
// a value written plainly goes on across an escaped blank, but not into
// "Bearer ", so that the credentials after it are found as such.
func schemeAfter(in string, e int) bool {
	if in[e] != ' ' {
		return false
	}
	return hasPrefixFold(in[e+1:], "bearer ") || hasPrefixFold(in[e+1:], "basic ")
}

// quotedEnd returns the position of the quote that closes a value opened
// at in[vs]: the first closing quote written like the opening one (both
// escaped or neither) on the same line, or, when the line has none, on
// one of the next few lines if it is followed by the end of a value there.
// Failing both, the value ends with its line. A backslash escapes the
// byte after it.
func quotedEnd(in string, esc escMarks, vs int, closing string, lvl bool) int {
	return quotedEndMax(in, esc, vs, closing, lvl, maxValue)
}

// quotedEndMax is quotedEnd reading at most max bytes.
func quotedEndMax(in string, esc escMarks, vs int, closing string, lvl bool, max int) int {
	e := vs
	for e < len(in) && e-vs < max {
		// (The first byte is compared first: most are no quote.)
		if (closing == "" || in[e] == closing[0]) && strings.HasPrefix(in[e:], closing) && (closing == `\"` || esc.at(e) == lvl) {
			return e
		}
		switch in[e] {
		case '\n', '\r':
			if c := closeAcrossLines(in, esc, e, closing, lvl); c >= 0 {
				return c
			}
			return e
		case '\\':
			if !esc.at(e) {
				e++
			}
		}
		e++
	}
	return min(e, len(in))
}

// closeAcrossLines looks for the closing quote of a quoted value that
// goes on past the line break at in[e], within maxQuoted bytes and
// maxWraps line breaks. It returns -1 if there is none.
func closeAcrossLines(in string, esc escMarks, e int, closing string, lvl bool) int {
	lines := 0
	for k := e; k < len(in) && k-e < maxQuoted; k++ {
		switch c := in[k]; {
		case c == '\n':
			if lines++; lines > maxWraps {
				return -1
			}
		case c == '\\' && !esc.at(k):
			k++
		case strings.HasPrefix(in[k:], closing) && (closing == `\"` || esc.at(k) == lvl):
			a := k + len(closing)
			if a == len(in) || strings.IndexByte(" \t\r\n,;:}])", in[a]) >= 0 {
				return k
			}
		}
	}
	return -1
}

// blockScalar matches a YAML block scalar at in[v] ("|", "|-", ">+" and
// the like, then a line break): its value is the more indented lines that
// follow, from the first one's text to the last one's end. ok says
// whether in[v] begins a block scalar at all; the value may be empty.
func blockScalar(in string, v int) (vs, ve int, ok bool) {
	t := v + 1
	for t < len(in) && (in[t] == '-' || in[t] == '+' || isDigit(in[t])) && t-v < 3 {
		t++
	}
	t = skipBlanks(in, t, false)
	b := lineBreak(in, t)
	if b == 0 {
		return 0, 0, false
	}
	indent := skipBlanks(in, t+b, false) - (t + b)
	if indent == 0 {
		return 0, 0, true
	}
	vs = t + b + indent
	ve = vs
	for k := vs; k < len(in) && k-vs < maxQuoted; {
		e := k
		for e < len(in) && in[e] != '\n' && in[e] != '\r' {
			e++
		}
		if e > k {
			ve = e
		}
		b := lineBreak(in, e)
		if b == 0 || skipBlanks(in, e+b, false)-(e+b) < indent {
			break
		}
		k = e + b + indent
	}
	return vs, ve, true
}

// wrapValue returns the end of an unquoted value in[vs:e] that a line
// break may have split: a random-looking value of 8 or more bytes goes on
// on the next line when that whole line is one random-looking run of
// token bytes ('=' only as padding at its end), such as the rest of a key
// that a terminal or a log line limit wrapped; or, when the value ends a
// line exactly as wide as text is commonly wrapped at (wrapWidths), with
// the random-looking run of token bytes that begins the next line, more
// text after it or not.
//
// The width is measured from the line's start, before the value's key,
// which an earlier finding on the line may have changed in a second pass;
// that changes nothing, as only a finding is extended (valueAfterKey
// judges a split value by its first line), and a second pass reads the
// finding as a placeholder.
func wrapValue(in string, vs, e int) int {
	if lineBreak(in, e) == 0 || e-vs < 8 || !randomish(in[vs:e]) {
		return e
	}
	for wraps := 0; wraps < maxWraps; wraps++ {
		b := lineBreak(in, e)
		if b == 0 {
			break
		}
		f := e + b
		g := skipMax(in, f, cTok68, maxQuoted)
		p := g
		for p > f && in[p-1] == '=' {
			p--
		}
		if g == f || strings.IndexByte(in[f:p], '=') >= 0 || !randomish(in[f:p]) {
			break
		}
		if g-f < 4 || g < len(in) && lineBreak(in, g) == 0 {
			// The run does not fill its line: only after a wrap width.
			if wrapWidth(in, e) && !capitalized(in[f:p]) && (g == len(in) || isSpace(in[g]) || strings.IndexByte(",;)]}\"'", in[g]) >= 0) {
				e = g
			}
			break
		}
		e = g
	}
	return e
}

// firstLine returns the first line of a value that a line break may have
// split (wrapValue). A split value is judged by its first line alone, and
// is a finding whole only if that line is one: whether it was split may
// be read by the line's width, which a finding before the value on its
// line changes in a second pass (idempotence).
func firstLine(v string) string {
	if lb := indexLineBreak(v); lb > 0 {
		return v[:lb]
	}
	return v
}

// capitalized reports whether w is a word with a capital first letter
// (Caused, Error), which begins a line of text rather than goes on a key.
func capitalized(w string) bool {
	if w == "" || !isUpper(w[0]) {
		return false
	}
	for i := 1; i < len(w); i++ {
		if !isLower(w[i]) {
			return false
		}
	}
	return true
}

// wrapWidths are the widths text is commonly wrapped at: MIME's 76, 64
// for PEM, terminals' 80, and the like.
var wrapWidths = [...]int{64, 72, 76, 78, 79, 80, 100, 120, 132}

// wrapWidth reports whether the line that ends at in[e] is as wide as
// one of wrapWidths.
func wrapWidth(in string, e int) bool {
	ls := strings.LastIndexByte(in[max(0, e-140):e], '\n') + 1 + max(0, e-140)
	if ls == max(0, e-140) && ls > 0 {
		return false // longer than every width
	}
	for _, w := range wrapWidths {
		if e-ls == w {
			return true
		}
	}
	return false
}

// randomish reports whether s looks generated rather than written: it has
// a digit and a letter, or letters of both cases.
func randomish(s string) bool {
	k := letterKinds(s)
	return k&kindDigit != 0 && k&kindLetters != 0 || k&kindLetters == kindLetters
}

// plausibleStart reports whether a value beginning with rest could be a
// secret: not a placeholder, not a template (${VAR}, {{ .x }}, $(cmd),
// #{x}, %(x)s, <token>) and, unquoted, not a nested object. It looks only
// at the first bytes, so that a value rejected here costs nothing to read.
func plausibleStart(rest string, quoted bool) bool {
	switch {
	case rest == "",
		strings.HasPrefix(rest, placeholderPrefix),
		strings.HasPrefix(rest, "${"), strings.HasPrefix(rest, "{{"), strings.HasPrefix(rest, "$("),
		strings.HasPrefix(rest, "#{"), strings.HasPrefix(rest, "%("),
		strings.HasPrefix(rest, "ENC["), // a value encrypted by SOPS
		rest[0] == '<',
		rest[0] == '$' && shellVariable(rest),
		rest[0] == '%' && wrappedName(rest, '%'),
		rest[0] == '[' && (wrappedName(rest, ']') || bracketedPhrase(rest)),
		rest[0] == '{' && bracedName(rest),
		!quoted && rest[0] == '[',
		!quoted && rest[0] == '{' && !bracedWord(rest):
		return false
	}
	return true
}

// shellVariable reports whether rest begins with a shell variable as a
// whole value: $API_KEY, $token, not followed by more of a value.
// Variables are written in upper case or, in templates, as plain
// lower-case words; $ecr3t is a password.
func shellVariable(rest string) bool {
	e := 1
	upper, lower, digit := false, false, false
	for e < len(rest) && e <= maxKey && chars[rest[e]]&cWord != 0 {
		c := rest[e]
		upper = upper || isUpper(c)
		lower = lower || isLower(c)
		digit = digit || isDigit(c)
		e++
	}
	if e < 3 || e > maxKey || isDigit(rest[1]) || e < len(rest) && chars[rest[e]]&cTok68 != 0 && rest[e] != '.' {
		return false
	}
	return !lower || !upper && !digit
}

// wrappedName reports whether rest begins with a name between rest[0]
// and closer, as a whole value: a placeholder or variable such as
// [PASSWORD], [api_key] or %TestSourcePassword% (Windows).
func wrappedName(rest string, closer byte) bool {
	e := 1
	for e < len(rest) && e <= maxKey && (chars[rest[e]]&cWord != 0 || rest[e] == '-' || rest[e] == '.') {
		e++
	}
	return e > 2 && e < len(rest) && rest[e] == closer && (e+1 == len(rest) || chars[rest[e+1]]&cTok68 == 0)
}

// bracedName reports whether rest begins with a template's placeholder
// in braces, as a whole value: an identifier ({password}, { password },
// {config.token}), maybe with blanks around it. (A braced GUID,
// {acd3c08b-74e8-…}, is a value.)
func bracedName(rest string) bool {
	e := skipBlanks(rest, 1, false)
	n := e
	if e >= len(rest) || !isLetter(rest[e]) && rest[e] != '_' {
		return false
	}
	for e < len(rest) && e-n <= maxKey && (chars[rest[e]]&cWord != 0 || rest[e] == '.') {
		e++
	}
	e = skipBlanks(rest, e, false)
	return e < len(rest) && rest[e] == '}' && (e+1 == len(rest) || chars[rest[e+1]]&cTok68 == 0)
}

// formatString reports whether the quoted value in[vs:ve] is a format
// string, a template of a value rather than one: braces inside, and
// Python's f before its opening quote or .format( after its closing one.
func formatString(in string, vs, ve int) bool {
	if strings.IndexByte(in[vs:ve], '{') < 0 {
		return false
	}
	q := vs - 1 // the opening quote
	return q >= 1 && in[q-1] == 'f' && (q == 1 || chars[in[q-2]]&cWord == 0) ||
		ve < len(in) && strings.HasPrefix(in[ve+1:], ".format(")
}

// bracketedPhrase reports whether rest begins with words of letters in
// brackets, a placeholder's description: [Shared Access key goes here],
// [your password]. (Go's %v of a slice of values, [hunter2 Xq9vQ2mLp7],
// has digits in them.)
func bracketedPhrase(rest string) bool {
	if len(rest) < 4 || !isLetter(rest[1]) {
		return false
	}
	blank := false
	for e := 2; e < len(rest) && e <= maxProseValue; e++ {
		switch c := rest[e]; {
		case c == ']':
			return blank && rest[e-1] != ' '
		case c == ' ':
			blank = true
		case !isLetter(c) && c != '-' && c != '\'':
			return false
		}
	}
	return false
}

// bracedWord reports whether rest begins with a word in braces that a
// value goes on after ({abc}def1), not an object ({"a": 1}, { x }).
func bracedWord(rest string) bool {
	for k := 1; k < len(rest) && k <= 64; k++ {
		switch c := rest[k]; {
		case c == '}':
			return k > 1 && is(rest, k+1, cWord)
		case isSpace(c) || c == '"' || c == '\'' || c == ':' || c == ',' || c == '{':
			return false
		}
	}
	return false
}

// plausibleValue reports whether a whole value could be a secret: long
// enough, not masked (***), not a stop word, and without a placeholder
// inside (a value a first pass rejected and redacted a finding in, which
// a second pass must reject again).
func plausibleValue(val string) bool {
	if len(val) < minValueLen || masked(val) || strings.Contains(val, placeholderPrefix) {
		return false
	}
	if len(val) > 2 && (val[0] == '(' && val[len(val)-1] == ')' || val[0] == '<' && val[len(val)-1] == '>') {
		val = val[1 : len(val)-1] // (omitted), <redacted>
	}
	return !isStopWord(val) && !algorithmName(val) && !placeholderValue(val) && !versionTail(val) && !addressOnly(val)
}

// masked reports whether val is only mask characters ('*', 'x', 'X',
// '#', '.', '•'), as strings.Trim with them would leave nothing of it,
// reading bytes rather than runes: most values end it at their first.
func masked(val string) bool {
	for i := 0; i < len(val); {
		switch val[i] {
		case '*', 'x', 'X', '#', '.':
			i++
		case "•"[0]:
			if !strings.HasPrefix(val[i:], "•") {
				return false
			}
			i += len("•")
		default:
			return false
		}
	}
	return true
}

// addressOnly reports whether val is a URL with no user name or password
// in it (scheme://host…, no '@' before its path): an address that a
// secret-ish key names (AUTH_URL, MONGO_NO_AUTH = "mongodb://host/db",
// "token": "https://api.example.com/v1/token") rather than a secret, if
// no part of it looks generated. A secret inside it otherwise (a query's
// token) is the URL's matchers' to find.
func addressOnly(val string) bool {
	k := strings.Index(val, "://")
	if k < 1 || k > 32 || !isLetter(val[0]) || skip(val[:k], 0, cScheme) != k {
		return false
	}
	rest := val[k+len("://"):]
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	if end == 0 || strings.IndexByte(rest[:end], '@') >= 0 {
		return false
	}
	// Not an address alone if a part of it looks generated (a webhook's
	// secret path: https://hooks.example.com/hook/8f3kd92JdkQ0sPz1).
	for p := 0; p < len(rest); {
		q := skip(rest, p, cAlnum)
		if q-p >= minShortRun && randomish(rest[p:q]) {
			return false
		}
		p = q + 1
	}
	return true
}

// placeholderWords mark a value that stands in for a secret in
// documentation and templates (PUT_YOUR_TOKEN_HERE, changeme), or shows
// one masked or cut short (AIza...redacted, sk-…wxyz).
var placeholderWords = [...]string{
	"your_", "your-", "yourtoken", "yourkey", "yourapi", "yoursecret", "yourpassword", "changeme",
	"change_me", "replace_me", "replaceme", "placeholder", "_here", "-here", "tokenhere", "keyhere",
	"redacted", "omitted", "masked", "...", "…",
}

// placeholderValue reports whether val is a placeholder rather than a
// secret: one byte repeated (aaaa…, yyy) or making up more than half of
// it, a run of five or more x, '*' or '#' (sha256~_xxxxxx_…,
// xoxp-…-#####), or a placeholder word. One
// pass: a placeholder word is compared only where a byte it begins with
// stands.
func placeholderValue(val string) bool {
	same, run, best := true, 0, 0
	for i := 0; i < len(val); i++ {
		c := val[i]
		same = same && c == val[0]
		if c == 'x' || c == 'X' || c == '*' || c == '#' {
			if run++; run > best {
				best = run
			}
		} else {
			run = 0
		}
	}
	if same || best >= 5 || len(val) >= 8 && dominant(val) {
		return true
	}
	if len(val) == len("not-set") && (val[3] == '-' || val[3] == '_') && hasPrefixFold(val, "not") && hasPrefixFold(val[4:], "set") ||
		len(val) == len("notset") && hasPrefixFold(val, "notset") {
		return true // a default that says no value was given
	}
	if len(val) < 6 {
		return false
	}
	for i := 0; i < len(val); i++ {
		c := val[i]
		if !placeholderLead[c] {
			continue
		}
		if isUpper(c) {
			c += 'a' - 'A'
		}
		for _, w := range placeholderByLead[c] {
			if hasPrefixFold(val[i:], w) {
				return true
			}
		}
	}
	return false
}

// dominant reports whether one byte makes up more than half of s
// (AIzaaaaaaaaaaaaaaaa…, glc_1111111111…), which a random value never
// has: a placeholder that keeps a vendor's prefix.
func dominant(s string) bool {
	// Boyer and Moore's majority vote: the one candidate, then its count.
	var cand byte
	n := 0
	for i := 0; i < len(s); i++ {
		switch {
		case n == 0:
			cand, n = s[i], 1
		case s[i] == cand:
			n++
		default:
			n--
		}
	}
	if n == 0 {
		return false
	}
	return strings.Count(s, string(cand))*2 > len(s)
}

// placeholderByLead lists placeholderWords by their first byte.
var placeholderByLead = func() (t [256][]string) {
	for _, w := range placeholderWords {
		t[w[0]] = append(t[w[0]], w)
	}
	return t
}()

// placeholderLead marks the first bytes of placeholderWords.
var placeholderLead = func() (t [256]bool) {
	for _, w := range placeholderWords {
		t[w[0]] = true
		if isLower(w[0]) {
			t[w[0]-'a'+'A'] = true
		}
	}
	return t
}()

// versionTail reports whether val ends with a version of three numbers,
// after a separator or a 'v' (jjwt-jackson-0.11.2, lib@v1.2.3): an
// artifact, not a secret.
func versionTail(val string) bool {
	e := len(val)
	for part := 0; part < 3; part++ {
		d := e
		for d > 0 && isDigit(val[d-1]) {
			d--
		}
		if d == e || e-d > 6 {
			return false
		}
		e = d
		if part < 2 {
			if e == 0 || val[e-1] != '.' {
				return false
			}
			e--
		}
	}
	if e == 0 {
		return true
	}
	c := val[e-1]
	return c == 'v' || c == 'V' || chars[c]&cAlnum == 0
}

// algorithmParts are the letter runs of the names of cryptographic
// algorithms and schemes (RSA-SHA256, HS256, ecdsa-sha2-nistp256,
// AES-256-GCM, SHA256withRSA, ed25519), which follow a signature or key
// in messages and configuration but are no secrets.
var algorithmParts = [...]string{
	"rsa", "sha", "md", "hmac", "hs", "rs", "es", "ps", "ed", "eddsa", "ecdsa", "ecdh", "ecdhe", "dsa",
	"dh", "dhe", "aes", "gcm", "cbc", "ctr", "ccm", "ofb", "cfb", "ecb", "xts", "siv", "kw", "pss",
	"pkcs", "oaep", "mgf", "des", "tdes", "chacha", "xchacha", "poly", "salsa", "x", "p", "nistp",
	"secp", "prime", "v", "r", "k", "sm", "blake", "b", "s", "ripemd", "crc", "argon", "id", "i",
	"bcrypt", "scrypt", "pbkdf", "hkdf", "aws", "sigv", "ssh", "curve", "keccak", "with", "and",
	"gmac", "cmac", "kem", "ml", "mlkem", "mldsa", "slh", "shake", "ecies", "cert", "nist", "sect",
	"brainpool", "t", "ietf", "ssl", "tls", "rc", "bf", "camellia", "seed", "gost", "encryption",
	"signature", "digest", "hash", "fips", "ntlm", "lm", "krb", "hmacsha", "none",
}

// algorithmCore are the parts one of which an algorithm name has.
var algorithmCore = [...]string{
	"rsa", "sha", "md", "hmac", "hs", "rs", "es", "ps", "ed", "eddsa", "ecdsa", "ecdh", "dsa", "aes",
	"chacha", "blake", "ripemd", "keccak", "sm", "mlkem", "mldsa", "hmacsha",
}

// algorithmName reports whether val is the name of a cryptographic
// algorithm: words of algorithmParts, digits, and the separators '-',
// '_', '/', '+' and '.', with at least one core part and one digit or
// separator.
func algorithmName(val string) bool {
	if len(val) > 40 {
		return false
	}
	core, other := false, false
	for k := 0; k < len(val); {
		c := val[k]
		switch {
		case isLetter(c):
			e := k
			for e < len(val) && isLetter(val[e]) {
				e++
			}
			w := val[k:e]
			if !algorithmPart(w, algorithmPartSet) {
				// SHA256withRSA, ECDSAwithSHA1: parts glued to "with".
				i := indexFold(w, "with")
				if i < 0 || i > 0 && !algorithmPart(w[:i], algorithmPartSet) || !algorithmPart(w[i+4:], algorithmPartSet) {
					return false
				}
			}
			core = core || algorithmPart(w, algorithmCoreSet)
			k = e
		case isDigit(c), c == '-', c == '_', c == '/', c == '+', c == '.':
			other = true
			k++
		default:
			return false
		}
	}
	return core && other
}

// indexFold returns the index of the first instance of sub, lower case,
// in s in any case, or -1. It does not allocate.
func indexFold(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if hasPrefixFold(s[i:], sub) {
			return i
		}
	}
	return -1
}

// algorithmPartSet and algorithmCoreSet hold algorithmParts and
// algorithmCore, for algorithmPart.
var algorithmPartSet, algorithmCoreSet = wordSet(algorithmParts[:]), wordSet(algorithmCore[:])

func wordSet(words []string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// algorithmPart reports whether set holds w, a run of letters, in any
// case. It does not allocate.
func algorithmPart(w string, set map[string]bool) bool {
	if len(w) > 16 {
		return false
	}
	var buf [16]byte
	for i := 0; i < len(w); i++ {
		buf[i] = w[i] | 0x20
	}
	return set[string(buf[:len(w)])]
}

// containsFold reports whether list holds w in any case.
func containsFold(list []string, w string) bool {
	for _, x := range list {
		if strings.EqualFold(x, w) {
			return true
		}
	}
	return false
}

// stopWordSet holds stopWords, for isStopWord.
var stopWordSet = func() map[string]struct{} {
	m := make(map[string]struct{}, len(stopWords))
	for _, w := range stopWords {
		m[w] = struct{}{}
	}
	return m
}()

// maxStopWord is the length of the longest stop word.
const maxStopWord = 16

// isStopWord reports whether val is a stop word in any case.
func isStopWord(val string) bool {
	if len(val) > maxStopWord {
		return false
	}
	var buf [maxStopWord]byte
	for i := 0; i < len(val); i++ {
		c := val[i]
		if isUpper(c) {
			c += 'a' - 'A'
		}
		buf[i] = c
	}
	_, ok := stopWordSet[string(buf[:len(val)])]
	return ok
}

// codeObjects begin dotted references in code and configuration
// (self.token, req.body.password, process.env.API_KEY).
var codeObjects = [...]string{
	"self", "this", "cls", "req", "request", "res", "response", "ctx", "c", "cfg",
	"conf", "config", "settings", "opts", "options", "params", "args", "env",
	"process", "os", "app", "s", "o", "r", "p", "t", "m", "v", "secrets", "vars",
	"data", "body", "form", "props", "state", "user", "auth", "credentials", "creds",
}

// misnested reports whether the brackets in s do not nest: one closes
// with none open, or another kind than the last one opened. An
// expression's brackets nest; a value whose brackets do not is no code but
// text, such as a password written without quotes (m{{h}o)p${e]…).
func misnested(s string) bool {
	var open [8]byte
	n := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '(', '[', '{':
			if n == len(open) {
				return false // too deep to tell
			}
			open[n] = c
			n++
		case ')', ']', '}':
			if n == 0 || open[n-1] != opening(c) {
				return true
			}
			n--
		}
	}
	return false
}

// opening returns the opening bracket of the closing one c.
func opening(c byte) byte {
	switch c {
	case ')':
		return '('
	case ']':
		return '['
	}
	return '{'
}

// castAt reports whether an unquoted value at in[vs] begins with a cast of
// a C-family language, whose operand follows: "(char *) (p + 2)",
// "(String) obj". The type is a name without digits, maybe with '*' or
// '&' after it; "(hunter2) and" is no cast.
func castAt(in string, vs int) bool {
	if vs+1 >= len(in) || in[vs] != '(' || !isLetter(in[vs+1]) {
		return false
	}
	e := vs + 1
	for e < len(in) && e-vs <= maxKey && (isLetter(in[e]) || in[e] == '_' || in[e] == ' ' || in[e] == '*' || in[e] == '&') {
		e++
	}
	if e >= len(in) || in[e] != ')' {
		return false
	}
	e = skipBlanks(in, e+1, false)
	return e < len(in) && (chars[in[e]]&cWord != 0 || in[e] == '(' || in[e] == '&' || in[e] == '*')
}

// codeValue reports whether an unquoted value reads as code rather than as
// a secret: a variable ($DB_PASSWORD), a call (os.getenv("X")), a dotted
// reference (self.token, config.api_key), a file path
// (/etc/ssl/private/server.key), or the name of a secret instead of one
// (token = token, password=DB_PASSWORD), each maybe in parentheses.
func codeValue(val string) bool {
	for len(val) > 1 && val[0] == '(' {
		val = val[1:] // a parenthesized expression: (os.getenv("X") or "…")
	}
	if len(val) <= maxKey && !hasDigit(val) && skip(val, 0, cKey) == len(val) && strings.IndexByte(val, '-') >= 0 && namesSecret(val) {
		return true // secretKey: api-key names a key
	}
	switch c := val[0]; {
	case c == '$' && len(val) > 1 && (isLetter(val[1]) || val[1] == '_'):
		return true
	case c == '/' || c == '~' || c == '.' && (strings.HasPrefix(val, "./") || strings.HasPrefix(val, "../")):
		return isPath(val)
	}
	// An identifier or a dotted run of them, maybe called.
	end, dots := 0, 0
	for end < len(val) {
		w := end
		for end < len(val) && (chars[val[end]]&cWord != 0 || val[end] == '$') {
			end++
		}
		if end == w || isDigit(val[w]) {
			return false
		}
		if end == len(val) || val[end] != '.' {
			break
		}
		dots++
		end++
	}
	switch {
	case end < len(val) && (val[end] == '(' || val[end] == '['):
		return true // a call or a subscript: os.getenv("X"), os.environ["X"]
	case end < len(val):
		return false
	case dots > 0:
		// A generated part is a token's, not a name's: s.ZC9Ecf4M5g9o34Q6
		// (a Vault token), not self.token.
		for rest := val; rest != ""; {
			part := rest
			if d := strings.IndexByte(rest, '.'); d >= 0 {
				part, rest = rest[:d], rest[d+1:]
			} else {
				rest = ""
			}
			if generated(part) {
				return false
			}
		}
		first := val[:strings.IndexByte(val, '.')]
		for _, o := range codeObjects {
			if strings.EqualFold(first, o) {
				return true
			}
		}
		last := val[strings.LastIndexByte(val, '.')+1:]
		k, _ := classifyKey(last, false)
		return k != kvNone && !hasDigit(last)
	}
	return namesSecret(val)
}

// namesSecret reports whether the identifier val names a secret rather
// than being one: a key term itself, or a key written like a name
// (DB_PASSWORD, apiKey, client-secret), without digits.
func namesSecret(val string) bool {
	if hasDigit(val) {
		return false
	}
	k, _ := classifyKey(val, false)
	if k == kvNone {
		return false
	}
	var buf [maxKey]byte
	norm, words := normalizeKey(val, &buf)
	if words&^1 != 0 || !hasLower(val) {
		return true
	}
	for _, t := range keyTerms {
		if string(norm) == t.term {
			return true
		}
	}
	return false
}

// isPath reports whether val is a file path: '/'-separated names of path
// bytes, at least two of them or one with a key-file extension.
func isPath(val string) bool {
	slashes := 0
	for i := 0; i < len(val); i++ {
		c := val[i]
		if c == '/' {
			slashes++
		} else if chars[c]&cKey == 0 && c != '~' {
			return false
		}
	}
	if slashes >= 2 {
		return true
	}
	for _, ext := range [...]string{".pem", ".key", ".json", ".crt", ".p12", ".pfx", ".txt", ".env", ".yaml", ".yml", ".der", ".gpg", ".asc", ".jks"} {
		if strings.HasSuffix(val, ext) {
			return true
		}
	}
	return false
}

// isNumber reports whether val is a decimal number.
func isNumber(val string) bool {
	return val != "" && skip(val, 0, cDigit) == len(val)
}

// matchList matches the elements of a list after a secret-ish key at
// in[v]: a JSON array of strings (["a", "b"], across lines too), Go's %v
// of a slice ([a b], as in %v of an http.Header or url.Values), and Go's
// %#v of a []string ([]string{"a", "b"}). The hit covers every element,
// from the first one's start to the last one's end, so the list keeps its
// brackets and the quotes outside. A list of objects or lists is left to
// the keys inside it.
func (s *Scrubber) matchList(in string, esc escMarks, v int, kind kvKind, f family) (hit, bool) {
	p, closer := v+1, byte(']')
	if strings.HasPrefix(in[v:], "[]string{") {
		p, closer = v+len("[]string{"), '}'
	}
	p = skipBlanks(in, p, true)
	if p >= len(in) {
		return hit{}, false
	}
	if kind == kvAuthorization {
		if _, closing := openValue(in, p); closing != "" {
			return s.matchAuthorization(in, esc, p, 0)
		}
		// A placeholder's ']' closes no list: it stands for what a first
		// pass found there, where that pass saw no closer (idempotence).
		if q := strings.IndexByte(in[p:], closer); q >= 0 && strings.Contains(in[p:p+q], placeholderPrefix) {
			return hit{}, false
		}
		return s.matchAuthorization(in, esc, p, closer)
	}
	if _, closing := openValue(in, p); closing != "" {
		start, end := -1, -1
		for q, k := p, 0; q < len(in) && k < maxListItems; k++ {
			vs, closing := openValue(in, q)
			if closing == "" {
				break
			}
			if k == 0 && !plausibleStart(in[vs:], true) {
				return hit{}, false
			}
			ve := quotedEnd(in, esc, vs, closing, esc.at(q))
			if !strings.HasPrefix(in[ve:], closing) {
				break
			}
			if start < 0 {
				start = vs
			}
			end = ve
			q = skipBlanks(in, ve+len(closing), true)
			if q >= len(in) || in[q] != ',' {
				break
			}
			q = skipBlanks(in, q+1, true)
		}
		if start < 0 || !plausibleValue(in[start:end]) || kind == kvSSN && !isSSNValue(in[start:end]) {
			return hit{}, false
		}
		return s.refine(in, start, end, f)
	}
	// Go's %v: the elements are not quoted and the list ends at the first
	// closer on the line.
	if !plausibleStart(in[p:], false) {
		return hit{}, false
	}
	e := p
	for e < len(in) && e-p < maxList && valueStops[in[e]]&stopList == 0 {
		e++
	}
	if e >= len(in) || in[e] != closer {
		return hit{}, false
	}
	for e > p && in[e-1] == ' ' {
		e--
	}
	val := in[p:e]
	if !plausibleValue(val) || kind == kvSSN && !isSSNValue(val) || f != famCookie && codeValue(val) {
		return hit{}, false
	}
	return s.refine(in, p, e, f)
}

// skipBlanks returns the first byte at or after i that is not a space or
// a tab, nor with lines a line break.
func skipBlanks(in string, i int, lines bool) int {
	for i < len(in) && (in[i] == ' ' || in[i] == '\t' || lines && (in[i] == '\n' || in[i] == '\r')) {
		i++
	}
	return i
}

// authSchemes are the Authorization schemes whose name is kept in front of
// the redacted credentials.
var authSchemes = [...]string{
	"bearer", "basic", "token", "digest", "negotiate", "ntlm", "dpop", "apikey",
	"aws4-hmac-sha256", "ssws", "flyv1", "bot", "sharedkey", "hmac", "oauth",
}

// matchAuthorization matches the credentials of an Authorization header
// value at in[v]. A known scheme ("Bearer", "Basic", ...) stays; the
// credentials after it go: for Bearer and Basic the token68 after the
// scheme and what else the value holds ("Basic admin:hunter2", a quoted
// value to its closing quote), for others the rest of the value. A value
// without a known scheme is a credential itself, up to the first blank. A
// list ([Bearer …], []string{"Bearer …"}) is matched by its first element;
// in Go's %v of one, which does not quote its elements, closer is the ']'
// that ends the list and everything up to it goes.
func (s *Scrubber) matchAuthorization(in string, esc escMarks, v int, closer byte) (hit, bool) {
	if in[v] == '[' && !strings.HasPrefix(in[v:], placeholderPrefix) {
		return s.matchList(in, esc, v, kvAuthorization, famSecret)
	}
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
		if !plausibleStart(in[c:], true) || in[c] == '{' && !bracedWord(in[c:]) || in[c] == '$' && shellVariable(in[c:]) {
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
			e = valueEnd(in, esc, c, closing, stopLine, false)
		}
		switch {
		case closer != 0:
			e = listEnd(in, c)
		case closing != "":
			e = max(e, quotedEnd(in, esc, c, closing, esc.at(v)))
		case f != famSecret && e < len(in) && valueStops[in[e]]&stopValue == 0:
			// Credentials that are no token68 go to the end of the value:
			// Basic admin:hunter2, Bearer jane@example.com.
			e = valueEnd(in, esc, e, "", stopValue, false)
		}
		if !plausibleValue(firstLine(in[c:e])) {
			return hit{}, false
		}
		if f == famBearerToken && !strings.HasPrefix(in[c:], "eyJ") {
			if g, ok := tokenFamily(in[:e], c); ok && g != famJWT && s.on[g] {
				f = g // a vendor token, such as a Google OAuth access token
			}
		}
		if f == famSecret {
			return s.refine(in, c, e, f)
		}
		return hit{c, e, f}, s.on[f]
	}
	if w < len(in) && in[w] == ' ' && schemeShaped(in[a:w]) && !isStopWord(in[a:w]) {
		// A scheme of no known name (Api-Token, Key, SplunkToken; RFC
		// 7235 lets any token name one) stays, and the credentials after
		// it go, when they look random: a phrase (Authorization: invalid
		// token) is no scheme.
		c := w
		for c < len(in) && in[c] == ' ' {
			c++
		}
		if strings.HasPrefix(in[c:], placeholderPrefix) {
			return hit{}, false // the credentials, found by a first pass
		}
		if e := tok68End(in, c); e > c && (e == len(in) || valueStops[in[e]]&stopValue != 0) &&
			looksLike(firstLine(in[c:e]), randomValue, false) && plausibleValue(firstLine(in[c:e])) {
			return s.refine(in, c, e, famSecret)
		}
	}
	if !plausibleStart(in[a:], closing != "") {
		return hit{}, false
	}
	e := valueEnd(in, esc, a, "", stopValue, false)
	switch {
	case closer != 0:
		e = listEnd(in, a)
	case closing != "":
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

// listEnd returns the end of the elements of Go's %v of a list that begin
// at in[p]: the first bracket, brace or quote on the same line (the end
// of the list), less the blanks before it.
func listEnd(in string, p int) int {
	e := p
	for e < len(in) && e-p < maxList && valueStops[in[e]]&stopList == 0 {
		e++
	}
	for e > p && in[e-1] == ' ' {
		e--
	}
	return e
}

// schemeShaped reports whether w, a word before a blank at the start of an
// Authorization value, is shaped as a scheme's name: 2 to 16 letters and
// '-', beginning and ending with a letter. A credential has digits, or is
// longer.
func schemeShaped(w string) bool {
	if len(w) < 2 || len(w) > 16 || !isLetter(w[0]) || !isLetter(w[len(w)-1]) {
		return false
	}
	for i := 0; i < len(w); i++ {
		if !isLetter(w[i]) && w[i] != '-' {
			return false
		}
	}
	return true
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

// userinfoStop marks the bytes that end the user:password part of a URL
// whatever else: blanks and quotes, angle brackets, backticks, and '['
// (an IPv6 host, or a placeholder).
var userinfoStop = func() (t [256]bool) {
	for _, c := range []byte(" \t\r\n\"'<>`[") {
		t[c] = true
	}
	for c := 0; c < ' '; c++ {
		t[c] = true
	}
	return t
}()

// matchURL matches the credentials in scheme://user:password@host at the
// ':' in[i] of "://". The scheme is read backwards, never before lo.
//
// The user name ends at the first ':'. The password may hold any byte but
// a blank or a quote, reserved ones ('@', '/', '?', '#', ':') included, as
// people write them: it ends at the last '@' that a host name follows. A
// "password" of digits before a '/', '?' or '#' is a port.
func (s *Scrubber) matchURL(in string, esc escMarks, i, lo int) (hit, bool) {
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
	lvl := esc.at(i)
	stops := func(e int) bool { return userinfoStop[in[e]] && (lvl || !esc.at(e)) }
	a := i + len("://")
	colon := -1
	for e := a; e < len(in) && e-a < maxUserinfo && !stops(e); e++ {
		if c := in[e]; c == ':' {
			colon = e
			break
		} else if c == '/' || c == '?' || c == '#' {
			break
		}
	}
	if colon < 0 {
		return hit{}, false
	}
	// The password ends at the last '@' that a host follows: a password
	// may hold "@host/" too, and redacting a URL's host and path by
	// mistake leaks less than leaving the rest of a password.
	at, reserved := -1, -1
	for e := colon + 1; e < len(in) && e-a < maxUserinfo && !stops(e); e++ {
		switch in[e] {
		case '/', '?', '#':
			if reserved < 0 {
				reserved = e
			}
		case '@':
			if hostAfter(in, e+1) {
				at = e
			}
		case ':':
			if strings.HasPrefix(in[e:], "://") {
				e = len(in) // another URL begins
			}
		}
	}
	if at < 0 || at == colon+1 || reserved >= 0 && isNumber(in[colon+1:reserved]) {
		return hit{}, false
	}
	// A finding inside the user name comes first, so that a second pass,
	// which sees the password already redacted, finds the same.
	var seen uint32 // the caller's scan notes these bytes itself
	if h, ok := s.next(in, esc, a, colon, &seen, nil); ok {
		return h, true
	}
	if seen&escapeFound != 0 {
		return hit{}, false // the caller's scan stops at the escape and goes on in the view
	}
	if pw := in[colon+1 : at]; !plausibleStart(pw, false) || len(pw) >= 3 && placeholderValue(pw) {
		// A masked password (user:*****@), a variable ($password,
		// ${DB_PASS}) or a placeholder: no secret is written here.
		return hit{}, false
	}
	for _, db := range dbSchemes {
		if strings.EqualFold(scheme, db) {
			return hit{a, at, famDBCredentials}, s.on[famDBCredentials]
		}
	}
	if strings.EqualFold(in[colon+1:at], "x-oauth-basic") {
		// GitHub's token as the user name, and this word as the
		// password (https://<token>:x-oauth-basic@github.com/…): the
		// user name is the secret, and goes with the word.
		return hit{a, at, famURLPassword}, s.on[famURLPassword]
	}
	return s.refine(in, colon+1, at, famURLPassword)
}

// hostAfter reports whether a URL's host begins at in[h]: a host name, an
// IPv4 or bracketed IPv6 address, or a placeholder, followed by the end of
// the host (a port, a path, a query, a fragment, the end of the text or of
// the URL), not by another '@'.
func hostAfter(in string, h int) bool {
	e := h
	if e < len(in) && in[e] == '[' {
		// An IPv6 address, or one that a first pass redacted (the only
		// placeholder a host can be: what else follows '@' was no host
		// before it was redacted either).
		if n := placeholderLen(in[e:]); n > 0 {
			if !strings.HasPrefix(in[e:], "[REDACTED:ip]") && !strings.HasPrefix(in[e:], "[REDACTED:ip:") {
				return false
			}
			e += n
		} else {
			k := e + 1
			for k < len(in) && k-e <= 48 && (chars[in[k]]&cHex != 0 || in[k] == ':' || in[k] == '.' || in[k] == '%') {
				k++
			}
			if k == e+1 || k >= len(in) || in[k] != ']' {
				return false
			}
			e = k + 1
		}
	} else {
		e = skipMax(in, e, cDomain|cUnderscore, maxHost+1)
		if e == h || e-h > maxHost {
			return false
		}
	}
	return e == len(in) || strings.IndexByte(":/?#\"' \t\r\n,;)>]}`\\", in[e]) >= 0
}

// maxElement bounds the text of an XML element read backwards from its
// end tag.
const maxElement = 1024

// matchXML matches the text of an XML element whose tag name is
// secret-ish, <password>hunter2</password>, at the '<' in[c] of its end
// tag. The text is read backwards to the start tag, never before lo.
func (s *Scrubber) matchXML(in string, c, lo int) (hit, bool) {
	n := c + 2
	e := n
	for e < len(in) && e-n < maxKey && (chars[in[e]]&cKey != 0 || in[e] == ':') {
		e++
	}
	if e == n || e >= len(in) || in[e] != '>' {
		return hit{}, false
	}
	name := in[n:e]
	local := name[strings.LastIndexByte(name, ':')+1:]
	kind, _ := classifyKey(local, false)
	if kind == kvNone || kind == kvAuthorization || kind == kvCookie {
		return hit{}, false
	}
	// The text: no markup back to the '>' of the start tag.
	k := c
	for k > lo && c-k < maxElement && in[k-1] != '<' && in[k-1] != '>' {
		k--
	}
	if k == lo || in[k-1] != '>' {
		return hit{}, false
	}
	t := strings.LastIndexByte(in[max(lo, k-1-maxKey-256):k-1], '<')
	if t < 0 {
		return hit{}, false
	}
	t += max(lo, k-1-maxKey-256)
	// A start tag with a placeholder inside held a finding that a first
	// pass redacted, and that ended its backward look there.
	if rest := in[t+1 : k-1]; !strings.HasPrefix(rest, name) || len(rest) > len(name) && rest[len(name)] != ' ' ||
		strings.Contains(rest, placeholderPrefix) {
		return hit{}, false
	}
	vs, ve := k, c
	for vs < ve && isSpace(in[vs]) {
		vs++
	}
	for ve > vs && isSpace(in[ve-1]) {
		ve--
	}
	// Text with a placeholder inside held a finding that a first pass
	// redacted, and that ended its backward look there.
	if !plausibleStart(in[vs:ve], true) || !plausibleValue(in[vs:ve]) || strings.Contains(in[vs:ve], placeholderPrefix) {
		return hit{}, false
	}
	f := famSecret
	switch kind {
	case kvPassword:
		f = famPassword
	case kvSSN:
		if !isSSNValue(in[vs:ve]) {
			return hit{}, false
		}
		f = famSSN
	}
	return s.refine(in, vs, ve, f)
}
