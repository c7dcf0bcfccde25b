package scrub

import "strings"

// This file holds the matchers for a secret written after a secret-ish
// word without a separator: in prose ("the token is 8f3k2j…", "login with
// password Tr0ub4dor3", "your API key is …") and after a command-line
// flag ("--api-key 8f3k2j…", "curl -u ops:hunter2").
//
// Prose is where ordinary text lives, so a value there must look
// generated: 8 bytes or more with a digit and a letter, not a date. A
// flag is a key, so a value after one needs only what a value after a key
// needs.

const maxProseValue = 256 // longest value read after a word

// pair packs two ASCII bytes, lower-cased, into an index of pairFlags.
func pair(a, b byte) uint16 { return uint16(a&0x7f|0x20)<<7 | uint16(b&0x7f|0x20) }

// afterProseKey is proseKey's first look, from the two bytes before the
// blanks that end at in[b]: they must end a secret-ish word or a link
// word. It rules out the word before almost every value in text without
// reading it.
func afterProseKey(in string, b, lo int) bool {
	j := blanksBefore(in, b, lo)
	if j == b || j-2 < lo {
		return false
	}
	if pairFlags[pair(in[j-2], in[j-1])]&(pairProse|pairLink) != 0 {
		return true
	}
	// A dash between blanks (see proseGap), and the word before it.
	if in[j-1] != '-' {
		return false
	}
	if j = dashGap(in, j, lo); j-2 < lo {
		return false
	}
	return pairFlags[pair(in[j-2], in[j-1])]&(pairProse|pairLink) != 0
}

// proseByte marks the bytes a value in prose may hold: printable ASCII
// but blanks, quotes and brackets.
var proseByte = func() (t [256]bool) {
	for c := '!'; c <= '~'; c++ {
		t[c] = !strings.ContainsRune("\"'`()[]{}<>,;", c)
	}
	return t
}()

// matchAfterWord matches a value in prose whose first word starts at
// in[ws], right after a blank or a quote, and that follows a secret-ish
// word, maybe after a link word or two ("token is"), separated from it by
// blanks. The word before is looked at first: it rules out almost every
// value for the price of a few bytes.
func (s *Scrubber) matchAfterWord(in string, ws, lo int) (hit, bool) {
	var quote byte
	b := ws // where the blanks before the value end
	if c := in[ws-1]; c == '"' || c == '\'' || c == '`' {
		quote, b = c, ws-1
	}
	f, ok := proseKey(in, b, lo)
	if !ok {
		return hit{}, false
	}
	ve, digit, letter := ws, false, false
	for ve < len(in) && ve-ws < maxProseValue && proseByte[in[ve]] {
		c := in[ve]
		digit = digit || isDigit(c)
		letter = letter || isLetter(c)
		ve++
	}
	if ve < len(in) && in[ve] == '[' && placeholderLen(in[ve:]) > 0 {
		// The run goes on into a finding a first pass redacted: what it
		// read then had more (and was rejected, or held that finding).
		// (Looked at before the run loses the punctuation it ends with:
		// "0A://000:[REDACTED:…]" read "0A://000:0@000" then.)
		return hit{}, false
	}
	if quote != 0 {
		if ve >= len(in) || in[ve] != quote {
			return hit{}, false
		}
	} else {
		for ve > ws && strings.IndexByte(".:!?", in[ve-1]) >= 0 {
			ve--
		}
	}
	val := in[ws:ve]
	if ve-ws >= maxProseValue && quote == 0 {
		// Judged by its first bytes, a long value goes on to its end
		// (a credential of 400 bytes of base64).
		for ve < len(in) && ve-ws < maxValue && proseByte[in[ve]] {
			ve++
		}
		for ve > ws && strings.IndexByte(".:!?", in[ve-1]) >= 0 {
			ve--
		}
	}
	minLen := 8
	if f == famPassword {
		minLen = 6 // machine api.example.com login ops password s3cr3t (.netrc)
	}
	if !digit && len(val) >= minMixed && mixedGenerated(strings.TrimRight(val, ".:!?")) {
		digit = true // random letters of both cases: aGNIVWlPaU
	}
	if len(val) < minLen || !digit || !letter || dateLike(val) || strings.Contains(strings.TrimRight(val, "="), "=") ||
		!plausibleValue(val) {
		return hit{}, false
	}
	return s.refine(in, ws, ve, f)
}

// proseKey reports whether the blanks that end at in[b] follow a
// secret-ish word, maybe after a link word or two, and returns the family
// of a value after it.
func proseKey(in string, b, lo int) (family, bool) {
	j := proseGap(in, b, lo)
	if j == b {
		return 0, false
	}
	for links := 0; ; links++ {
		var quote byte
		if links > 0 && j-lo >= 2 && (in[j-1] == '"' || in[j-1] == '\'') {
			// A quoted word before a link word: Kotlin's "token" to "…".
			quote = in[j-1]
			j--
		}
		k := j
		for k > lo && j-k < maxKey && chars[in[k-1]]&cKey != 0 {
			k--
		}
		if k == j || quote != 0 && (k == lo || in[k-1] != quote) {
			return 0, false
		}
		w := in[k:j]
		if links < 2 && isLinkWord(w) {
			if j = blanksBefore(in, k, lo); j == k {
				return 0, false
			}
			continue
		}
		if len(w) < 2 || pairFlags[pair(w[len(w)-2], w[len(w)-1])]&pairProse == 0 {
			return 0, false
		}
		kind, _ := classifyKey(w, false)
		if kind == kvNone && qualifiedKey(in, k, j, lo) {
			kind = kvSecret
		}
		switch kind {
		case kvPassword:
			return famPassword, true
		case kvSecret, kvAWS:
			return famSecret, true
		}
		return 0, false
	}
}

// proseGap returns the start of what separates a word in prose from the
// value after it, which ends at in[b]: blanks (blanksBefore), or a dash
// between blanks ("token - 8f3k2j…", as log lines write a value after
// its name). It returns b if there is neither.
func proseGap(in string, b, lo int) int {
	j := blanksBefore(in, b, lo)
	if j < b && j-2 > lo && in[j-1] == '-' {
		return dashGap(in, j, lo)
	}
	return j
}

// dashGap returns where the blanks before the dash at in[j-1] begin if a
// blank stands right before it, and j if none does.
func dashGap(in string, j, lo int) int {
	if j-2 >= lo && isBlank(in[j-2]) {
		return blanksBefore(in, j-1, lo)
	}
	return j
}

// blanksBefore returns the start of the run of (at most four) blanks that
// ends at in[i], not before lo.
func blanksBefore(in string, i, lo int) int {
	j, t, m := i, in[:i], max(lo, i-4, 0) // (reads the compiler does not check)
	for j > m && (t[j-1] == ' ' || t[j-1] == '\t') {
		j--
	}
	return j
}

// isLinkWord reports whether w may stand between a secret-ish word and
// its value: is, was, are, be, now, set, to, as, equals, reads, by.
func isLinkWord(w string) bool {
	if len(w) < 2 || len(w) > 6 {
		return false
	}
	var buf [6]byte
	for i := 0; i < len(w); i++ {
		buf[i] = w[i] | 0x20 // ASCII letters to lower case; others never match
	}
	switch string(buf[:len(w)]) {
	case "is", "was", "are", "be", "now", "set", "to", "as", "equals", "reads", "by":
		return true
	}
	return false
}

// dateLike reports whether val begins like a date (2025-06-01…), which
// has digits and letters (T, Z) but is no secret.
func dateLike(val string) bool {
	return len(val) >= 10 && skip(val, 0, cDigit) == 4 && val[4] == '-' && isDigit(val[5]) && isDigit(val[6]) && val[7] == '-'
}

// matchFlag matches the value after a command-line flag whose name is
// secret-ish, at the '-' in[i] that begins it: "--api-key 8f3k…",
// "--password hunter2". A value after '=' is matched as key=value. The
// user name and password after curl's -u or --user lose the password.
func (s *Scrubber) matchFlag(in string, esc escMarks, i, lo int) (hit, bool) {
	if i > 0 && (i == lo || !isSpace(in[i-1])) {
		return hit{}, false
	}
	n := i + 1
	if n < len(in) && in[n] == '-' {
		n++
	}
	e := skipMax(in, n, cKey, maxKey+1)
	if e == n || e-n > maxKey || e >= len(in) || in[e] != ' ' && in[e] != '\t' {
		return hit{}, false
	}
	v := skipBlanks(in, e, false)
	if v >= len(in) || in[v] == '-' {
		return hit{}, false
	}
	name := in[n:e]
	if name == "user" && n == i+2 || name == "u" && n == i+1 {
		return s.matchUserPassword(in, v)
	}
	if n == i+1 {
		return hit{}, false // -p 8080: short flags are too short to tell
	}
	kind, counts := classifyKey(name, false)
	if kind == kvNone || kind == kvAuthorization {
		return hit{}, false
	}
	return s.valueAfterKey(in, esc, v, kind, counts, false, false, false, false, anyValue, false)
}

// matchUserPassword matches the password of user:password at in[v], as
// curl -u takes it, the whole of it quoted or the password alone
// (kevin:'pRf7…'). Without a user name (":pass") the password goes; without
// a password ("sk_test_…:", an API key as the user name, as Stripe's and
// others' APIs take it) a random-looking user name goes.
func (s *Scrubber) matchUserPassword(in string, v int) (hit, bool) {
	vs, closing := openValue(in, v)
	ve := valueEnd(in, nil, vs, closing, stopValue, false)
	c := strings.IndexByte(in[vs:ve], ':')
	if c < 0 {
		return hit{}, false
	}
	ps, pe := vs+c+1, ve
	if closing == "" && pe == ps && ps < len(in) && (in[ps] == '\'' || in[ps] == '"') {
		q := in[ps : ps+1]
		if e := strings.Index(in[ps+1:], q); e > 0 && e <= maxProseValue && indexLineBreak(in[ps+1:ps+1+e]) < 0 {
			ps, pe = ps+1, ps+1+e
		}
	}
	user, pass := in[vs:vs+c], in[ps:pe]
	if pass == "" {
		// An API key as the user name, no password.
		if len(user) >= 10 && generated(user) && plausibleStart(user, true) && plausibleValue(user) {
			return s.refine(in, vs, vs+c, famPassword)
		}
		return hit{}, false
	}
	for k := 0; k < len(user); k++ {
		if chars[user[k]]&cUser == 0 && user[k] != '@' {
			return hit{}, false // not a user name: a placeholder, a URL
		}
	}
	if len(pass) < minValueLen || !plausibleStart(pass, true) || !plausibleValue(pass) || user == pass {
		return hit{}, false // curl -u username:password, test:test
	}
	return hit{ps, pe, famPassword}, s.on[famPassword]
}

// passwordFlagTools take the password glued to a short flag: mysql
// -uroot -pS3cret, mysqldump, mariadb.
var passwordFlagTools = [...]string{"mysql", "mysqldump", "mysqladmin", "mariadb", "mariadb-dump", "mysqlimport", "mysqlsh"}

// matchMySQLPassword matches the password glued to -p at in[i] on a line
// that runs one of passwordFlagTools (mysql -uroot -pS3cret): the bytes
// up to the next blank. The line is read back to its start, at most 256
// bytes, before lo too: the tool's name is a word that no finding is, so
// a second pass, which sees findings before it as placeholders, reads
// the same; the end of the previous finding (lo) counts as the end of a
// word, as its placeholder's ']' does then.
func (s *Scrubber) matchMySQLPassword(in string, i, lo int) (hit, bool) {
	if i == lo || !isBlank(in[i-1]) {
		return hit{}, false
	}
	ls := i
	for ls > 0 && i-ls < 256 && in[ls-1] != '\n' {
		ls--
	}
	found := false
	for _, t := range passwordFlagTools {
		for from := ls; from < i; {
			k := strings.Index(in[from:i], t)
			if k < 0 {
				break
			}
			k += from
			from = k + 1
			if (k == 0 || k == lo || chars[in[k-1]]&cWord == 0) && k+len(t) < i && isBlank(in[k+len(t)]) {
				found = true
				break
			}
		}
		if found {
			break
		}
	}
	if !found {
		return hit{}, false
	}
	vs := i + 2
	ve := vs
	for ve < len(in) && !isSpace(in[ve]) && in[ve] != '"' && in[ve] != '\'' {
		ve++
	}
	if ve-vs < minValueLen || !plausibleStart(in[vs:], true) || !plausibleValue(in[vs:ve]) {
		return hit{}, false
	}
	return hit{vs, ve, famPassword}, s.on[famPassword]
}

// maxPairPart bounds each half of a bare user:password pair.
const maxPairPart = 64

// pairSymbols are the symbols that mark a written password: a value with
// one of them and two classes of letters and digits is one
// (P@ssw0rd$1, h0pk1ns~21s).
const pairSymbols = "!@#$%^&*~"

// The bytes that pairPassword and matchBarePair look for in a pair's
// halves: pairSymbols; the joining bytes a generated password may hold;
// what a password holds none of (pairStops: paths, URLs, lists, code) and
// what a half in quotes holds none of (pathStops).
var (
	pairSymbolSet = byteSet(pairSymbols)
	pairJoins     = byteSet("-_.+=")
	pairStops     = byteSet(":/\\[]{}()<>|,;?")
	pathStops     = byteSet(":/\\")
)

// byteSet returns the set of the bytes of s.
func byteSet(s string) (t [256]bool) {
	for i := 0; i < len(s); i++ {
		t[s[i]] = true
	}
	return t
}

// hasAny reports whether s holds a byte of the set t.
func hasAny(s string, t *[256]bool) bool {
	for i := 0; i < len(s); i++ {
		if t[s[i]] {
			return true
		}
	}
	return false
}

// matchBarePair matches user:password standing alone, with no key or word
// to name it, at the ':' in[i]: the credentials curl -u, a Basic
// Authorization header (decoded) and a .netrc-like line carry
// (developer:yqDVtkqPECriaLRi, 'api:d2LkV78zLx!t', elastic:P@ssw0rd$1,
// kevin:'pRf7vG2h1L8nQkW9'). The user name is a name (letters, digits,
// '.', '_', '-', '@', starting with a letter) or the placeholder of an
// e-mail address a first pass found; the pair stands as a word of its
// own, the only ':' in it. The password must look random (pairPassword):
// host:port, image:tag, key:value, label:name and error: prefixes do
// not. The whole pair goes, the user name too: alone, nothing says which
// half matters. A user name that is a digest's label (sha512:…) is no
// user.
func (s *Scrubber) matchBarePair(in string, i, lo int) (hit, bool) {
	if !s.on[famPassword] || i+1 >= len(in) || in[i+1] <= ' ' || i == lo && lo == 0 || i > 0 && isDigit(in[i-1]) && isDigit(in[i+1]) {
		return hit{}, false // "error: …", 10:20:30, host:8080: no pair
	}
	if h, ok := quotedHalfPair(in, i, lo); ok {
		if h.end == i {
			// The half before ':' may be a secret-ish key
			// ("Authorization0":"…"), whose value matchKeyValue reads:
			// a second pass, which sees that value redacted, must not
			// read the key instead. The key is what matchKeyValue
			// reads: the key bytes that end the half
			// ("A00000!secret":"…" has the key secret).
			ks := h.end
			for ks > h.start && chars[in[ks-1]]&cKey != 0 {
				ks--
			}
			if kind, _, _ := s.keyKind(in, ks, h.end, lo, false); kind != kvNone {
				return hit{}, false
			}
		}
		return h, true
	}
	if !passAhead(in, i+1) {
		return hit{}, false // file.go:42, error: x
	}
	us := i
	for us > lo && i-us <= maxPairPart && (chars[in[us-1]]&cUser != 0 && in[us-1] < 0x80 || in[us-1] == '@' || in[us-1] == '+') {
		us--
	}
	afterFinding := us == i && i == lo && lo > 0 // right after a finding: [REDACTED:email]:pass
	if !afterFinding {
		if h, ok := hexPair(in, us, i); ok {
			return h, true
		}
		if us == i || i-us > maxPairPart || !isLetter(in[us]) || us > 0 && !pairEdge(in[us-1]) || digestLabel(in[us:i]) {
			return hit{}, false
		}
		if kind, _ := classifyKey(in[us:i], false); kind != kvNone {
			// A secret-ish key (password:…, Authorization:…) is no user
			// name: matchKeyValue reads what follows it, and a second
			// pass, which sees its value redacted, must not read the
			// pair instead.
			return hit{}, false
		}
	}
	ps := i + 1
	var quote byte
	if c := in[ps]; c == '\'' || c == '"' {
		quote, ps = c, ps+1
	}
	pe := ps
	for pe < len(in) && pe-ps <= maxPairPart && in[pe] > ' ' && in[pe] < 0x7f && in[pe] != '\'' && in[pe] != '"' && in[pe] != '`' {
		pe++
	}
	if pe-ps > maxPairPart {
		return hit{}, false
	}
	end := pe
	if quote != 0 {
		if pe >= len(in) || in[pe] != quote {
			return hit{}, false
		}
		end = pe + 1
	} else {
		for pe > ps && strings.IndexByte(".,;:)]}", in[pe-1]) >= 0 {
			pe--
		}
		end = pe
		if end < len(in) && !pairEdge(in[end]) && strings.IndexByte(".,;:)]}", in[end]) < 0 {
			return hit{}, false
		}
	}
	pass := in[ps:pe]
	if hasAny(pass, &pairStops) || strings.Contains(strings.TrimRight(pass, "="), "=") || pass == in[us:i] || !pairPassword(pass) {
		return hit{}, false
	}
	if afterFinding {
		return hit{ps, pe, famPassword}, true
	}
	return hit{us, end, famPassword}, true
}

// passAhead reports whether the second half of a bare pair, at in[ps]
// and maybe quoted, has the 8 bytes pairPassword needs (hexPair's half
// has 8 too): most separators in text have fewer after them, and then the
// first half need not be read.
func passAhead(in string, ps int) bool {
	if c := in[ps]; c == '\'' || c == '"' {
		ps++
	}
	n := 0
	for ; ps < len(in) && n < 8; ps++ {
		if c := in[ps]; c <= ' ' || c >= 0x7f || c == '\'' || c == '"' || c == '`' {
			break
		}
		n++
	}
	return n == 8
}

// pairEdge reports whether c may stand right before or after a bare
// user:password pair: the start or end of a word.
func pairEdge(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '"' || c == '\'' || c == '`' || c == '(' || c == '='
}

// pairPassword reports whether pass, the second half of a bare pair,
// looks like a password rather than a port, a tag, a version or a word:
// 8 bytes or more that look generated (generatedRun, mixedGenerated), or
// that hold one of pairSymbols and two of digits, capitals and small
// letters; and not a placeholder, a date or a version.
//
// The classes of its bytes are read first: most second halves in text
// (a hash, a version, a path) are refused by them alone, before the
// longer looks for placeholders and words.
func pairPassword(pass string) bool {
	if len(pass) < 8 {
		return false
	}
	var d, u, l, sym, other bool
	plain := 0 // letters that are no hexadecimal digit
	for k := 0; k < len(pass); k++ {
		c := pass[k]
		switch {
		case isDigit(c):
			d = true
		case isLetter(c):
			if isUpper(c) {
				u = true
			} else {
				l = true
			}
			if chars[c]&cHex == 0 {
				plain++
			}
		case pairSymbolSet[c]:
			// Inside, not only in front: *complex128 is a type, ^Reality
			// a pattern.
			sym = sym || k > 0
		case !pairJoins[c]:
			other = true
		}
	}
	written := sym && (d && u || d && l || u && l)
	switch {
	case written:
	case sym || other:
		return false
	case plain <= 3 && !(u && l) && len(pass) <= 64:
		// Hexadecimal or digits, in one case, with three other letters at
		// most: neither generatedRun nor mixedGenerated takes it.
		return false
	}
	if !plausibleStart(pass, true) || !plausibleValue(pass) || dateLike(pass) {
		return false
	}
	if a := strings.IndexByte(pass, '@'); a >= 0 && strings.IndexByte(pass[a:], '.') > 0 {
		return false // an e-mail address or a host (email:alice@example.com)
	}
	if p := strings.IndexByte(pass, '%'); p >= 0 && p+1 < len(pass) && (isLetter(pass[p+1]) || pass[p+1] == '*') {
		return false // a format verb (%s, %*s): a template, not a value
	}
	return written || generatedRun(pass, 8) || mixedGenerated(pass)
}

// quotedHalfPair matches a quoted pair with one half empty at the ':'
// in[i]: ":password" (no user name, as curl -u ':…' takes it) and
// "apikey:" (an API key as the user name and no password, as Stripe's and
// others' APIs take one), when the half that is there looks random
// (pairPassword). The half goes, the quotes and the ':' stay.
func quotedHalfPair(in string, i, lo int) (hit, bool) {
	var q byte
	switch {
	case i > lo && (in[i-1] == '"' || in[i-1] == '\''):
		q = in[i-1]
		e := i + 1
		for e < len(in) && e-i <= maxPairPart && in[e] > ' ' && in[e] < 0x7f && in[e] != q {
			e++
		}
		if e < len(in) && in[e] == q && e-i <= maxPairPart && !hasAny(in[i+1:e], &pathStops) && pairPassword(in[i+1:e]) {
			return hit{i + 1, e, famPassword}, true
		}
	case i+1 < len(in) && (in[i+1] == '"' || in[i+1] == '\''):
		q = in[i+1]
		b := i
		for b > lo && i-b <= maxPairPart && in[b-1] > ' ' && in[b-1] < 0x7f && in[b-1] != q {
			b--
		}
		if b > lo && in[b-1] == q && i-b <= maxPairPart && !hasAny(in[b:i], &pathStops) && pairPassword(in[b:i]) {
			return hit{b, i, famPassword}, true
		}
	}
	return hit{}, false
}

// hexPair matches the credentials of Sidekiq Pro and Enterprise as their
// vendor issues them, alone (BUNDLE_GEMS__CONTRIBSYS__COM's value,
// https://<pair>@gems.contribsys.com/): eight lower-case hexadecimal
// digits, ':', eight more, each half with a letter, the pair a word of its
// own. No hash, address or time is written so.
func hexPair(in string, us, i int) (hit, bool) {
	e := i + 9
	if i-us != 8 || e > len(in) || us > 0 && !pairEdge(in[us-1]) && in[us-1] != '/' ||
		e < len(in) && !pairEdge(in[e]) && strings.IndexByte("@.,;:)]}", in[e]) < 0 {
		return hit{}, false
	}
	if !hexWord(in[us:i]) || !hexWord(in[i+1:e]) || in[us:i] == in[i+1:e] {
		return hit{}, false
	}
	return hit{us, e, famPassword}, true
}

// hexWord reports whether w is lower-case hexadecimal with a letter.
func hexWord(w string) bool {
	letter := false
	for k := 0; k < len(w); k++ {
		c := w[k]
		switch {
		case isDigit(c):
		case c >= 'a' && c <= 'f':
			letter = true
		default:
			return false
		}
	}
	return letter
}
