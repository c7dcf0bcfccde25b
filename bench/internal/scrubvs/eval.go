package scrubvs

import (
	"fmt"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/zricethezav/gitleaks/v8/detect"
)

// Tally counts one peer on one set: of N messages, Found secrets removed (Leak), StrictFound by
// LeakStrict; on a clean set, Changed messages (toolmw: output differs; gitleaks: any finding).
type Tally struct {
	N, Found, StrictFound, Changed int
}

// Example is one message a peer got wrong.
type Example struct {
	Rule, Msg, Secret, Out, Piece string
}

// RuleTally counts the messages of one rule in one set.
type RuleTally struct {
	N, ToolmwMissed, GitleaksMissed int
	ToolmwExample                   *Example
}

// SetResult is the evaluation of one set.
type SetResult struct {
	Set              Set
	Toolmw, Gitleaks Tally
	Rules            map[string]*RuleTally
	ToolmwMisses     []Example // secret sets: every message whose secret survived toolmw
	ToolmwFPs        []Example // clean sets: the messages toolmw changed
	GitleaksFPs      []Example // clean sets: the messages gitleaks reported, Out = rule ids
}

// Evaluate runs both peers on every message of every set.
func Evaluate(sets []Set) ([]SetResult, error) {
	d, err := Gitleaks()
	if err != nil {
		return nil, err
	}
	var out []SetResult
	for _, s := range sets {
		out = append(out, evaluate(d, s))
	}
	return out, nil
}

func evaluate(d *detect.Detector, s Set) SetResult {
	res := SetResult{Set: s, Rules: map[string]*RuleTally{}}
	for _, m := range s.Samples {
		tm := Toolmw(m.Msg)
		findings := GitleaksDetect(d, m.Msg)
		res.Toolmw.N++
		res.Gitleaks.N++
		if s.Clean {
			if tm != m.Msg {
				res.Toolmw.Changed++
				res.ToolmwFPs = append(res.ToolmwFPs, Example{Rule: m.Rule, Msg: m.Msg, Out: tm})
			}
			if len(findings) > 0 {
				res.Gitleaks.Changed++
				var ids []string
				for _, f := range findings {
					ids = append(ids, f.RuleID)
				}
				res.GitleaksFPs = append(res.GitleaksFPs, Example{Rule: m.Rule, Msg: m.Msg, Out: strings.Join(ids, ", ")})
			}
			continue
		}
		rest := strings.Replace(m.Msg, m.Secret, "", 1)
		gm := GitleaksMask(m.Msg, findings)
		rt := res.Rules[m.Rule]
		if rt == nil {
			rt = &RuleTally{}
			res.Rules[m.Rule] = rt
		}
		rt.N++
		if p := Leak(tm, rest, m.Secret); p == "" {
			res.Toolmw.Found++
		} else {
			rt.ToolmwMissed++
			ex := Example{Rule: m.Rule, Msg: m.Msg, Secret: m.Secret, Out: tm, Piece: p}
			res.ToolmwMisses = append(res.ToolmwMisses, ex)
			if rt.ToolmwExample == nil {
				rt.ToolmwExample = &ex
			}
		}
		if LeakStrict(tm, rest, m.Secret) == "" {
			res.Toolmw.StrictFound++
		}
		if Leak(gm, rest, m.Secret) == "" {
			res.Gitleaks.Found++
		} else {
			rt.GitleaksMissed++
		}
		if LeakStrict(gm, rest, m.Secret) == "" {
			res.Gitleaks.StrictFound++
		}
	}
	return res
}

// Speed is one peer's benchmark on one set: per message.
type Speed struct {
	NsPerMsg, AllocsPerMsg, BytesPerMsg float64
	// PerToolmw is, when the speeds were measured in rounds, the median
	// over the rounds of this peer's ns ÷ toolmw's in the same round; 0
	// otherwise.
	PerToolmw float64
}

// SpeedSets are the sets the speed is measured on: every set, and the clean 256-byte message of
// bench's BenchmarkScrub.
func SpeedSets(sets []Set) []Set {
	out := append([]Set(nil), sets...)
	return append(out, Set{Name: "clean_256B", Desc: "the clean 256-byte message of BenchmarkScrub", Clean: true,
		Samples: []Sample{{Rule: "clean", Msg: Clean256}}})
}

// Clean256 is bench's clean256 (bench/scrub_test.go checks they are equal): a typical error
// message without a secret, 256 bytes.
var Clean256 = func() string {
	s := "upstream returned 503 Service Unavailable while calling the booking service " +
		"after 3 attempts; the request took 1.5s, version v1.2.3, retry budget left 4 of 10 at " +
		"2025-05-01T10:20:30Z; back off and try again later with a smaller batch of requests"
	for len(s) < 256 {
		s += " ."
	}
	return s[:256]
}()

// Sink keeps what the timed peers return, so that the compiler cannot
// drop their work.
var Sink struct {
	Text     string
	Findings int
}

// Peers are the functions the speed benchmarks time: one message per operation.
func Peers() ([]string, []func(string), error) {
	d, err := Gitleaks()
	if err != nil {
		return nil, nil, err
	}
	return []string{"toolmw", "gitleaks"}, []func(string){
		func(s string) { Sink.Text = Toolmw(s) },
		func(s string) { Sink.Findings = len(GitleaksDetect(d, s)) },
	}, nil
}

// Bench is the body of BenchmarkScrubVsGitleaks/<set>/<peer>: each operation scans every message
// of the set once, so that both peers are timed on the same messages; ns/msg and allocs/msg are
// per message.
func Bench(b *testing.B, s Set, fn func(string)) {
	b.ReportAllocs()
	total := 0
	for _, m := range s.Samples {
		total += len(m.Msg)
	}
	b.SetBytes(int64(total))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, m := range s.Samples {
			fn(m.Msg)
		}
	}
	b.StopTimer()
	runtime.ReadMemStats(&after)
	n := float64(b.N) * float64(len(s.Samples))
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/msg")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/n, "allocs/msg")
}

// prefixShape keeps a value's vendor prefix when it shows one: up to three short words, each
// ending with a separator, in the first 16 bytes.
var prefixShape = regexp.MustCompile(`^(?:[A-Za-z0-9]{1,8}[_\-.~]){1,3}`)

// Shape describes a value without writing it: its vendor prefix, then the alphabet and length
// of the rest, e.g. sntrys_⟨[+0-9=A-Z_a-z]{170}⟩.
func Shape(v string) string {
	pre := prefixShape.FindString(v)
	if len(pre) > 16 || len(pre) == len(v) {
		pre = ""
	}
	rest := v[len(pre):]
	var lowerC, upperC, digitC bool
	other := map[byte]bool{}
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		switch {
		case c >= 'a' && c <= 'z':
			lowerC = true
		case c >= 'A' && c <= 'Z':
			upperC = true
		case c >= '0' && c <= '9':
			digitC = true
		default:
			other[c] = true
		}
	}
	var cls strings.Builder
	for c := byte(0); c < 128; c++ {
		if other[c] {
			switch c {
			case '\n':
				cls.WriteString(`\n`)
			case ' ':
				cls.WriteString("␠")
			default:
				cls.WriteByte(c)
			}
		}
	}
	if digitC {
		cls.WriteString("0-9")
	}
	if upperC {
		cls.WriteString("A-Z")
	}
	if lowerC {
		cls.WriteString("a-z")
	}
	return fmt.Sprintf("%s⟨[%s]{%d}⟩", pre, cls.String(), len(rest))
}

// MaskSecret writes text with the secret replaced by its Shape, and any other surviving piece of
// it (6 bytes or more) by ⟨n bytes of the secret⟩.
func MaskSecret(text, secret string) string {
	if secret == "" {
		return text
	}
	var b strings.Builder
	for i := 0; i < len(text); {
		if strings.HasPrefix(text[i:], secret) {
			b.WriteString(Shape(secret))
			i += len(secret)
			continue
		}
		best := 0
		for j := i + 6; j <= len(text); j++ {
			if !strings.Contains(secret, text[i:j]) {
				break
			}
			best = j - i
		}
		if best >= 6 {
			fmt.Fprintf(&b, "⟨%d bytes of the secret⟩", best)
			i += best
			continue
		}
		b.WriteByte(text[i])
		i++
	}
	return b.String()
}

// MissKind sorts a secret value toolmw missed into the kinds the report
// counts on the bare corpus (see Write).
func MissKind(rule, v string) string {
	oneCaseHex, digits := v != "", v != ""
	lower, upper := false, false
	for i := 0; i < len(v); i++ {
		c := v[i]
		digits = digits && c >= '0' && c <= '9'
		isHex := c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
		oneCaseHex = oneCaseHex && isHex
		lower = lower || c >= 'a' && c <= 'f'
		upper = upper || c >= 'A' && c <= 'F'
	}
	switch {
	case digits || oneCaseHex && !(lower && upper):
		return "hexadecimal or digits"
	case rule == "jwt-base64":
		return "a part a capture group cuts out"
	case strings.HasPrefix(v, `"`) || strings.HasPrefix(v, "'") || strings.HasSuffix(v, `"`) || strings.HasSuffix(v, "'") || keyInside.MatchString(v):
		return "with its quotes or key"
	case strings.Count(v, ":") == 1 && !strings.Contains(v, "://"):
		return "a user:password or hex:hex pair"
	case len(v) < 16:
		return "shorter than 16 bytes"
	}
	return "other"
}

var keyInside = regexp.MustCompile(`^[A-Za-z_.-]+: `)
