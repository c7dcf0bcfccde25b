package scrub

import "testing"

// Session 56 (issue 31): mayMatchWord lets a word through to matchToken by
// its first three bytes (startTriples), or by its first two when a prefix
// has two (wildPairs). Every prefix must pass, written as matchToken reads
// it: the Authorization schemes in any case. TestWordGate and
// FuzzWordGate check the gate against matchWord itself.
func TestStartTriples(t *testing.T) {
	var prefixes []string
	for _, v := range vendors {
		prefixes = append(prefixes, v.prefix)
	}
	prefixes = append(prefixes, tokenPrefixes[:]...)
	prefixes = append(prefixes, awsPrefixes[:]...)
	for _, scheme := range []string{"bearer", "basic"} {
		for k := range 1 << len(scheme) {
			b := []byte(scheme)
			for n := range b {
				if k&(1<<n) != 0 {
					b[n] &^= 0x20
				}
			}
			prefixes = append(prefixes, string(b))
		}
	}
	for _, p := range prefixes {
		in := p + "x"
		if !startPairs.at(in, 0) || !wildPairs.at(in, 0) && !startTriples.at(in, 0) {
			t.Errorf("the gate turns away the prefix %q", p)
		}
	}
	// Words that begin with a prefix's pair and not its third byte are
	// turned away (so that the gate is not always open).
	for _, w := range []string{"shelf", "gluon", "sketch", "xanadu", "double"} {
		if !startPairs.at(w, 0) {
			t.Errorf("no prefix begins with the first two bytes of %q", w)
		}
		if mayMatchWord(w+" ", 0, len(w), 0) == wordAny {
			t.Errorf("mayMatchWord lets %q through to matchWord", w)
		}
	}
}

// TestSkipBoring checks skipBoring against its definition, at every start
// in texts of boring and other bytes, long and short (the four-byte look
// and the loop after it).
func TestSkipBoring(t *testing.T) {
	g := newGen(56)
	const pool = "abc xyz,.;)$\n\t" + "A0_-:/=@%[\x80\xff"
	for n := 0; n < 20000; n++ {
		b := make([]byte, g.r.IntN(24))
		for k := range b {
			if g.r.IntN(8) == 0 {
				b[k] = byte(g.r.IntN(256))
			} else {
				b[k] = pool[g.r.IntN(len(pool))]
			}
		}
		in := string(b)
		for i := 0; i <= len(in); i++ {
			want := i
			for want < len(in) && chars[in[want]]&cBoring != 0 {
				want++
			}
			if got := skipBoring(in, i); got != want {
				t.Fatalf("skipBoring(%q, %d) = %d, want %d", in, i, got, want)
			}
		}
	}
}
