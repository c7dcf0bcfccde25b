package scrub

import "strings"

// Byte classes. Every matcher is a loop over one or more of these sets, so a
// single table lookup answers "may this byte continue the token?".
const (
	cWord       uint32 = 1 << iota // [A-Za-z0-9_]: the bytes of a word
	cStart                         // a word-start matcher may begin with this byte
	cTrigger                       // punctuation at which a matcher may begin
	cDigit                         // [0-9]
	cHex                           // [0-9A-Fa-f]
	cAlnum                         // [A-Za-z0-9]
	cUpperDigit                    // [A-Z0-9]
	cB64URL                        // [A-Za-z0-9_-]
	cB64                           // [A-Za-z0-9+/]
	cTok68                         // [A-Za-z0-9._~+/=-]: RFC 7235 token68 with '=' anywhere
	cLocal                         // [A-Za-z0-9._%+-]: e-mail local part
	cDomain                        // [A-Za-z0-9.-]: host names
	cKey                           // [A-Za-z0-9_.-]: keys of key=value pairs
	cUser                          // [A-Za-z0-9_.-] and non-ASCII: user names in paths
	cScheme                        // [A-Za-z0-9+.-]: URL schemes
	cBoring                        // cannot begin or reveal a finding; see boring
	cDotted                        // '.'
	cEquals                        // '='
	cDash                          // '-'
	cUnderscore                    // '_'
	cComma                         // ','
	cTilde                         // '~'
	cLowerDigit                    // [a-z0-9]
	cProseOpen                     // blanks and quotes: what a value in prose follows
	cSpace                         // ' '
	cEscape                        // '\\', '%', '&' and non-ASCII bytes: what an escape or invisible character may begin with
)

// prefixLetters are the lower-case letters that begin the prefix of a
// token (ghp_, sk-, xoxb-, ya29., …) or an Authorization scheme before
// credentials (bearer, basic, bot). With the digits, the upper-case and
// the hexadecimal letters, they start the words worth a closer look;
// worthTrying lets other lower-case words through only in the shape of a
// lower-case IBAN or of a token without a prefix.
const prefixLetters = "bdeghklnprstwxy"

// boring are the bytes the scanner skips without a second look: lower-case
// letters, blanks and common punctuation. ('%', '&' and non-ASCII bytes,
// which may begin an escape or an invisible character, are skipped too,
// after the scanner notes that it saw one; see cEscape.) Every
// finding either begins with a trigger or contains a byte that is not
// boring (a digit, an upper-case letter, '_', '-' or ':') in its first
// word, from which the scanner goes back to the word's start. The few
// all-lower-case prefixes are reached that way too: "sk-", "glpat-" and
// the like by their '-', "bearer" by the credentials after it, and
// "hooks.slack.com" and "discord.com" by the '/' after them.
const boring = "abcdefghijklmnopqrstuvwxyz \t\n\r,;.)!?'\"*#<>{}|~`^]$"

// triggers are the punctuation bytes at which a matcher begins:
// '@' e-mail, ':' URL, IPv6 or key: value, '=' key=value, '+' phone,
// '-' PEM block, '/' and '\\' home directories, '[' placeholders, '('
// the arguments of a call (setProperty("db.password", "…"),
// setPassword("…")).
const triggers = "@:=+-/\\[("

var chars = buildChars()

func buildChars() (t [256]uint32) {
	for i := range t {
		c := byte(i)
		lower := 'a' <= c && c <= 'z'
		upper := 'A' <= c && c <= 'Z'
		digit := '0' <= c && c <= '9'
		alnum := lower || upper || digit
		var k uint32
		if alnum || c == '_' {
			k |= cWord
		}
		if digit || upper || 'a' <= c && c <= 'f' || strings.IndexByte(prefixLetters, c) >= 0 {
			k |= cStart
		}
		switch c {
		case '.':
			k |= cDotted
		case '=':
			k |= cEquals
		case '-':
			k |= cDash
		case '_':
			k |= cUnderscore
		case ',':
			k |= cComma
		case '~':
			k |= cTilde
		case ' ':
			k |= cSpace
		case '\\', '%', '&':
			k |= cEscape
		}
		if c >= 0x80 {
			k |= cEscape
		}
		if strings.IndexByte(triggers, c) >= 0 {
			k |= cTrigger
		}
		if digit {
			k |= cDigit
		}
		if digit || ('a' <= c && c <= 'f') || ('A' <= c && c <= 'F') {
			k |= cHex
		}
		if alnum {
			k |= cAlnum
		}
		if upper || digit {
			k |= cUpperDigit
		}
		if lower || digit {
			k |= cLowerDigit
		}
		if strings.IndexByte(" \t\"'`", c) >= 0 {
			k |= cProseOpen
		}
		if alnum || c == '_' || c == '-' {
			k |= cB64URL
		}
		if alnum || c == '+' || c == '/' {
			k |= cB64
		}
		if alnum || strings.IndexByte("._~+/=-", c) >= 0 {
			k |= cTok68
		}
		if alnum || strings.IndexByte("._%+-", c) >= 0 {
			k |= cLocal
		}
		if alnum || c == '.' || c == '-' {
			k |= cDomain
		}
		if alnum || c == '_' || c == '.' || c == '-' {
			k |= cKey
			k |= cUser
		}
		if c >= 0x80 {
			k |= cUser
		}
		if strings.IndexByte(boring, c) >= 0 {
			k |= cBoring
		}
		if alnum || c == '+' || c == '.' || c == '-' {
			k |= cScheme
		}
		t[i] = k
	}
	return t
}

// skip returns the index of the first byte at or after i that is not in set.
func skip(in string, i int, set uint32) int {
	// (As unsigned, the loop's test also proves i not negative, and the
	// compiler checks no read.)
	for uint(i) < uint(len(in)) && chars[in[i]]&set != 0 {
		i++
	}
	return i
}

// skipBack returns the start of the run of bytes of set that ends at
// in[e], reading back no further than lo nor more than max bytes.
func skipBack(in string, e, lo int, set uint32, max int) int {
	b := e
	for b > lo && e-b < max && chars[in[b-1]]&set != 0 {
		b--
	}
	return b
}

// skipMax is skip that looks at no more than max bytes: it returns i+max
// if the run is longer. Matchers use it wherever a long run would be
// rejected anyway, so that every byte is looked at a bounded number of
// times and scrubbing stays linear in the input.
func skipMax(in string, i int, set uint32, max int) int {
	end := min(len(in), i+max)
	for i < end && chars[in[i]]&set != 0 {
		i++
	}
	return i
}

// is reports whether in[i] exists and is in set.
func is(in string, i int, set uint32) bool {
	return i < len(in) && chars[in[i]]&set != 0
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
func isUpper(c byte) bool { return 'A' <= c && c <= 'Z' }
func isLower(c byte) bool { return 'a' <= c && c <= 'z' }
func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func isLetter(c byte) bool { return isUpper(c) || isLower(c) }

// hasPrefixFold reports whether s begins with prefix, ignoring ASCII case.
// prefix must be lower case.
func hasPrefixFold(s, prefix string) bool {
	if len(s) < len(prefix) {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		c := s[i]
		if isUpper(c) {
			c += 'a' - 'A'
		}
		if c != prefix[i] {
			return false
		}
	}
	return true
}

// indexLineBreak returns the index of the first '\n' or '\r' in s, or -1:
// strings.IndexAny with two vectorized searches instead of a set tested a
// byte at a time.
func indexLineBreak(s string) int {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		if j := strings.IndexByte(s[:i], '\r'); j >= 0 {
			return j
		}
		return i
	}
	return strings.IndexByte(s, '\r')
}

// lastIndex is strings.LastIndex for a needle that is rare in s (a marker
// line): forward searches, which are vectorized, find each occurrence,
// where strings.LastIndex reads s back byte by byte.
func lastIndex(s, sub string) int {
	last := -1
	for i := 0; i <= len(s); {
		j := strings.Index(s[i:], sub)
		if j < 0 {
			break
		}
		last = i + j
		i = last + 1
	}
	return last
}

// The kinds of character letterKinds reports, as bits.
const (
	kindDigit uint8 = 1 << iota
	kindUpper
	kindLower
	kindLetters = kindUpper | kindLower
)

// kindOf is each byte's kind: kindDigit, kindUpper, kindLower or none.
var kindOf = func() (t [256]uint8) {
	for c := '0'; c <= '9'; c++ {
		t[c] = kindDigit
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = kindUpper
		t[c+'a'-'A'] = kindLower
	}
	return t
}()

// letterKinds returns the kinds of character s has (kindDigit, kindUpper,
// kindLower), one table read a byte: the values it is asked about are
// long, and three range tests a byte cost more.
func letterKinds(s string) (k uint8) {
	for i := 0; i < len(s); i++ {
		k |= kindOf[s[i]]
	}
	return k
}

// mixed reports whether s has a digit, an upper-case and a lower-case
// letter, as randomly generated keys almost always do and words do not.
func mixed(s string) bool {
	return letterKinds(s) == kindDigit|kindLetters
}

func hasUpperAndLower(s string) bool {
	return letterKinds(s)&kindLetters == kindLetters
}

func hasLower(s string) bool {
	for i := 0; i < len(s); i++ {
		if isLower(s[i]) {
			return true
		}
	}
	return false
}

func hasDigit(s string) bool {
	for i := 0; i < len(s); i++ {
		if isDigit(s[i]) {
			return true
		}
	}
	return false
}
