package scrub

import (
	"slices"
	"strings"
)

// This file holds the matchers for identifiers: e-mail addresses, card
// numbers, IBANs, phone numbers, IP addresses, UUIDs and user names in home
// directories. Checksums (Luhn, mod-97) and range checks keep ordinary
// numbers, versions and times out.

// Limits that keep every backward or forward look bounded.
const (
	maxLocal  = 64  // e-mail local part
	maxDomain = 255 // e-mail domain
)

// matchEmail matches local@domain around the '@' at in[at]. The local part
// is read backwards, but never before lo, the end of the previous finding.
func matchEmail(in string, at, lo int) (hit, bool) {
	s := at
	for s > lo && at-s <= maxLocal && chars[in[s-1]]&cLocal != 0 {
		s--
	}
	if at-s > maxLocal {
		return hit{}, false
	}
	for s < at && in[s] == '.' {
		s++
	}
	// git@host:org/repo is an SSH remote, not a person.
	if s == at || in[s:at] == "git" {
		return hit{}, false
	}
	e, lim := at+1, min(len(in), at+2+maxDomain)
	for e < lim && chars[in[e]]&cDomain != 0 {
		if (in[e] == '.' || in[e] == '-') && startsToken(in, e+1, at+1) {
			break // a@b.com.ghp_… is a@b.com and a token
		}
		e++
	}
	if e-at-1 > maxDomain {
		return hit{}, false
	}
	// The longest run of labels that is a domain: in "a@b.com-ghp_…" the
	// address is a@b.com. Settling for less than the whole run means that
	// a finding after it does not change the address in a second pass.
	for e > at+1 {
		for e > at+1 && (in[e-1] == '.' || in[e-1] == '-') {
			e--
		}
		if isDomain(in[at+1 : e]) {
			return hit{s, e, famEmail}, true
		}
		// (Back to the last '.' or '-', or to the domain's start: a
		// loop, which costs less than LastIndexAny's set.)
		for e--; e > at+1 && in[e] != '.' && in[e] != '-'; e-- {
		}
	}
	return hit{}, false
}

// startsToken reports whether a vendor token starts at in[g]. Matchers that
// read on across blanks, dashes or dots (IBANs, card and phone numbers,
// e-mail domains) stop before such a token rather than swallow its first
// characters. lo is as for matchToken.
func startsToken(in string, g, lo int) bool {
	if g >= len(in) {
		return false
	}
	if _, ok := matchToken(in, g, lo); ok {
		return true
	}
	if d := skipMax(in, g, cDigit, 11); d-g >= 8 && d-g <= 10 && d < len(in) && in[d] == ':' {
		_, ok := matchTelegram(in, g, d)
		return ok
	}
	return false
}

// isDomain reports whether d is a dotted host name whose last label, the
// top-level domain, has two or more letters.
func isDomain(d string) bool {
	dot := strings.LastIndexByte(d, '.')
	if dot <= 0 || d[0] == '.' || d[0] == '-' || strings.Contains(d, "..") {
		return false
	}
	tld := d[dot+1:]
	if len(tld) < 2 {
		return false
	}
	for i := 0; i < len(tld); i++ {
		if !isLetter(tld[i]) {
			return false
		}
	}
	return true
}

// cryptIDs are the identifiers of the password hash formats that
// matchCryptHash reads: crypt(3)'s MD5, bcrypt, SHA-256 and SHA-512,
// scrypt, Cisco's type 8 and 9, Argon2 and PBKDF2 in the PHC format,
// and the Kerberos hashes that AS-REP and TGS roasting recover.
var cryptIDs = [...]string{
	"1", "2a", "2b", "2x", "2y", "5", "6", "7", "8", "9",
	"argon2i", "argon2d", "argon2id", "pbkdf2", "pbkdf2-sha256", "pbkdf2-sha512",
	"krb5asrep", "krb5tgs", "krb5pa",
}

// maxCryptHash bounds the length of a password hash (a Kerberos TGS hash
// runs to a few thousand hexadecimal digits), and maxCryptFields the
// fields after its identifier (a Kerberos TGS hash has six: etype,
// principal, realm, SPN, checksum, data). With no more fields read, a
// byte is read by the few hashes that may begin within as many '$'
// before it: a text of "$1$a" over and over is read in linear time.
const (
	maxCryptHash   = 4 << 10
	maxCryptFields = 8
)

// cryptByte marks the bytes of a password hash's fields: the crypt
// alphabet ./0-9A-Za-z, base64's +=, and the separators of the
// parameters and of Kerberos' principal (,*@:_-).
var cryptByte = byteSet("./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz+=,*@:_-")

// matchCryptHash matches a password hash in the modular crypt or PHC
// format at in[b] ('$'): "$", an identifier of cryptIDs, and fields each
// after a '$', the last of them, the hash, 22 bytes of the crypt
// alphabet or more ($2b$12$R9h/cIPz…, $6$rounds=5000$salt$…,
// $argon2id$v=19$m=65536,t=3,p=4$…$…, $krb5asrep$23$…$…). An
// identifier alone, or a shell's $1$2, is none. The family is password:
// a hash is cracked offline into the password.
func matchCryptHash(in string, b int) (hit, bool) {
	if b > 0 && (chars[in[b-1]]&cWord != 0 || in[b-1] == '$') {
		return hit{}, false
	}
	k := b + 1
	for k < len(in) && k-b <= 14 && in[k] != '$' {
		k++
	}
	if k >= len(in) || in[k] != '$' || !slices.Contains(cryptIDs[:], in[b+1:k]) {
		return hit{}, false
	}
	// The fields, to the last '$' (the hash's field may end where the
	// next field of a shadow file's line begins: root:$6$…:19000:…).
	last, e := k, k
	for f := 0; f < maxCryptFields && e < len(in) && in[e] == '$'; f++ {
		last = e
		for e++; e < len(in) && e-b < maxCryptHash && cryptByte[in[e]]; e++ {
		}
	}
	if e < len(in) && in[e] == '$' {
		return hit{}, false // more fields than a hash has
	}
	e = last + 1
	for e < len(in) && e-b < maxCryptHash && (chars[in[e]]&cAlnum != 0 || in[e] == '.' || in[e] == '/' || in[e] == '+' || in[e] == '=') {
		e++
	}
	for e > last+1 && in[e-1] == '.' {
		e-- // a full stop after it
	}
	if last == k || e-last-1 < 22 || is(in, e, cWord) {
		return hit{}, false
	}
	return hit{b, e, famPassword}, true
}

// matchNewRelicLicense matches a New Relic license (ingest) key at in[i]:
// 36 lower-case hexadecimal digits and "NRAL", or for an account outside
// the US its region ("eu01xx") and 30 of them, a word of its own.
func matchNewRelicLicense(in string, i int) (hit, bool) {
	b := i
	if strings.HasPrefix(in[i:], "eu01xx") {
		b += len("eu01xx")
	}
	for k := b; k < i+36; k++ {
		if c := in[k]; !isDigit(c) && (c < 'a' || c > 'f') {
			return hit{}, false
		}
	}
	if is(in, i+40, cWord) || dummy(in[b:i+36]) {
		return hit{}, false
	}
	return hit{i, i + 40, famNewRelicKey}, true
}

// matchHexStart tries the identifiers that begin with a hexadecimal digit
// at the word start in[i]: UUIDs, IPv6 and IPv4 addresses, Telegram bot
// tokens and card numbers. A short look at the leading run of hex digits
// picks the one candidate worth trying, so words pay almost nothing.
func matchHexStart(in string, i, lo int) (hit, bool) {
	if i+40 <= len(in) && in[i+36:i+40] == "NRAL" {
		return matchNewRelicLicense(in, i)
	}
	if i+3 < len(in) && in[i+2] == 'D' && in[i] == '0' && in[i+1] == '0' {
		if h, ok := matchSalesforce(in, i); ok {
			return h, true
		}
	}
	h := skip(in, i, cHex)
	var next byte
	if h < len(in) {
		next = in[h]
	}
	switch {
	case h-i == 8 && next == '-':
		// (Not the nil UUID, nor one a test or a template filled in,
		// which identify nothing: 00000000-0000-0000-0000-000000000000,
		// …-00000000002a. After a token's prefix (sk-lf-) they are still
		// its body.)
		if m, ok := matchUUID(in, i); ok && !dominant(in[m.start:m.end]) {
			return m, true
		}
	case h-i == 32 && next == '-':
		if m, ok := matchHexToken(in, i); ok {
			return m, true
		}
	case h-i == 2 && (next == ':' || next == '-'), h-i == 4 && next == '.':
		if m, ok := matchMAC(in, i, lo); ok {
			return m, true
		}
	}
	if h-i <= 4 && next == ':' {
		if p := prev(in, i, lo); p == ':' || p == '.' {
			return hit{}, false
		}
		return matchIPv6(in, i)
	}
	if !isDigit(in[i]) {
		return hit{}, false
	}
	d := skip(in, i, cDigit)
	if d-i == 3 && next == '-' {
		if m, ok := matchSSN(in, i, lo); ok {
			return m, true
		}
	}
	if d < len(in) && in[d] == '.' {
		if m, ok := matchIPv4(in, i, lo); ok {
			return m, true
		}
	}
	if d-i == 3 && d < len(in) && (in[d] == '-' || in[d] == '.') {
		if m, ok := matchNANPPhone(in, i, lo); ok {
			return m, true
		}
	}
	if d-i >= 8 && d-i <= 10 && d < len(in) && in[d] == ':' {
		if m, ok := matchTelegram(in, i, d); ok {
			return m, true
		}
	}
	return matchCard(in, i)
}

// prev returns the byte before in[i]. At lo, the end of the previous
// finding, that is the closing ']' of its placeholder.
func prev(in string, i, lo int) byte {
	if i <= lo {
		return ']'
	}
	return in[i-1]
}

// matchUUID matches 8-4-4-4-12 hexadecimal digits.
func matchUUID(in string, i int) (hit, bool) {
	j := i
	for k, n := range [...]int{8, 4, 4, 4, 12} {
		if k > 0 {
			if j >= len(in) || in[j] != '-' {
				return hit{}, false
			}
			j++
		}
		e := skipMax(in, j, cHex, n+1)
		if e-j != n {
			return hit{}, false
		}
		j = e
	}
	if is(in, j, cWord) || strings.HasPrefix(in[j:], placeholderPrefix) {
		return hit{}, false
	}
	return hit{i, j, famUUID}, true
}

// parseIPv4 parses four dot-separated decimal octets at in[i:].
func parseIPv4(in string, i int) (end int, ip [4]int, ok bool) {
	j := i
	for k := range ip {
		if k > 0 {
			if j >= len(in) || in[j] != '.' {
				return 0, ip, false
			}
			j++
		}
		v, d := 0, 0
		for j < len(in) && isDigit(in[j]) && d < 4 {
			v = v*10 + int(in[j]-'0')
			j++
			d++
		}
		if d == 0 || d > 3 || v > 255 {
			return 0, ip, false
		}
		ip[k] = v
	}
	return j, ip, true
}

// mayBeIPv4 reports whether an IPv4 address may begin at in[i]: its
// digits and dots reach a third dot within the 15 bytes an address has
// at most. Most dotted numbers in text (versions, 1.2.3, 1.5s) do not, and
// this look rules them out before they are parsed.
func mayBeIPv4(in string, i int) bool {
	dots := 0
	for k := i; k < len(in) && k-i < 15; k++ {
		switch c := in[k]; {
		case c == '.':
			if dots++; dots == 3 {
				return true
			}
		case !isDigit(c):
			return false
		}
	}
	return false
}

// matchIPv4 matches a dotted-quad address that is not part of a longer
// dotted sequence (a version such as 1.2.3.4.5), not loopback and not
// 0.0.0.0.
func matchIPv4(in string, i, lo int) (hit, bool) {
	if prev(in, i, lo) == '.' || !mayBeIPv4(in, i) {
		return hit{}, false
	}
	e, ip, ok := parseIPv4(in, i)
	// A dotted sequence that goes on (1.2.3.4.5) is a version, also when
	// what follows was redacted: a second pass sees 1.2.3.4.[REDACTED:…].
	if !ok || is(in, e, cWord) || strings.HasPrefix(in[e:], placeholderPrefix) ||
		e+1 < len(in) && in[e] == '.' && (isDigit(in[e+1]) || in[e+1] == '[') {
		return hit{}, false
	}
	if ip[0] == 127 || ip == [4]int{} {
		return hit{}, false
	}
	a := uint32(ip[0])<<24 | uint32(ip[1])<<16 | uint32(ip[2])<<8 | uint32(ip[3])
	if isNetmask(a) || network4(in, e, a) || ip[0] < 10 && numberingWord(in, i, lo) {
		return hit{}, false
	}
	return hit{i, e, famIP}, true
}

// isNetmask reports whether a, an IPv4 address, is a netmask
// (255.255.255.0): ones, then zeros. A netmask names no machine.
func isNetmask(a uint32) bool {
	z := ^a
	return a != 0 && z&(z+1) == 0
}

// network4 reports whether the IPv4 address a, which ends at in[e], is the
// network address of the CIDR block written after it (10.0.0.0/8): its
// host bits are all zero. A network names no machine; an address with a
// prefix length (10.1.2.3/32, 10.1.2.3/24) does.
func network4(in string, e int, a uint32) bool {
	n, ok := prefixLen(in, e, 32)
	return ok && n < 32 && a<<n == 0
}

// prefixLen reads the prefix length of a CIDR block at in[e] ("/24"): a
// '/' and one to three digits, at most max, not followed by more word
// bytes, nor by what goes on as an address ('.' and a digit, ':' and a
// hexadecimal digit or another ':').
func prefixLen(in string, e, max int) (int, bool) {
	if e >= len(in) || in[e] != '/' {
		return 0, false
	}
	d := skipMax(in, e+1, cDigit, 4)
	if d == e+1 || d-(e+1) > 3 || is(in, d, cWord) {
		return 0, false
	}
	if d+1 < len(in) && (in[d] == '.' && isDigit(in[d+1]) || in[d] == ':' && (chars[in[d+1]]&cHex != 0 || in[d+1] == ':')) {
		// The digits begin another address (10.0.0.0/8.8.8.8,
		// 1::/20::1), which a scan finds and redacts: read as a length
		// here, a second pass would not see them so.
		return 0, false
	}
	n := 0
	for k := e + 1; k < d; k++ {
		n = n*10 + int(in[k]-'0')
	}
	return n, n <= max
}

// numberWords are the words after which a dotted number that begins
// with one digit is an object identifier or a version, not an address:
// OID 1.3.6.1, version 1.2.3.4 (versions and OIDs begin with small
// numbers; version 10.20.30.41 still reads as an address).
var numberWords = [...]string{"oid", "version", "ver", "vers", "release", "build", "revision", "rev", "firmware", "fw"}

// numberingWord reports whether the dotted number at in[i] follows one of
// numberWords, maybe after a ':' or '=' and blanks; never before lo.
func numberingWord(in string, i, lo int) bool {
	k := i
	for k > lo && i-k < 4 && (in[k-1] == ' ' || in[k-1] == ':' || in[k-1] == '=') {
		k--
	}
	if k == i {
		return false
	}
	w := k
	for w > lo && k-w <= 8 && isLetter(in[w-1]) {
		w--
	}
	if w == k || k-w > 8 || w > lo && chars[in[w-1]]&cWord != 0 {
		return false
	}
	for _, n := range numberWords {
		if strings.EqualFold(in[w:k], n) {
			return true
		}
	}
	return false
}

// matchIPv6 matches an IPv6 address in any of its text forms (RFC 4291,
// with "::" compression and a dotted IPv4 tail). Loopback and the
// unspecified address are left alone, as are compressed forms with fewer
// than four hex digits, which are more often C++ or Rust paths (a::b).
func matchIPv6(in string, i int) (hit, bool) {
	if !mayBeIPv6(in, i) {
		return hit{}, false
	}
	var g [8]uint16
	ng, double, digits := 0, -1, 0
	v4loop := false
	j := i
	if strings.HasPrefix(in[j:], "::") {
		double = 0
		j += 2
	}
	for ng < 8 {
		k, v := j, 0
		for k < len(in) && k-j < 5 && chars[in[k]]&cHex != 0 {
			v = v<<4 | hexVal(in[k])
			k++
		}
		if k == j {
			break
		}
		if k < len(in) && in[k] == '.' && is(in, k+1, cDigit) {
			// An IPv4 address as the last two groups (::ffff:1.2.3.4);
			// a '.' and no digit ends a sentence.
			e, ip, ok := parseIPv4(in, j)
			if !ok || ng > 6 {
				return hit{}, false
			}
			g[ng], g[ng+1] = uint16(ip[0]<<8|ip[1]), uint16(ip[2]<<8|ip[3])
			ng += 2
			digits += 8
			v4loop = ip[0] == 127 || ip == [4]int{}
			j = e
			break
		}
		if k-j > 4 {
			return hit{}, false
		}
		g[ng] = uint16(v)
		ng++
		digits += k - j
		j = k
		if strings.HasPrefix(in[j:], "::") {
			if double >= 0 {
				return hit{}, false
			}
			double = ng
			j += 2
			continue
		}
		if j+1 < len(in) && in[j] == ':' && chars[in[j+1]]&cHex != 0 {
			j++
			continue
		}
		break
	}
	if double < 0 && ng != 8 || double >= 0 && (ng > 7 || digits < 4) {
		return hit{}, false
	}
	if j < len(in) {
		c := in[j]
		// What goes on like an address, or was redacted right after it
		// (a second pass must reject what a first pass rejected).
		if chars[c]&cWord != 0 || strings.HasPrefix(in[j:], placeholderPrefix) ||
			c == ':' && (is(in, j+1, cHex) || strings.HasPrefix(in[j+1:], ":") || strings.HasPrefix(in[j+1:], placeholderPrefix)) ||
			c == '.' && is(in, j+1, cDigit) {
			return hit{}, false
		}
	}
	if v4loop || isLoopback6(g[:ng]) || network6(in, j, g[:ng], double) {
		return hit{}, false
	}
	return hit{i, j, famIP}, true
}

// network6 reports whether the IPv6 address whose groups are g, "::" at
// index double (or -1), ending at in[e], is the network address of the
// CIDR block written after it (2001:db8::/32): its host bits are all
// zero.
func network6(in string, e int, g []uint16, double int) bool {
	n, ok := prefixLen(in, e, 128)
	if !ok || n >= 128 {
		return false
	}
	var full [8]uint16
	if double < 0 {
		copy(full[:], g)
	} else {
		copy(full[:], g[:double])
		copy(full[8-(len(g)-double):], g[double:])
	}
	for k, v := range full {
		bit := k * 16 // the first bit of this group
		switch {
		case bit >= n:
			if v != 0 {
				return false
			}
		case bit+16 > n:
			if v<<(n-bit) != 0 {
				return false
			}
		}
	}
	return true
}

// isLoopback6 reports whether the groups of an address are all zero but
// for a last group of 0 or 1 (::, ::1 and their long forms).
func isLoopback6(g []uint16) bool {
	for k, v := range g {
		if v != 0 && (k < len(g)-1 || v != 1) {
			return false
		}
	}
	return true
}

// hexVal returns the value of the hexadecimal digit c.
func hexVal(c byte) int { return int(hexVals[c]) }

// hexVals holds hexVal's answers: a table, since which kind of digit comes
// next in a hexadecimal run is as good as random to a branch predictor.
// (Bytes that are no hexadecimal digit have the value of the capital
// formula, as callers that checked the digits never read.)
var hexVals = func() (t [256]uint16) {
	for i := range t {
		c := byte(i)
		switch {
		case isDigit(c):
			t[i] = uint16(c - '0')
		case 'a' <= c && c <= 'f':
			t[i] = uint16(c-'a') + 10
		default:
			t[i] = uint16(c-'A') + 10
		}
	}
	return t
}()

// matchCard matches a payment card number: 13 to 19 digits, optionally in
// groups separated by single spaces, dashes or dots, that pass the Luhn check and
// start with a major network's digit (2 to 6). Of several group boundaries
// that would do, the longest valid number wins.
func matchCard(in string, i int) (hit, bool) {
	if in[i] < '2' || in[i] > '6' {
		return hit{}, false
	}
	var digits [19]byte
	nd, j, best := 0, i, -1
	var sep byte
	wrapped := false
	for {
		g := j
		j = skipMax(in, j, cDigit, len(digits)+1)
		if nd+j-g > len(digits) || sep == '.' && j-g > 4 {
			break
		}
		nd += copy(digits[nd:], in[g:j])
		if nd >= 13 && !is(in, j, cWord) && !(j+1 < len(in) && in[j] == '.' && isDigit(in[j+1])) && luhn(digits[:nd]) {
			best = j
		}
		// Groups are separated by one space, dash or dot, the same
		// throughout; dotted groups are of four digits.
		if j+1 < len(in) && (in[j] == ' ' || in[j] == '-' || in[j] == '.' && j-g == 4) && (sep == 0 || in[j] == sep) &&
			isDigit(in[j+1]) && !startsToken(in, j+1, j+1) {
			sep = in[j]
			j++
			continue
		}
		// Once, a line break in place of a separator: a number that a
		// line limit split (4111 1111⏎1111 1111, 41111111⏎11111111), after
		// a group of four or more digits.
		if b := lineBreak(in, j); b > 0 && !wrapped && j-g >= 4 && nd < 13 && is(in, j+b, cDigit) && !startsToken(in, j+b, j+b) {
			wrapped = true
			j += b
			continue
		}
		break
	}
	if best < 0 {
		return hit{}, false
	}
	return hit{i, best, famCard}, true
}

// luhn reports whether the decimal digits pass the Luhn checksum.
func luhn(digits []byte) bool {
	sum := 0
	double := false
	for k := len(digits) - 1; k >= 0; k-- {
		d := int(digits[k] - '0')
		if double {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
		double = !double
	}
	return sum%10 == 0
}

// ibanLengths gives the length of the IBANs of each country in the
// IBAN registry (ISO 13616).
var ibanLengths = map[string]int{
	"AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22,
	"BI": 27, "BR": 29, "BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DJ": 27,
	"DK": 18, "DO": 28, "EE": 20, "EG": 29, "ES": 24, "FI": 18, "FK": 18, "FO": 18, "FR": 27,
	"GB": 22, "GE": 22, "GI": 23, "GL": 18, "GR": 27, "GT": 28, "HN": 28, "HR": 21, "HU": 28,
	"IE": 22, "IL": 23, "IQ": 23, "IS": 26, "IT": 27, "JO": 30, "KW": 30, "KZ": 20, "LB": 28,
	"LC": 32, "LI": 21, "LT": 20, "LU": 20, "LV": 21, "LY": 25, "MC": 27, "MD": 24, "ME": 22,
	"MK": 19, "MN": 20, "MR": 27, "MT": 31, "MU": 30, "NI": 28, "NL": 18, "NO": 15, "OM": 23,
	"PK": 24, "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22, "RU": 33, "SA": 24,
	"SC": 31, "SD": 18, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "SO": 23, "ST": 25, "SV": 28,
	"TL": 23, "TN": 24, "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20, "YE": 30,
}

// matchIBAN matches an International Bank Account Number: two letters, two
// check digits and up to 30 letters or digits, compact or in groups of
// four separated by single spaces or dashes, with a valid ISO 7064 mod-97
// checksum. Letters are all upper case or, for a country of the IBAN
// registry, all lower case. A registry country's IBAN has its length;
// another's is from 15 to 34 characters, and of several group boundaries
// that would do, the longest valid number wins.
func matchIBAN(in string, i int) (hit, bool) {
	if i+4 > len(in) || !isLetter(in[i]) || !isLetter(in[i+1]) || !isDigit(in[i+2]) || !isDigit(in[i+3]) {
		return hit{}, false
	}
	lower := isLower(in[i])
	if isLower(in[i+1]) != lower {
		return hit{}, false
	}
	cc := [2]byte{in[i] &^ 0x20, in[i+1] &^ 0x20}
	want := ibanLengths[string(cc[:])]
	if lower && want == 0 {
		return hit{}, false
	}
	set := cUpperDigit
	if lower {
		set = cLowerDigit
	}
	// m is the BBAN read so far, mod 97. The country code and check digits
	// count as if they followed it.
	m, n, j, best := 0, 4, i+4, -1
	var sep byte
	for {
		if j < len(in) && (in[j] == ' ' || in[j] == '-') && (sep == 0 || in[j] == sep) && n%4 == 0 &&
			is(in, j+1, set) && !startsToken(in, j+1, j+1) {
			sep = in[j]
			j++
		}
		if j >= len(in) || chars[in[j]]&set == 0 || n == 34 {
			break
		}
		m = mod97(m, in[j])
		n++
		j++
		if n >= 15 && (want == 0 || n == want) && !is(in, j, cAlnum) {
			c := m
			for k := i; k < i+4; k++ {
				c = mod97(c, in[k])
			}
			if c == 1 {
				best = j
			}
		}
	}
	if best < 0 {
		return hit{}, false
	}
	return hit{i, best, famIBAN}, true
}

// mod97 appends one IBAN character to the number m (mod 97): a digit as
// itself, a letter of either case as 10 to 35.
func mod97(m int, c byte) int {
	if isDigit(c) {
		return (m*10 + int(c-'0')) % 97
	}
	return (m*100 + int(c&^0x20-'A') + 10) % 97
}

// matchSSN matches a US social security number written AAA-GG-SSSS at
// in[i], the word start: an area other than 000, 666 and 900 to 999, a
// group other than 00 and a serial other than 0000, not part of a longer
// run of digits and dashes.
func matchSSN(in string, i, lo int) (hit, bool) {
	if p := prev(in, i, lo); p == '-' || p == '.' || p == '/' || p == ':' {
		return hit{}, false
	}
	e := i + len("000-00-0000")
	if e > len(in) || !isSSNValue(in[i:e]) {
		return hit{}, false
	}
	if e < len(in) && (chars[in[e]]&cWord != 0 || (in[e] == '-' || in[e] == '.') && e+1 < len(in) && (isDigit(in[e+1]) || in[e+1] == '[')) {
		return hit{}, false
	}
	return hit{i, e, famSSN}, true
}

// isSSNValue reports whether v is exactly a valid social security number:
// nine digits, grouped 3-2-4 by dashes or spaces or not.
func isSSNValue(v string) bool {
	var d [9]byte
	n := 0
	for k := 0; k < len(v); k++ {
		switch c := v[k]; {
		case isDigit(c) && n < 9:
			d[n] = c
			n++
		case (c == '-' || c == ' ') && (n == 3 || n == 5) && k > 0 && isDigit(v[k-1]):
		default:
			return false
		}
	}
	if n != 9 || len(v) != 9 && len(v) != 11 {
		return false
	}
	area := string(d[:3])
	return area != "000" && area != "666" && area[0] != '9' && string(d[3:5]) != "00" && string(d[5:]) != "0000"
}

// maxIPv6Len bounds how far mayBeIPv6 reads: further than the longest
// address matchIPv6 reads (eight groups of four and seven colons, or six
// groups of four and an IPv4 address: 45 bytes).
const maxIPv6Len = 64

// mayBeIPv6 reports whether matchIPv6 may find an address at in[i]: every
// address it accepts holds "::" or six colons at least (eight groups, or
// six and a dotted IPv4 tail), all in the run of hexadecimal digits,
// colons and dots at in[i]. Most runs with a colon in text have neither (a
// time of day 10:20:30, a key and its value), and this one look at the run
// rules them out before the address is parsed.
func mayBeIPv6(in string, i int) bool {
	colons := 0
	for k := i; k < len(in) && k-i < maxIPv6Len; k++ {
		switch c := in[k]; {
		case c == ':':
			if k+1 < len(in) && in[k+1] == ':' {
				return true
			}
			colons++
		case c != '.' && chars[c]&cHex == 0:
			return colons >= 6
		}
	}
	return colons >= 6
}

// matchMAC matches a MAC address at in[i]: six groups of two hexadecimal
// digits separated by ':' or '-' throughout, or three groups of four
// separated by '.', not part of a longer such sequence (an IPv6 address).
// The all-zero and broadcast addresses are left alone.
func matchMAC(in string, i, lo int) (hit, bool) {
	if p := prev(in, i, lo); p == ':' || p == '-' || p == '.' || chars[p]&cWord != 0 {
		return hit{}, false
	}
	groups, width := 6, 2
	sep := in[i+2]
	if sep != ':' && sep != '-' {
		groups, width, sep = 3, 4, '.'
	}
	// The separators first: most runs of short groups in text (a time of
	// day, 10:20:30) end before the fourth.
	if width == 2 && (len(in) < i+17 || in[i+5] != sep || in[i+8] != sep || in[i+11] != sep || in[i+14] != sep) ||
		width == 4 && (len(in) < i+14 || in[i+4] != sep || in[i+9] != sep) {
		return hit{}, false
	}
	j := i
	digits, zero, ones := false, true, true
	for g := 0; g < groups; g++ {
		if g > 0 {
			if j >= len(in) || in[j] != sep {
				return hit{}, false
			}
			j++
		}
		e := skipMax(in, j, cHex, width+1)
		if e-j != width {
			return hit{}, false
		}
		for k := j; k < e; k++ {
			digits = digits || isDigit(in[k])
			zero = zero && in[k] == '0'
			ones = ones && in[k]|0x20 == 'f'
		}
		j = e
	}
	if j < len(in) && (chars[in[j]]&cWord != 0 || in[j] == sep && j+1 < len(in) && (chars[in[j+1]]&cHex != 0 || in[j+1] == '[')) {
		return hit{}, false
	}
	// A dotted form without a digit is more likely a word (dead.beef.cafe).
	if zero || ones || sep == '.' && !digits {
		return hit{}, false
	}
	return hit{i, j, famMAC}, true
}

// matchNANPPhone matches a phone number of the North American plan
// written nationally: "(NXX) NXX-XXXX" or "(NXX)NXX-XXXX" from the '('
// in[i], "NXX-NXX-XXXX" or "NXX.NXX.XXXX" from the first digit, where N
// is 2 to 9, as area codes and exchanges begin. A run of groups that goes
// on either side (1.415.555.0132.7, x-415-555-0132) is something else.
func matchNANPPhone(in string, i, lo int) (hit, bool) {
	j := i + 4
	sep := byte('-')
	if p := prev(in, i, lo); chars[p]&cWord != 0 || p == '-' || p == '.' || p == '+' {
		return hit{}, false
	}
	if in[i] == '(' {
		if !areaCode(in, i+1) || j >= len(in) || in[j] != ')' {
			return hit{}, false
		}
		if j++; j < len(in) && in[j] == ' ' {
			j++
		}
	} else {
		if !areaCode(in, i) || j-1 >= len(in) {
			return hit{}, false
		}
		if sep = in[j-1]; sep != '-' && sep != '.' {
			return hit{}, false
		}
	}
	if !areaCode(in, j) || j+3 >= len(in) || in[j+3] != sep || skipMax(in, j+4, cDigit, 5) != j+8 {
		return hit{}, false
	}
	e := j + 8
	if e < len(in) && (chars[in[e]]&cWord != 0 || (in[e] == '-' || in[e] == '.') && is(in, e+1, cDigit)) {
		return hit{}, false
	}
	return hit{i, e, famPhone}, true
}

// areaCode reports whether in[i:] begins with three digits, the first of
// them 2 to 9: an area code or an exchange of the North American plan.
func areaCode(in string, i int) bool {
	return i+3 <= len(in) && '2' <= in[i] && in[i] <= '9' && isDigit(in[i+1]) && isDigit(in[i+2])
}

// phoneSeps are the bytes between the groups of a phone number.
var phoneSeps = byteSet(" -.()")

// matchPhone matches an international phone number at the '+' in[i]: a
// country code and further digit groups, 8 to 15 digits in all, separated
// by up to two of space, dash, dot or parenthesis. Groups are taken while
// the total stays within 15 digits.
func matchPhone(in string, i int) (hit, bool) {
	j := i + 1
	if !is(in, j, cDigit) {
		return hit{}, false
	}
	nd, end := 0, -1
	pnd, pend := 0, -1 // the digits and the end before the last group
	for {
		g := j
		j = skipMax(in, j, cDigit, 16)
		if nd+j-g > 15 {
			break
		}
		pnd, pend = nd, end
		nd += j - g
		end = j
		k := j
		for k < len(in) && k-j < 2 && phoneSeps[in[k]] {
			k++
		}
		if k == j || !is(in, k, cDigit) || startsToken(in, k, k) {
			break
		}
		j = k
	}
	if end >= 0 && is(in, end, cWord) {
		// The last group runs into a word ("… 0958 0A"): the number ends
		// before it.
		nd, end = pnd, pend
	}
	if nd < 8 || end < 0 || is(in, end, cWord) || !planLength(in, i+1, nd) {
		return hit{}, false
	}
	return hit{i, end, famPhone}, true
}

// planLength reports whether nd digits, the first of them at in[d], are
// as many as the numbering plan of their country code has: a number of
// the North American plan (+1) has 11 digits and its area code and
// exchange begin with 2 to 9, so +12500000 is a quantity, not a phone
// number; Russia's and Kazakhstan's (+7) 11. Other countries' lengths
// vary: 8 to 15 digits do.
func planLength(in string, d, nd int) bool {
	switch in[d] {
	case '1':
		var digits [11]byte
		n := 0
		for k := d; k < len(in) && n < len(digits); k++ {
			if isDigit(in[k]) {
				digits[n] = in[k]
				n++
			}
		}
		return nd == 11 && n == 11 && digits[1] >= '2' && digits[4] >= '2'
	case '7':
		return nd == 11
	}
	return true
}

// routeWords are path segments that follow /home/ or /Users/ in web
// routes and are nobody's user name.
var routeWords = [...]string{
	"dashboard", "settings", "index", "feed", "about", "profile", "account", "accounts",
	"login", "logout", "signin", "signup", "search", "static", "assets", "public", "page",
	"pages", "view", "views", "edit", "new", "list", "welcome", "default", "main", "me",
	"api", "home", "user", "users", "shared", "guest", "timeline", "overview", "help",
	"docs", "news", "blog", "latest", "popular", "trending", "recent", "explore", "content",
}

// httpMethods before a path make it a route.
var httpMethods = [...]string{"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"}

// matchHome matches the user name in a home directory path at in[i]:
// /home/<name>, /Users/<name>, \Users\<name> (C:\Users\...), and the
// JSON-escaped \\Users\\<name>. The hit covers only the name.
//
// Web routes look alike, so a home directory must begin a path (not
// example.com/home/… or /api/Users/…), not follow an HTTP method, and have
// a name that a user could have: starting with a letter, not a common
// route segment (/home/dashboard), not followed by a query or fragment, not
// a web page (/home/index.html).
func matchHome(in string, i, lo int) (hit, bool) {
	if i+1 >= len(in) {
		return hit{}, false
	}
	switch in[i+1] {
	case 'h', 'U', 'u', '\\':
	default:
		return hit{}, false // no /home/, /Users/ or \Users\ here
	}
	rest := in[i:]
	var p int
	switch {
	case strings.HasPrefix(rest, "/home/"):
		p = len("/home/")
	case strings.HasPrefix(rest, "/Users/"), strings.HasPrefix(rest, `\Users\`), strings.HasPrefix(rest, `\users\`):
		p = len("/Users/")
	case strings.HasPrefix(rest, `\\Users\\`), strings.HasPrefix(rest, `\\users\\`):
		p = len(`\\Users\\`)
	default:
		return hit{}, false
	}
	if i > 0 {
		// At lo, the previous finding ends right before: in a second pass a
		// placeholder's ']'.
		c := prev(in, i, lo)
		if chars[c]&cWord != 0 || strings.IndexByte(".-~])}%", c) >= 0 ||
			c == '/' && !(i >= 3 && in[i-3:i] == "://") {
			return hit{}, false
		}
	}
	if m := blanksBefore(in, i, lo); m < i {
		k := m
		for k > lo && m-k < 8 && isUpper(in[k-1]) {
			k--
		}
		for _, method := range httpMethods {
			if in[k:m] == method {
				return hit{}, false
			}
		}
	}
	j := i + p
	e := skip(in, j, cUser)
	for e > j && in[e-1] == '.' {
		e--
	}
	if e == j || !isLetter(in[j]) && in[j] != '_' && in[j] < 0x80 || in[j:e] == "Shared" {
		return hit{}, false
	}
	if e < len(in) && (in[e] == '?' || in[e] == '#') {
		return hit{}, false
	}
	name := in[j:e]
	for _, w := range routeWords {
		if strings.EqualFold(name, w) {
			return hit{}, false
		}
	}
	for _, ext := range [...]string{".html", ".htm", ".php", ".asp", ".aspx", ".jsp"} {
		if strings.HasSuffix(name, ext) {
			return hit{}, false
		}
	}
	return hit{j, e, famHomeUser}, true
}

// pemBody reports whether the body of a PEM block holds key material: a
// run of 8 or more base64 bytes with a digit or letters of both cases.
func pemBody(body string) bool {
	for k := 0; k < len(body) && k < 4096; {
		e := k
		for e < len(body) && (chars[body[e]]&cB64 != 0 || body[e] == '=') {
			e++
		}
		if e-k >= 8 && randomish(body[k:e]) {
			return true
		}
		k = e + 1
	}
	return false
}

// matchPEM matches a PEM private key block, from its BEGIN line through its
// END line, or to the end of the input if the block was cut short.
func matchPEM(in string, i int) (hit, bool) {
	const begin, end, dashes = "-----BEGIN ", "-----END ", "-----"
	if !strings.HasPrefix(in[i:], begin) {
		return hit{}, false
	}
	j := i + len(begin)
	k := strings.Index(in[j:min(j+64, len(in))], dashes)
	if k < 0 {
		return hit{}, false
	}
	// A label is upper-case words (RSA PRIVATE KEY, PGP PRIVATE KEY
	// BLOCK): what else the window holds may shrink when redacted, and a
	// second pass must not find a block the first did not.
	label := in[j : j+k]
	if !strings.Contains(label, "PRIVATE KEY") || skip(label, 0, cUpperDigit|cSpace) != len(label) {
		return hit{}, false
	}
	j += k + len(dashes)
	k = strings.Index(in[j:], end)
	body := in[j:]
	if k >= 0 {
		body = in[j : j+k]
	}
	if !pemBody(body) {
		return hit{}, false // an empty or example block: ---BEGIN …---⏎anything⏎---END …---
	}
	if k < 0 {
		return hit{i, len(in), famPrivateKey}, true
	}
	j += k + len(end)
	if k = strings.Index(in[j:min(j+64, len(in))], dashes); k >= 0 {
		j += k + len(dashes)
	}
	return hit{i, j, famPrivateKey}, true
}
