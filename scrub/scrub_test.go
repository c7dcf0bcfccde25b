package scrub

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestCases(t *testing.T) {
	for _, c := range cases {
		want := c.want
		if want == "" {
			want = c.in
		}
		if got := String(c.in); got != want {
			t.Errorf("%s: String(%q)\n got %q\nwant %q", c.family, c.in, got, want)
		}
	}
}

// TestCoverage checks that every built-in family has at least three
// positive and two negative cases.
func TestCoverage(t *testing.T) {
	npos, nneg := map[string]int{}, map[string]int{}
	for _, c := range cases {
		if !slices.Contains(Families(), c.family) {
			t.Errorf("case %q names unknown family %q", c.in, c.family)
		}
		if c.want == "" || c.near {
			nneg[c.family]++
			if c.near && strings.Contains(c.want, r(c.family)) {
				t.Errorf("near miss %q produces %s", c.in, r(c.family))
			}
		} else {
			npos[c.family]++
			if !strings.Contains(c.want, r(c.family)) {
				t.Errorf("positive case %q does not produce %s", c.in, r(c.family))
			}
		}
	}
	for _, f := range Families() {
		if npos[f] < 3 || nneg[f] < 2 {
			t.Errorf("family %s: %d positive and %d negative cases, want 3 and 2", f, npos[f], nneg[f])
		}
	}
}

func TestClean(t *testing.T) {
	for _, in := range cleanCases {
		if got := String(in); got != in {
			t.Errorf("String(%q) = %q, want it unchanged", in, got)
		}
	}
}

func TestIdempotent(t *testing.T) {
	ins := slices.Clone(cleanCases)
	for _, c := range cases {
		ins = append(ins, c.in)
	}
	ins = append(ins, strings.Join(ins, " "), strings.Join(ins, "\n"), strings.Join(ins, ""))
	keyed := mustNew(t, WithKeyedHash([]byte("k")))
	for _, in := range ins {
		for _, s := range []*Scrubber{Default(), keyed} {
			once := s.String(in)
			if twice := s.String(once); twice != once {
				t.Errorf("not idempotent on %q:\n once %q\ntwice %q", in, once, twice)
			}
		}
	}
}

func TestFamilies(t *testing.T) {
	fs := Families()
	if !slices.IsSorted(fs) || len(fs) != int(numFamilies) {
		t.Fatalf("Families() = %v, want %d sorted names", fs, numFamilies)
	}
	for _, f := range fs {
		if !validFamilyName(f) {
			t.Errorf("family name %q is not snake_case", f)
		}
	}
	fs[0] = "changed"
	if Families()[0] == "changed" {
		t.Error("Families returns shared storage")
	}
}

func TestFind(t *testing.T) {
	in := "mail bob@example.com from 10.1.2.3 with password=hunter2 and " + tGHP
	got := Default().Find(in)
	want := []Match{
		{5, 20, "email"},
		{26, 34, "ip"},
		{49, 56, "password"},
		{61, 61 + len(tGHP), "github_token"},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("Find = %v, want %v", got, want)
	}
	for _, m := range got {
		if m.Start < 0 || m.End > len(in) || m.Start >= m.End {
			t.Errorf("bad match %v", m)
		}
	}
	if ms := Default().Find("nothing to see here"); ms != nil {
		t.Errorf("Find on clean input = %v, want nil", ms)
	}
}

func TestFindSortedAndDisjoint(t *testing.T) {
	for _, c := range cases {
		ms := Default().Find(c.in)
		for k := range ms {
			if ms[k].Start >= ms[k].End || k > 0 && ms[k].Start < ms[k-1].End {
				t.Errorf("Find(%q) = %v: not sorted and disjoint", c.in, ms)
			}
		}
	}
}

func TestCleanReturnsSameString(t *testing.T) {
	in := strings.Clone(clean256)
	if out := String(in); unsafe.StringData(out) != unsafe.StringData(in) {
		t.Error("String returned a copy of clean input")
	}
}

func TestCleanAllocs(t *testing.T) {
	in := clean256
	if len(in) != 256 {
		t.Fatalf("clean256 is %d bytes", len(in))
	}
	if got := String(in); got != in {
		t.Fatalf("clean256 changed: %q", got)
	}
	if n := testing.AllocsPerRun(100, func() { String(in) }); n != 0 {
		t.Errorf("String(clean 256 B) allocates %v times, want 0", n)
	}
}

// A clean message with escapes is matched in its decoded view, from a
// pooled buffer: it comes back as is, without allocating either.
func TestEscapedCleanAllocs(t *testing.T) {
	in := escaped256
	if len(in) != 256 || firstEscape(in) < 0 {
		t.Fatalf("escaped256 is %d bytes, first escape at %d", len(in), firstEscape(in))
	}
	if got := String(in); got != in {
		t.Fatalf("escaped256 changed: %q", got)
	}
	if out := String(in); unsafe.StringData(out) != unsafe.StringData(in) {
		t.Error("String returned a copy of clean input")
	}
	String(in) // fill the pool
	if n := testing.AllocsPerRun(100, func() { String(in) }); n != 0 && !raceEnabled {
		t.Errorf("String(escaped clean 256 B) allocates %v times, want 0", n)
	}
}

func TestDirtyAllocs(t *testing.T) {
	in := "password=hunter2 from 10.0.0.1 " + tGHP
	// One allocation: the strings.Builder buffer, sized once.
	if n := testing.AllocsPerRun(100, func() { String(in) }); n != 1 {
		t.Errorf("String(dirty) allocates %v times, want 1", n)
	}
}

func TestWithoutFamilies(t *testing.T) {
	s := mustNew(t, WithoutFamilies("email", "ip"))
	in := "bob@example.com at 10.0.0.1 with " + tGHP
	want := "bob@example.com at 10.0.0.1 with " + r("github_token")
	if got := s.String(in); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	// A disabled vendor family falls back to the key's family.
	s = mustNew(t, WithoutFamilies("github_token"))
	if got, want := s.String("token="+tGHP), "token="+r("secret"); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	// Alone, it is a random run: high_entropy finds it, unless that is off too.
	if got, want := s.String(tGHP), r("high_entropy"); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	s = mustNew(t, WithoutFamilies("github_token", "high_entropy"))
	if got, want := s.String(tGHP), tGHP; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestWithOnlyFamilies(t *testing.T) {
	s := mustNew(t, WithOnlyFamilies("email"))
	in := "bob@example.com at 10.0.0.1 with " + tGHP
	want := r("email") + " at 10.0.0.1 with " + tGHP
	if got := s.String(in); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	s = mustNew(t, WithOnlyFamilies("email", "ip"), WithoutFamilies("ip"))
	if got := s.String(in); got != want {
		t.Errorf("only+without: got %q, want %q", got, want)
	}
}

// mustNew returns New(opts...), failing the test on an error.
func mustNew(t testing.TB, opts ...Option) *Scrubber {
	t.Helper()
	s, err := New(opts...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s
}

// A bad option is an error of New, never a panic, and no Scrubber is made.
func TestNewBadOptions(t *testing.T) {
	for name, opt := range map[string]Option{
		"without": WithoutFamilies("emial"),
		"only":    WithOnlyFamilies("nope"),
		"pattern": WithPattern("Bad-Name", regexp.MustCompile(`x`)),
		"nil re":  WithPattern("corp", nil),
	} {
		s, err := New(WithAllow("x"), opt)
		if err == nil || s != nil {
			t.Errorf("%s: New = %v, %v; want nil and an error", name, s, err)
			continue
		}
		if !strings.HasPrefix(err.Error(), "scrub: ") {
			t.Errorf("%s: error %q does not say it is scrub's", name, err)
		}
	}
	if s, err := New(nil, WithoutFamilies("ip"), nil); err != nil || s.String("10.0.0.1") != "10.0.0.1" {
		t.Errorf("nil options: New = %v, %v; want them skipped", s, err)
	}
}

func TestWithPattern(t *testing.T) {
	s := mustNew(t, WithPattern("corp_token", regexp.MustCompile(`\bcorp_[a-z0-9]{12}\b`)))
	in := "use corp_abcdef123456 and " + tGHP + ", not corp_short"
	want := "use " + r("corp_token") + " and " + r("github_token") + ", not corp_short"
	if got := s.String(in); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if x := s.extras[0]; x.prefix != "corp_" {
		t.Errorf("literal prefix = %q, want corp_", x.prefix)
	}
	ms := s.Find(in)
	if len(ms) != 2 || ms[0] != (Match{4, 21, "corp_token"}) {
		t.Errorf("Find = %v", ms)
	}
	// Clean input still costs no allocation when the literal is absent.
	if n := testing.AllocsPerRun(100, func() { s.String(clean256) }); n != 0 {
		t.Errorf("clean input with an extra pattern allocates %v times", n)
	}

	// An extra pattern may reuse a built-in family; overlaps merge.
	s = mustNew(t, WithPattern("secret", regexp.MustCompile(`(?i)internal-[0-9]+`)))
	if got, want := s.String("id INTERNAL-42 ok"), "id "+r("secret")+" ok"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	s = mustNew(t, WithPattern("wide", regexp.MustCompile(`mail [a-z]+@`)))
	if got, want := s.String("mail bob@example.com"), r("wide"); got != want {
		t.Errorf("overlap: got %q, want %q", got, want)
	}
	// Disabling the family disables the pattern.
	s = mustNew(t, WithPattern("corp_token", regexp.MustCompile(`corp_[a-z0-9]{12}`)), WithoutFamilies("corp_token"))
	if got := s.String("corp_abcdef123456"); got != "corp_abcdef123456" {
		t.Errorf("disabled pattern still redacts: %q", got)
	}
}

func TestLiteralPrefix(t *testing.T) {
	for re, want := range map[string]string{
		`corp_[a-z]+`:         "corp_",
		`\bcorp_[a-z]+\b`:     "corp_",
		`^(tok-[0-9]+)`:       "tok-",
		`(?i)corp_[a-z]+`:     "",
		`(a|b)c`:              "",
		`[a-z]+_key`:          "",
		`\b(?:xyz)[0-9]{4}\b`: "xyz",
	} {
		if got := literalPrefix(regexp.MustCompile(re)); got != want {
			t.Errorf("literalPrefix(%q) = %q, want %q", re, got, want)
		}
	}
}

func TestWithAllow(t *testing.T) {
	s := mustNew(t, WithAllow("test@example.com", "10.0.0.1"))
	in := "test@example.com and bob@example.com via 10.0.0.1 and 10.0.0.2; password=test@example.com"
	want := "test@example.com and " + r("email") + " via 10.0.0.1 and " + r("ip") + "; password=test@example.com"
	if got := s.String(in); got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

func TestWithKeyedHash(t *testing.T) {
	a := mustNew(t, WithKeyedHash([]byte("key one")))
	b := mustNew(t, WithKeyedHash([]byte("key two")))
	in := "bob@example.com wrote to alice@example.com, cc bob@example.com; token=" + tGHP
	got := a.String(in)
	re := regexp.MustCompile(`\[REDACTED:email:([0-9a-f]{8})\]`)
	ids := re.FindAllStringSubmatch(got, -1)
	if len(ids) != 3 {
		t.Fatalf("got %q: want three keyed email placeholders", got)
	}
	if ids[0][1] != ids[2][1] {
		t.Errorf("same value, different placeholders: %q", got)
	}
	if ids[0][1] == ids[1][1] {
		t.Errorf("different values, same placeholder: %q", got)
	}
	if !strings.HasSuffix(got, "token="+r("github_token")) {
		t.Errorf("secret got a keyed placeholder: %q", got)
	}
	if other := b.String(in); other == got {
		t.Errorf("different keys give the same output %q", got)
	}
	if again := a.String(in); again != got {
		t.Errorf("not deterministic: %q vs %q", got, again)
	}
	for _, in := range []string{"4111 1111 1111 1111", "GB82 WEST 1234 5698 7654 32", "+1 415 555 2671", "10.0.0.1",
		"123e4567-e89b-12d3-a456-426614174000", "/home/alice/x"} {
		if got := a.String(in); !regexp.MustCompile(`\[REDACTED:[a-z_]+:[0-9a-f]{8}\]`).MatchString(got) {
			t.Errorf("identifier %q not keyed: %q", in, got)
		}
	}
}

func TestPlaceholdersUntouched(t *testing.T) {
	for _, f := range Families() {
		for _, in := range []string{r(f), "[REDACTED:" + f + ":0a1b2c3d]", "x=" + r(f), `"k": "` + r(f) + `"`} {
			if got := String(in); got != in {
				t.Errorf("String(%q) = %q", in, got)
			}
		}
	}
}
