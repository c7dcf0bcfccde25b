package schema

import (
	"encoding/base64"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/toolmw/toolmw/internal/jsonarg"
)

// gen writes random JSON documents for a field model: mostly what the
// model accepts, with mutations (wrong types, nulls, bounds, missing,
// extra and duplicate keys, bad UTF-8, bad dates …) at a chosen rate, so
// both sides of every rule get exercised.
type gen struct {
	r      *rand.Rand
	b      strings.Builder
	mut    float64 // chance that one value is mutated
	strict bool    // write every optional field (as a value or null) unless a mutation drops it
	// omitted records that an optional field was left out: the OpenAI
	// strict schema requires every property, the decoder does not.
	omitted bool
	depth   int
}

func (g *gen) doc(root *jsonarg.Node) string {
	g.b.Reset()
	g.omitted = false
	g.depth = 0
	switch g.r.IntN(200) {
	case 0:
		g.omitted = hasOptional(root)
		return ""
	case 1:
		return "null"
	case 2:
		return "[]"
	}
	g.ws()
	g.value(root, nil)
	g.ws()
	out := g.b.String()
	switch g.r.IntN(150) {
	case 0:
		return out + ` {}` // trailing data
	case 1:
		if len(out) > 1 {
			cut := out[:g.r.IntN(len(out))] // truncated
			if strings.TrimSpace(cut) == "" {
				g.omitted = hasOptional(root)
			}
			return cut
		}
	case 2:
		return out + "x"
	}
	return out
}

func (g *gen) ws() {
	if g.r.IntN(10) == 0 {
		g.b.WriteString([]string{" ", "\n", "\t ", "\r\n"}[g.r.IntN(4)])
	}
}

func (g *gen) mutate() bool { return g.r.Float64() < g.mut }

// junk writes a value of some other kind.
func (g *gen) junk(n *jsonarg.Node) {
	j := []string{`"str"`, `12`, `-3.5`, `true`, `false`, `[]`, `{}`, `[1,"a"]`, `{"k":1}`, `""`, `0`, `1e999`, `null`}[g.r.IntN(13)]
	for n.Kind == jsonarg.Ptr {
		n = n.Elem
	}
	if j[0] == '{' && n.Kind == jsonarg.Struct && hasOptional(n) {
		g.omitted = true // an object that leaves optional fields out
	}
	g.b.WriteString(j)
}

func (g *gen) value(n *jsonarg.Node, enum []any) {
	if g.mutate() {
		switch g.r.IntN(3) {
		case 0:
			g.b.WriteString("null")
		default:
			g.junk(n)
		}
		return
	}
	switch n.Kind {
	case jsonarg.Any:
		g.anyValue(2)
	case jsonarg.Bool:
		if enum != nil && !g.mutate() {
			g.b.WriteString(strconv.FormatBool(enum[g.r.IntN(len(enum))].(bool)))
			return
		}
		g.b.WriteString([]string{"true", "false"}[g.r.IntN(2)])
	case jsonarg.Int, jsonarg.Uint:
		g.integer(n, enum)
	case jsonarg.Float:
		g.float(n)
	case jsonarg.String:
		if enum != nil && !g.mutate() {
			g.b.WriteString(strconv.Quote(enum[g.r.IntN(len(enum))].(string)))
			return
		}
		if enum != nil && g.r.IntN(2) == 0 {
			g.b.WriteString(strconv.Quote(enum[g.r.IntN(len(enum))].(string) + "x"))
			return
		}
		g.str()
	case jsonarg.Bytes:
		g.bytes()
	case jsonarg.Slice:
		n2 := g.r.IntN(4)
		if g.depth > 4 {
			n2 = 0
		}
		g.array(n.Elem, enum, n2)
	case jsonarg.Array:
		l := n.Len
		if g.mutate() {
			l += g.r.IntN(3) - 1
			l = max(l, 0)
		}
		g.array(n.Elem, enum, l)
	case jsonarg.Map:
		g.mapValue(n)
	case jsonarg.Struct:
		g.structValue(n)
	case jsonarg.Custom:
		if n.Time {
			g.dateTime()
			return
		}
		g.str()
	case jsonarg.Never:
		g.junk(n)
	case jsonarg.Ptr:
		if g.r.IntN(5) == 0 || g.depth > 4 {
			g.b.WriteString("null")
			return
		}
		g.value(n.Elem, enum)
	}
}

func (g *gen) array(elem *jsonarg.Node, enum []any, count int) {
	g.depth++
	defer func() { g.depth-- }()
	g.b.WriteByte('[')
	for i := range count {
		if i > 0 {
			g.b.WriteByte(',')
		}
		g.ws()
		g.value(elem, enum)
	}
	g.b.WriteByte(']')
}

func (g *gen) mapValue(n *jsonarg.Node) {
	g.depth++
	defer func() { g.depth-- }()
	count := g.r.IntN(4)
	if g.depth > 4 {
		count = 0
	}
	var keys []string
	for range count {
		keys = append(keys, g.mapKey(n.Key))
	}
	if len(keys) > 0 && g.mutate() {
		keys = append(keys, keys[0]) // duplicate
	}
	g.b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			g.b.WriteByte(',')
		}
		g.b.WriteString(k)
		g.b.WriteByte(':')
		g.value(n.Elem, nil)
	}
	g.b.WriteByte('}')
}

// mapKey returns a quoted key.
func (g *gen) mapKey(k *jsonarg.Node) string {
	switch k.Kind {
	case jsonarg.Int, jsonarg.Uint:
		if g.mutate() {
			return `"` + []string{"01", "+1", "-0", "1.0", "x", "", " 1", "99999999999999999999", "-1", "256", "32768", "-32769", "18446744073709551616"}[g.r.IntN(13)] + `"`
		}
		lo, hi := k.IntBounds()
		switch g.r.IntN(6) {
		case 0:
			return `"` + lo + `"`
		case 1:
			return `"` + hi + `"`
		case 2:
			return `"0"`
		}
		if k.Kind == jsonarg.Uint {
			return `"` + strconv.FormatUint(g.r.Uint64N(256), 10) + `"`
		}
		return `"` + strconv.Itoa(g.r.IntN(256)-128) + `"`
	}
	if g.mutate() {
		return []string{`"a\ud800"`, "\"\xff\"", `"\u00e9"`, `"é"`}[g.r.IntN(4)]
	}
	return strconv.Quote([]string{"a", "b", "key", "x-y", "", "名前", "sk-live-KEY"}[g.r.IntN(7)])
}

func (g *gen) structValue(n *jsonarg.Node) {
	g.depth++
	defer func() { g.depth-- }()
	var members []string
	for i := range n.Fields {
		f := &n.Fields[i]
		if f.Node.Kind == jsonarg.Never {
			if g.mutate() {
				members = append(members, strconv.Quote(f.Name)+":1")
			}
			continue
		}
		present := f.Required || g.strict || g.r.IntN(3) > 0
		if g.mutate() {
			present = !present
		}
		if !present {
			if !f.Required {
				g.omitted = true
			}
			continue
		}
		outer := g.b.String()
		g.b.Reset()
		if !f.Required && g.r.IntN(4) == 0 {
			g.b.WriteString("null")
		} else {
			g.value(f.Node, f.Enum)
		}
		val := g.b.String()
		g.b.Reset()
		g.b.WriteString(outer)
		key := strconv.Quote(f.Name)
		if g.r.IntN(20) == 0 {
			key = escapeKey(f.Name)
		}
		members = append(members, key+":"+val)
		if g.mutate() {
			members = append(members, key+":"+val) // duplicate
		}
	}
	if g.mutate() {
		members = append(members, []string{`"extra":1`, `"Extra":null`, `"sk-live-SECRET":"x"`}[g.r.IntN(3)])
	}
	g.r.Shuffle(len(members), func(i, j int) { members[i], members[j] = members[j], members[i] })
	g.b.WriteByte('{')
	for i, m := range members {
		if i > 0 {
			g.b.WriteByte(',')
		}
		g.ws()
		g.b.WriteString(m)
	}
	g.b.WriteByte('}')
}

// escapeKey writes a key with its first character as a \u escape.
func escapeKey(name string) string {
	if name == "" || name[0] >= 0x80 {
		return strconv.Quote(name)
	}
	return `"\u00` + strconv.FormatInt(int64(name[0])>>4, 16) + strconv.FormatInt(int64(name[0])&15, 16) + strconv.Quote(name)[2:]
}

func (g *gen) integer(n *jsonarg.Node, enum []any) {
	if enum != nil && !g.mutate() {
		switch e := enum[g.r.IntN(len(enum))].(type) {
		case int64:
			g.b.WriteString(strconv.FormatInt(e, 10))
		case uint64:
			g.b.WriteString(strconv.FormatUint(e, 10))
		}
		if g.r.IntN(5) == 0 {
			g.b.WriteString(".0")
		}
		return
	}
	lo, hi := n.IntBounds()
	switch g.r.IntN(14) {
	case 0:
		g.b.WriteString(lo)
	case 1:
		g.b.WriteString(hi)
	case 2:
		g.b.WriteString("-0")
	case 3:
		g.b.WriteString("2.0")
	case 4:
		g.b.WriteString("1e2")
	case 5:
		g.b.WriteString("1.5")
	case 6:
		g.b.WriteString(hi + "0") // just past the bound
	case 7:
		g.b.WriteString("-" + strings.TrimPrefix(lo, "-") + "1")
	case 8:
		g.b.WriteString("2.5e1")
	case 9:
		g.b.WriteString("1E400")
	case 10:
		g.b.WriteString("-1")
	case 11:
		g.b.WriteString("12300e-2")
	default:
		g.b.WriteString(strconv.Itoa(g.r.IntN(200) - 50))
	}
}

func (g *gen) float(n *jsonarg.Node) {
	switch g.r.IntN(14) {
	case 0:
		g.b.WriteString(n.FloatBound())
	case 1:
		g.b.WriteString("-" + n.FloatBound())
	case 2:
		g.b.WriteString("3.4028235e38") // past float32's bound
	case 3:
		g.b.WriteString("1e308")
	case 4:
		g.b.WriteString("2e308")
	case 5:
		g.b.WriteString("1e-400")
	case 6:
		g.b.WriteString("1e-1000")
	case 7:
		g.b.WriteString("0.1")
	case 8:
		g.b.WriteString("-0")
	case 9:
		g.b.WriteString("3.40282356779733661637539395458142568448e38")
	case 10:
		g.b.WriteString("1" + strings.Repeat("0", 70)) // too long
	default:
		g.b.WriteString(strconv.FormatFloat(g.r.NormFloat64()*1000, 'g', -1, 64))
	}
}

func (g *gen) str() {
	switch g.r.IntN(12) {
	case 0:
		g.b.WriteString(`"\u00e9t\u00e9"`)
	case 1:
		g.b.WriteString(`"\ud83d\ude00"`)
	case 2:
		g.b.WriteString(`"lone \ud800 surrogate"`)
	case 3:
		g.b.WriteString("\"bad \xff byte\"")
	case 4:
		g.b.WriteString(`"esc \" \\ \/ \n"`)
	case 5:
		g.b.WriteString(`""`)
	default:
		g.b.WriteString(strconv.Quote([]string{"Lisbon", "jane@example.com", "sk-live-4242", "名前", "a b c"}[g.r.IntN(5)]))
	}
}

func (g *gen) bytes() {
	switch g.r.IntN(8) {
	case 0:
		g.b.WriteString(`"abc"`)
	case 1:
		g.b.WriteString(`"YR=="`)
	case 2:
		g.b.WriteString(`"aGk=\n"`)
	case 3:
		g.b.WriteString(`"a==="`)
	default:
		buf := make([]byte, g.r.IntN(7))
		for i := range buf {
			buf[i] = byte(g.r.IntN(256))
		}
		g.b.WriteString(`"` + base64.StdEncoding.EncodeToString(buf) + `"`)
	}
}

func (g *gen) dateTime() {
	g.b.WriteString([]string{
		`"2026-01-02T03:04:05Z"`, `"2026-01-02T03:04:05.123456789+01:00"`, `"2024-02-29T23:59:59-08:00"`,
		`"2026-02-30T00:00:00Z"`, `"2026-01-02t03:04:05z"`, `"2026-12-31T23:59:60Z"`, `"2026-01-02T03:04:05"`,
		`"2026-01-02 03:04:05Z"`, `"0000-01-01T00:00:00Z"`, `"2026-01-02T3:04:05Z"`, `"2026-01-02T03:04:05+24:00"`,
		`"2026-01-02T03:04:05,5Z"`, `"\u0032026-01-02T03:04:05Z"`, `1700000000`,
	}[g.r.IntN(14)])
}

func (g *gen) anyValue(depth int) {
	if depth == 0 {
		g.b.WriteString([]string{`1`, `"s"`, `true`, `null`, `-2.5e3`, `1e999`, "\"\xff\""}[g.r.IntN(7)])
		return
	}
	switch g.r.IntN(5) {
	case 0:
		g.b.WriteString(`{"k":`)
		g.anyValue(depth - 1)
		if g.mutate() {
			g.b.WriteString(`,"k":1`)
		}
		g.b.WriteString(`}`)
	case 1:
		g.b.WriteString(`[`)
		g.anyValue(depth - 1)
		g.b.WriteString(`,`)
		g.anyValue(depth - 1)
		g.b.WriteString(`]`)
	default:
		g.anyValue(0)
	}
}

// hasOptional reports whether a struct node has an optional field.
func hasOptional(n *jsonarg.Node) bool {
	for _, f := range n.Fields {
		if !f.Required && f.Node.Kind != jsonarg.Never {
			return true
		}
	}
	return false
}
