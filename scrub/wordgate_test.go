package scrub

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// checkWordGate fails t for each word of in that mayMatchWord turns away
// and matchWord would find something at, or lets through to matchBehind
// only and matchWord would find something else at: the gate in front of
// matchWord must let through every word a matcher begins at, to that
// matcher. Likewise for the scan's gate in front of matchWordAt
// (worthTrying, wordInContext). Each word is tried as
// the scanner may meet it: from its start after the previous finding or
// the text's start (lo = 0), and right after a finding that ends at it,
// inside a run of word bytes too (lo = ws).
func checkWordGate(t *testing.T, in string) {
	t.Helper()
	checkPunctGate(t, in)
	for ws := 0; ws < len(in); ws++ {
		if chars[in[ws]]&cWord == 0 {
			continue
		}
		e := skip(in, ws, cWord)
		los := []int{ws}
		if ws > 0 && chars[in[ws-1]]&cWord == 0 {
			los = append(los, 0)
		}
		for _, lo := range los {
			if !worthTrying(in, ws, e, lo) {
				// The scan calls matchWordAt only for a word that
				// worthTrying or wordInContext lets through.
				for _, first := range []bool{true, false} {
					if wordInContext(in, ws, e, lo, first) {
						continue
					}
					if h, ok := std.matchWordAt(in, ws, e, lo, first, false, &schemeLook{}); ok {
						t.Errorf("the scan skips %q (lo %d, first %v) in %q, where matchWordAt finds %s %q",
							in[ws:e], lo, first, in, familyNames[h.fam], in[h.start:h.end])
					}
				}
				continue
			}
			gate := mayMatchWord(in, ws, e, lo)
			if gate == wordAny {
				continue
			}
			h, ok := std.matchWord(in, ws, lo)
			if !ok {
				continue
			}
			if gate == wordNone {
				t.Errorf("mayMatchWord turns away %q (lo %d) in %q, where matchWord finds %s %q",
					in[ws:e], lo, in, familyNames[h.fam], in[h.start:h.end])
				continue
			}
			if b, ok := matchBehind(in, ws, lo); !ok || b != h {
				t.Errorf("mayMatchWord lets %q (lo %d) in %q through to matchBehind only, where matchWord finds %s %q",
					in[ws:e], lo, in, familyNames[h.fam], in[h.start:h.end])
			}
		}
	}
}

// wordGateContexts put a value after each byte that matchBehind and the
// prefixes of keys and schemes read before a word.
var wordGateContexts = []string{
	"%s", "error: %s (retry)", "key=%s", "GET /v1/%s", "pkg.%s", "Bearer %s", "id:%s", "x-%s", "a+%s", "~%s",
}

// wordGateMessages are the messages of every corpus the tests have: the
// package's cases and near misses, gitleaks' rule samples and bare
// values, the error corpora and the clean sets of bench/.
func wordGateMessages(t *testing.T) []string {
	var msgs []string
	for _, c := range append(append([]testCase(nil), cases...), issue13Cases...) {
		msgs = append(msgs, c.in, c.want)
	}
	for _, cs := range [][]shapeCase{shapes42, shapes43, shapes44} {
		for _, c := range cs {
			msgs = append(msgs, c.in, c.want)
		}
	}
	for _, s := range assignmentShapes {
		msgs = append(msgs, s.tpl)
	}
	for _, v := range vendorValues(20) {
		msgs = append(msgs, v.value)
	}
	for _, v := range vendorNear {
		msgs = append(msgs, v.in)
	}
	for _, c := range canaries {
		for _, ev := range evasions {
			msgs = append(msgs, ev(c))
		}
	}
	for _, p := range corpus() {
		msgs = append(msgs, p.msg, p.value)
	}
	msgs = append(msgs, cleanCases...)
	msgs = append(msgs, cleanCorpus...)
	msgs = append(msgs, nearMisses31...)
	msgs = append(msgs, nearMisses42...)
	msgs = append(msgs, nearMisses43...)
	msgs = append(msgs, idempotent31...)
	for _, f := range []string{"stdlib_errors.txt", "sdk_errors.txt"} {
		msgs = append(msgs, readQuoted(t, filepath.Join("testdata", f))...)
	}
	for _, name := range []string{"tps.json", "bare.json", "fps.json"} {
		for _, vs := range readCorpus(t, name) {
			msgs = append(msgs, vs...)
		}
	}
	b, err := os.ReadFile(filepath.Join("..", "bench", "testdata", "scrubvs", "clean.json"))
	if err != nil {
		t.Fatal(err)
	}
	var clean map[string][]string
	if err := json.Unmarshal(b, &clean); err != nil {
		t.Fatal(err)
	}
	for _, vs := range clean {
		msgs = append(msgs, vs...)
	}
	return msgs
}

// TestWordGate checks mayMatchWord against matchWord on every corpus, in
// contexts, and on every prefix the scanner knows followed by bodies of
// each alphabet broken by the bytes that end a word.
func TestWordGate(t *testing.T) {
	if testing.Short() {
		t.Skip("reads every corpus")
	}
	for _, m := range wordGateMessages(t) {
		for _, ctx := range wordGateContexts {
			checkWordGate(t, fmt.Sprintf(ctx, m))
		}
	}
	var prefixes []string
	for _, v := range vendors {
		prefixes = append(prefixes, v.prefix)
	}
	prefixes = append(prefixes, tokenPrefixes[:]...)
	prefixes = append(prefixes, awsPrefixes[:]...)
	prefixes = append(prefixes, "Bearer ", "BASIC ", "bAsIc ")
	g := newGen(31)
	for _, p := range prefixes {
		for _, alpha := range []string{gHex, gAlnum, gB64URL, gB64, gUpDig, gLowDig} {
			for _, n := range []int{8, 16, 24, 32, 40, 64, 100} {
				body := []byte(g.str(alpha, n))
				for _, sep := range []byte("-._~+/=:") {
					if g.r.IntN(2) == 0 {
						body[g.r.IntN(len(body))] = sep
					}
				}
				for _, ctx := range wordGateContexts {
					checkWordGate(t, fmt.Sprintf(ctx, p+string(body)))
				}
			}
		}
	}
}

// FuzzWordGate checks mayMatchWord against matchWord on any text.
func FuzzWordGate(f *testing.F) {
	for _, in := range []string{
		"v1.0-" + strings.Repeat("ab12", 43), "discord.com/api/webhooks/12345/abc", "sc_abcde.abcd.acc_x.y",
		"MTIzNDU2Nzg5MDEyMzQ1Njc4OTAx.GAbcde.abcdefghijklmnopqrstuvwxyz0123", "sha256~abc", "pat.abc.def",
		"deadbeef-dead-beef-dead-beefdeadbeef", "GB82WEST12345698765432", "1//0abc", "x:AAbcdef",
	} {
		f.Add(in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		checkWordGate(t, in)
	})
}

// TestLastIndex checks lastIndex against strings.LastIndex.
func TestLastIndex(t *testing.T) {
	g := newGen(45)
	pieces := []string{"-----BEGIN ", "\n---", "-", "\n", "x", "BEGIN ", "----"}
	for k := 0; k < 20000; k++ {
		var b strings.Builder
		for n := g.r.IntN(8); n > 0; n-- {
			b.WriteString(pieces[g.r.IntN(len(pieces))])
		}
		s := b.String()
		for _, sub := range []string{"-----BEGIN ", "\n---", "--", "-"} {
			if got, want := lastIndex(s, sub), strings.LastIndex(s, sub); got != want {
				t.Fatalf("lastIndex(%q, %q) = %d, want %d", s, sub, got, want)
			}
		}
	}
}

// TestAWSPrefixShape checks the shape isAWSPrefix rules words out by.
func TestAWSPrefixShape(t *testing.T) {
	for _, p := range awsPrefixes {
		if len(p) != 4 || p[0] != 'A' || p[3] != 'A' || !isAWSPrefix(p) {
			t.Errorf("AWS prefix %q is not A??A, or isAWSPrefix refuses it", p)
		}
	}
}
