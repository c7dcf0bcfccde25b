package scrub

//go:generate go run ./internal/codewords -o codewords.go

import "strings"

// A run of base64 or base64url bytes that stands alone and looks generated
// is a secret whose vendor the scrubber cannot tell (family high_entropy):
// most API keys are such runs, and a message often carries one with no
// word to name it ("init with 5oK0U90ME14yU6CVxV90crvfqVlNH2wRKBwcLWDc: 401").
// Identifiers built the same way (ULIDs, KSUIDs, nanoids, base64 cursors)
// go with them; WithoutFamilies("high_entropy") keeps them.
//
// A run that is the value of a key written as code or configuration
// (name=…, "name": "…", name:…, snake_case: …) is judged by its key, as
// package doc describes, whatever its shape: primaryKey=6rz6CJraXj8l… and
// csrf-token=… are no secrets. A run that decodes to text (base64 of
// words) is read as that text, for findings inside (decode.go).
//
// The body of a PEM or PGP block that is public (a certificate, a public
// key, a signature) or encrypted (a PGP message) is no secret either.
//
// What is never one: hexadecimal runs (hashes, git SHAs, addresses, trace
// ids) and runs of digits, which a scrubber cannot tell from secrets
// without a word beside them; digests labelled as such (h1:…, sha256:…,
// sha512-…); a run that is part of a host name, a file name, an e-mail
// address or a dotted name (joined by '.' or '@'); names written in words
// (orders-7d9f8b6c5-x2x9k, IllegalStateException2); placeholders.

// minRandomRun is the shortest run (its letters and digits) judged: a
// random body of 16 base62 bytes holds 95 bits. Shorter words that pass
// for random (ids, versions, names with digits) are common in text, and
// runs shorter than 20 must pass stricter tests (see generatedRun).
// minRandomHead is the shortest part before an '=' inside a run that is
// read as a part of the token rather than as a name.
const (
	minRandomRun  = 16
	minRandomHead = 8
)

// matchRandomRun judges the run of base64 and base64url bytes around the
// word that begins at in[ws], never before lo nor past limit, and returns
// its finding if it is one, and the run's end: a run is judged once, at
// its first word the scanner tries.
func (s *Scrubber) matchRandomRun(in string, ws, lo, limit int, blk *blockCache) (hit, int, bool) {
	rs := ws
	for rs > lo && ws-rs < maxToken && runClass[in[rs-1]]&runByte != 0 {
		rs--
	}
	// The run forward, and the classes of its letters (runClass; not the
	// x of 0x…), with one '=' inside at most (eq: whos3vck04=_tzu2…).
	var seen uint8
	re, eq := rs, -1
	if rs+2 <= limit && in[rs] == '0' && in[rs+1]|0x20 == 'x' {
		re = rs + 2
	}
	for end := min(limit, rs+maxToken); ; {
		for re < end && runClass[in[re]]&runByte != 0 {
			seen |= runClass[in[re]]
			re++
		}
		if re+1 >= end || in[re] != '=' || eq >= 0 || re == rs || chars[in[re-1]]&cAlnum == 0 || runClass[in[re+1]]&runByte == 0 {
			break
		}
		eq = re
		re++
	}
	if re-rs < minRandomRun || seen&^runByte <= 2 {
		return hit{}, re, false // short, or digits and hexadecimal letters of one case: a hash, an address
	}
	if eq >= 0 && !generatedRun(in[rs:eq], minRandomHead) {
		return hit{}, re, false // name=value: the name judges the value
	}
	// The run begins and ends with a letter or digit; padding follows.
	vs, ve := rs, re
	for vs < ve && chars[in[vs]]&cAlnum == 0 {
		vs++
	}
	for ve > vs && chars[in[ve-1]]&cAlnum == 0 {
		ve--
	}
	end := ve
	if ve == re {
		for end < limit && end-ve < 2 && in[end] == '=' {
			end++
		}
	}
	if end > ve && end < limit && (in[end] == '=' || chars[in[end]]&cWord != 0 || in[end] == '[') {
		// A key (NAME=value, NAME=[REDACTED:…] where a first pass found
		// its value), or padding that goes on.
		return hit{}, re, false
	}
	if re < limit && in[re] == '[' || rs > lo && in[rs-1] == ']' || rs == lo && lo > 0 {
		// Touching another finding, or what a first pass found there: a
		// run is judged whole or not at all, so that the second pass
		// judges as the first did.
		return hit{}, re, false
	}
	if ve-vs < minRandomRun || !alone(in, rs, end, lo, limit) || keyedRun(in, rs, lo) || digestBefore(in, rs, lo) || labelled(in[vs:ve]) ||
		inPublicBlock(in, lo, rs, blk) || !generatedRun(in[vs:ve], minRandomRun) || dummy(in[vs:ve]) ||
		decodeRun(in, encodedRun{start: vs, end: ve}, nil) {
		return hit{}, re, false
	}
	return hit{vs, end, famHighEntropy}, re, true
}

// alone reports whether the run in[rs:re] stands as a word of its own: no
// '.', '@', '\\', '%' or '&' joins it to a host name, a file name, an e-mail
// address, a dotted name or an escape on either side.
func alone(in string, rs, re, lo, limit int) bool {
	if rs > lo {
		switch in[rs-1] {
		case '.', '@', '\\', '%', '&', '$', '#':
			return false
		}
	}
	if re < limit {
		switch in[re] {
		case '@', '\\', '%', '(':
			return false
		case '.':
			// Not before a word (a file name), nor before a placeholder,
			// which stands for what a first pass found there.
			return !is(in, re+1, cAlnum) && !(re+1 < limit && in[re+1] == '[')
		}
	}
	return true
}

// digestLabels are the names a digest is written after (h1:…, sha256:…,
// sha512-… in a lock file, SHA256:… in an SSH fingerprint), lower-case.
var digestLabels = [...]string{"h1", "md5", "sha", "sha1", "sha224", "sha256", "sha384", "sha512", "blake2b", "blake3", "crc32", "etag", "hash", "digest", "checksum", "integrity", "fingerprint"}

// digestBefore reports whether the run that begins at in[rs] follows a
// digest's label and ':', '-' or '='.
func digestBefore(in string, rs, lo int) bool {
	if rs-lo < 3 {
		return false
	}
	switch in[rs-1] {
	case ':', '-', '=':
	case ' ':
		if in[rs-2] != ':' && in[rs-2] != '=' || rs-lo < 4 {
			return false
		}
		rs--
	default:
		return false
	}
	le := rs - 1
	ls := le
	for ls > lo && le-ls < 12 && chars[in[ls-1]]&cAlnum != 0 {
		ls--
	}
	if ls == le || ls > lo && chars[in[ls-1]]&cWord != 0 {
		return false
	}
	return digestLabel(in[ls:le])
}

// digestLabel reports whether w is one of digestLabels, in any case.
func digestLabel(w string) bool {
	for _, l := range digestLabels {
		if len(w) == len(l) && hasPrefixFold(w, l) {
			return true
		}
	}
	return false
}

// generatedRun reports whether a run of base64 or base64url bytes (it
// begins and ends with a letter or digit) looks generated rather than
// written. Over its letters and digits (the first 64, as randomBody):
//   - not hexadecimal (after 0x), not digits alone, not CamelCase;
//   - no segment between separators ('-', '_', '+', '/') that is a
//     lower-case word of four letters or more (orders-7d9f8b6c5-x2x9k);
//   - not written in the words code is written in (inWords);
//   - with letters of both cases, not read as words: split as a name is
//     read (digits, a capital and small letters, capitals), its tokens
//     are shorter than 3.5 bytes on average (random base62 gives about
//     2.2; NewGCMWithRandomNonce 4.2);
//   - letters of both cases: the class of byte (digit, capital, small
//     letter) changes at least once in three pairs of neighbours (random
//     base62 changes six times in ten; words change twice a word);
//   - letters of one case: digits are one byte in eight or more and the
//     class changes at least once in five pairs (random lower-case base36
//     has a digit in four bytes and changes four times in ten).
func generatedRun(run string, minLen int) bool {
	run = run[:min(len(run), 64)]
	var n, d, u, l, hexLetters, changes, same, tokens, vowels int
	var last uint8
	seg, segLower, segHex, longest, longestHex := 0, true, true, 0, false
	snake := false // '_' between capitals and digits: a constant's name
	for k := 0; k < len(run); k++ {
		c := run[k]
		if k > 0 && c == run[k-1] {
			if same++; same >= 7 {
				return false // a byte eight times over: padding, a placeholder
			}
		} else {
			same = 0
		}
		var cl uint8
		switch {
		case isDigit(c):
			cl, d = 1, d+1
		case isUpper(c):
			cl, u = 2, u+1
		case isLower(c):
			cl, l = 3, l+1
			if strings.IndexByte("aeiou", c) >= 0 {
				vowels++
			}
		default:
			if seg >= 4 && segLower {
				return false // a word between separators (orders-…)
			}
			if c == '_' && l == 0 && n > 0 {
				snake = true
			}
			if seg > longest {
				longest, longestHex = seg, segHex
			}
			seg, segLower, segHex = 0, true, true
			continue
		}
		if cl != 3 {
			segLower = false
		}
		// Tokens as a name is read: digits, a capital and small letters,
		// capitals (GCM in NewGCMWithRandomNonce).
		switch {
		case n == 0 || cl == 1 && last != 1 || cl == 3 && last == 1:
			tokens++
		case cl == 2 && (last != 2 || k+1 < len(run) && isLower(run[k+1])):
			tokens++
		}
		segHex = segHex && chars[c]&cHex != 0
		seg++
		if chars[c]&cHex != 0 && cl != 1 {
			hexLetters++
		}
		if n > 0 && cl != last {
			changes++
		}
		last = cl
		n++
	}
	if seg >= 4 && segLower && seg < n || snake && l == 0 {
		return false // R_AARCH64_P32_ABS32, NL80211_RRF_NO_HT40PLUS
	}
	if seg > longest {
		longest, longestHex = seg, segHex
	}
	mixedHex := u >= 3 && l >= 3 && hexLetters == u+l // 6d2FabeB6ADd…: no hash is written so
	if !mixedHex && (longestHex && longest*2 >= n || u+l-hexLetters <= 3) {
		return false // hexadecimal in one case, maybe after a short prefix or with a letter off (key-5d41…, i-0f9a…, a UUID)
	}
	short := n < 20
	if u > 0 && l > 0 && (n*2 >= tokens*7 || short && n >= tokens*3) {
		return false // read as words: 3.5 bytes a token or more, 3 in a short run (random base62 has about 2.2)
	}
	if n < minLen || d == n || short && d < 2 {
		return false
	}
	if camelCase(run) || inWords(run) {
		return false
	}
	if u > 0 && l > 0 {
		return changes*3 >= n-1
	}
	if short {
		return d*8 >= n && changes*3 >= n-1 // (chacha20poly1305 changes 3 times in 16)
	}
	// One case: digits spread among the letters (random base36 has one
	// byte in four a digit), or a long run with a digit whose letters have
	// few vowels (random letters have one in five; words two in five).
	return d*8 >= n && changes*5 >= n-1 || n >= 24 && d > 0 && vowels*10 < (u+l)*3 && u == 0
}

// keyedRun reports whether the run that begins at in[rs] is the value of
// a key written as code or configuration: after '=', after ':' right
// behind a key or a closing quote (name:…, "name": …), or after ": "
// behind a key in code style (snake_case, kebab-case, dotted, camelCase:
// RequestID: …). A word of prose before ": " (error: …, rejected: …) is
// no key.
func keyedRun(in string, rs, lo int) bool {
	p := rs
	if p > lo && (in[p-1] == '"' || in[p-1] == '\'' || in[p-1] == '`') {
		p--
	}
	sp := p
	for p > lo && sp-p < 4 && isBlank(in[p-1]) {
		p--
	}
	if p == lo {
		return false
	}
	switch in[p-1] {
	case '=':
		return true
	case ':':
		if p-1 == lo {
			return false
		}
		k := in[p-2]
		switch {
		case k == '"' || k == '\'' || k == ']':
			return true
		case chars[k]&cKey == 0:
			return false
		case p == sp:
			return true // name:value
		}
		ks := p - 1
		for ks > lo && p-1-ks < maxKey && chars[in[ks-1]]&cKey != 0 {
			ks--
		}
		return codeKey(in[ks : p-1])
	}
	return false
}

// codeKey reports whether a key is written as code rather than as a word
// of prose: with '_', '-' or '.' inside, or a capital after a small
// letter (camelCase, RequestID).
func codeKey(key string) bool {
	for k := 0; k < len(key); k++ {
		switch c := key[k]; {
		case c == '_' || c == '-' || c == '.':
			return k > 0
		case isUpper(c) && k > 0 && isLower(key[k-1]):
			return true
		}
	}
	return false
}

// labelled reports whether a run begins with a digest's label and '-' or
// '_' (sha512-…, as lock files write integrity).
func labelled(run string) bool {
	k := 0
	for k < len(run) && k < 12 && chars[run[k]]&cAlnum != 0 {
		k++
	}
	if k == len(run) || run[k] != '-' && run[k] != '_' {
		return false
	}
	return digestLabel(run[:k])
}

// maxBlockLook bounds how far back inPublicBlock looks for the line that
// opens a PEM or PGP block: a block of 4 KiB holds a 4,096-bit key's
// certificate. A run at the start of each line of a long message may
// look back that far once, so the work stays linear.
const maxBlockLook = 4 << 10

// inPublicBlock reports whether the run at in[rs], at the start of a line
// (after its indentation) as a block's lines are, is inside a PEM or PGP block that holds no
// secret: the last "-----BEGIN " line before it, within maxBlockLook
// bytes and not before lo, opens a certificate, a public key, a signature
// or an encrypted message, and no "-----END " came after it.
func inPublicBlock(in string, lo, rs int, blk *blockCache) bool {
	b := rs
	for b > lo && rs-b < 64 && isBlank(in[b-1]) {
		b-- // an indented block (YAML's enc: |)
	}
	if b == lo || in[b-1] != '\n' && !(b-lo >= 2 && in[b-2] == '\\' && in[b-1] == 'n') {
		return false
	}
	// The answer at the last line asked stands while no marker line
	// ("-----…") came since: each line of a block is looked at once.
	if blk.valid && blk.at >= lo && blk.at <= rs && !strings.Contains(in[blk.at:rs], "-----") {
		blk.at = rs
		return blk.public
	}
	blk.valid, blk.at = true, rs
	blk.public = publicBlockAt(in, lo, rs)
	return blk.public
}

// A blockCache keeps inPublicBlock's last answer within one scan.
type blockCache struct {
	valid, public bool
	at            int
}

// publicBlockAt is inPublicBlock's look back from in[rs].
func publicBlockAt(in string, lo, rs int) bool {
	look := in[max(lo, rs-maxBlockLook):rs]
	b := strings.LastIndex(look, "-----BEGIN ")
	if b < 0 || strings.Contains(look[b:], "-----END ") {
		return false
	}
	label := look[b+len("-----BEGIN "):]
	if e := strings.Index(label, "-----"); e >= 0 {
		label = label[:e]
	}
	return !strings.Contains(label, "PRIVATE") && !strings.Contains(label, "SECRET") &&
		(strings.Contains(label, "PUBLIC") || strings.Contains(label, "CERTIFICATE") || strings.Contains(label, "SIGNATURE") ||
			strings.Contains(label, "MESSAGE")) // ciphertext: opaque, no secret
}

// inWords reports whether a run is written in the words code is written
// in: split as a name is read (a capital and small letters, capitals,
// small letters), two of its parts or more are words of Go's own
// identifiers and comments (codeWords) and cover two in five of its
// letters or more (LoadMaskedInt64x2, AESInvMixColumnsUint32x4,
// chacha20poly1305). A random run seldom has one such part of three
// letters, and almost never two.
func inWords(run string) bool {
	letters, covered, parts := 0, 0, 0
	for i := 0; i < len(run); {
		c := run[i]
		if !isLetter(c) {
			i++
			continue
		}
		j := i + 1
		switch {
		case isUpper(c) && j < len(run) && isLower(run[j]):
			for j < len(run) && isLower(run[j]) {
				j++
			}
		case isUpper(c):
			for j < len(run) && isUpper(run[j]) && !(j+1 < len(run) && isLower(run[j+1])) {
				j++
			}
		default:
			for j < len(run) && isLower(run[j]) {
				j++
			}
		}
		letters += j - i
		if j-i >= 3 && isCodeWord(run[i:j]) {
			covered += j - i
			parts++
		}
		i = j
	}
	return parts >= 2 && covered*5 >= letters*2
}

// isCodeWord reports whether w, folded to lower case, is one of codeWords.
func isCodeWord(w string) bool {
	if len(w) > 12 {
		return false
	}
	var buf [12]byte
	for k := 0; k < len(w); k++ {
		buf[k] = w[k] | 0x20
	}
	low := buf[:len(w)]
	lo, hi := 0, len(codeWords)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if codeWords[m] < string(low) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo < len(codeWords) && codeWords[lo] == string(low)
}

// runClass tells the bytes of a run apart at a glance (matchRandomRun):
// runByte for the bytes of base64 and base64url, and for letters 1 a
// small hexadecimal one, 2 a capital one, 4 another.
var runClass = func() (t [256]uint8) {
	for c := range t {
		if chars[c]&(cB64URL|cB64) != 0 {
			t[c] = runByte
		}
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] |= 4
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] |= 4
	}
	for _, c := range "abcdef" {
		t[c] = runByte | 1
	}
	for _, c := range "ABCDEF" {
		t[c] = runByte | 2
	}
	return t
}()

const runByte = 0x80
