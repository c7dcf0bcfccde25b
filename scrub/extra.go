package scrub

import (
	"cmp"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
)

// appendExtras appends the matches of the extra patterns to dst, which
// holds the built-in findings, and returns the findings sorted with
// overlapping ones merged.
func (s *Scrubber) appendExtras(dst []hit, in string) []hit {
	n := len(dst)
	for _, x := range s.extras {
		if !s.on[x.fam] || x.prefix != "" && !strings.Contains(in, x.prefix) {
			continue
		}
		for _, loc := range x.re.FindAllStringIndex(in, -1) {
			if loc[0] < loc[1] && !s.allowed(in[loc[0]:loc[1]]) {
				dst = append(dst, hit{loc[0], loc[1], x.fam})
			}
		}
	}
	if len(dst) == n {
		return dst
	}
	// Earlier start first; at the same start the longer; at the same span
	// the built-in family, appended first.
	slices.SortStableFunc(dst, func(a, b hit) int {
		return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(b.end, a.end))
	})
	out := dst[:1]
	for _, h := range dst[1:] {
		last := &out[len(out)-1]
		if h.start < last.end {
			last.end = max(last.end, h.end)
			continue
		}
		out = append(out, h)
	}
	return out
}

// literalPrefix returns a literal that every match of re starts with, or
// "" if there is none. Unlike re.LiteralPrefix it looks past a leading \b,
// ^ or group, as in `\b(corp_[a-z0-9]{32})\b`.
func literalPrefix(re *regexp.Regexp) string {
	if p, _ := re.LiteralPrefix(); p != "" {
		return p
	}
	t, err := syntax.Parse(re.String(), syntax.Perl)
	if err != nil {
		return ""
	}
	return leadingLiteral(t.Simplify())
}

func leadingLiteral(t *syntax.Regexp) string {
	switch t.Op {
	case syntax.OpLiteral:
		if t.Flags&syntax.FoldCase != 0 {
			return ""
		}
		return string(t.Rune)
	case syntax.OpCapture:
		return leadingLiteral(t.Sub[0])
	case syntax.OpConcat:
		for _, sub := range t.Sub {
			switch sub.Op {
			case syntax.OpWordBoundary, syntax.OpNoWordBoundary, syntax.OpBeginLine,
				syntax.OpBeginText, syntax.OpEmptyMatch:
				continue
			}
			return leadingLiteral(sub)
		}
	}
	return ""
}
