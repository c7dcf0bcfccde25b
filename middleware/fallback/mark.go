package fallback

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/taxonomy"
)

// Source says where a fallback result came from.
type Source string

// The sources of a fallback result.
const (
	SourceLastGood Source = "last_good" // the tool's last good result for the same arguments
	SourceFunc     Source = "function"  // the fallback function ([WithFunc])
)

// Mark is what a fallback result is marked with: where it came from, the
// kind and code of the error it replaces, and for a last good result its
// age in whole seconds.
type Mark struct {
	Source Source
	Kind   taxonomy.Kind
	Code   string
	Age    time.Duration // SourceLastGood only: how old the result is, truncated to the second
}

// markPrefix opens the first line of a marked text result.
const markPrefix = "[toolmw fallback "

// jsonKey is the member of a marked JSON result that holds the mark.
const jsonKey = "toolmw_fallback"

// note says, in words a model reads, what the mark means.
func (m Mark) note() string {
	var why string
	switch m.Kind {
	case taxonomy.KindCircuitOpen:
		why = "The tool is unavailable right now"
	case taxonomy.KindRateLimited:
		why = "The tool is rate-limited right now"
	case taxonomy.KindTimeout:
		why = "The tool did not answer in time"
	default:
		why = "The tool failed just now"
	}
	if m.Source == SourceLastGood {
		return why + "; this is its last good result for the same arguments, " +
			strconv.FormatInt(int64(m.Age/time.Second), 10) + "s old, not a fresh one."
	}
	return why + "; this is a substitute, not the tool's result."
}

// markResult marks res as a fallback. A text result gets a first line:
//
//	[toolmw fallback source=last_good kind=circuit-open code=circuit_open age=42s] The tool is unavailable right now; …
//
// then the original content. A JSON result (res.JSON) stays one JSON
// document:
//
//	{"toolmw_fallback":{"source":"last_good","kind":"circuit-open","code":"circuit_open","age_seconds":42,"note":"…"},"result":<original>}
//
// (with "result": null when the original is empty). A result that says it
// is JSON but is not gets the text form, so no content is lost. The parts
// are kept as they are, after the marked content: a result of parts alone
// gets the mark line as its content. Kind and
// code are as taxonomy.InfoOf reports them: no error text, no arguments.
func markResult(res toolmw.Result, m Mark) toolmw.Result {
	if res.JSON {
		if marked, ok := markJSON(res, m); ok {
			return marked
		}
	}
	return markText(res, m)
}

// markJSON marks a JSON result, or reports false when its content is not
// JSON.
func markJSON(res toolmw.Result, m Mark) (toolmw.Result, bool) {
	orig := json.RawMessage(res.Content)
	if len(bytes.TrimSpace(orig)) == 0 {
		orig = nil // marshals as null
	}
	if orig == nil || json.Valid(orig) {
		b, err := json.Marshal(markedJSON{Mark: markFields{
			Source: m.Source, Kind: m.Kind, Code: m.Code, AgeSeconds: ageSeconds(m), Note: m.note(),
		}, Result: orig})
		if err == nil {
			return toolmw.Result{Content: string(b), JSON: true}.WithParts(res.Parts()...), true
		}
	}
	return toolmw.Result{}, false
}

func markText(res toolmw.Result, m Mark) toolmw.Result {
	var b strings.Builder
	b.Grow(len(markPrefix) + 200 + len(res.Content))
	b.WriteString(markPrefix)
	b.WriteString("source=")
	b.WriteString(string(m.Source))
	b.WriteString(" kind=")
	b.WriteString(string(m.Kind))
	b.WriteString(" code=")
	b.WriteString(m.Code)
	if m.Source == SourceLastGood {
		b.WriteString(" age=")
		b.WriteString(strconv.FormatInt(int64(m.Age/time.Second), 10))
		b.WriteString("s")
	}
	b.WriteString("] ")
	b.WriteString(m.note())
	b.WriteByte('\n')
	b.WriteString(res.Content)
	return toolmw.Result{Content: b.String()}.WithParts(res.Parts()...)
}

func ageSeconds(m Mark) *int64 {
	if m.Source != SourceLastGood {
		return nil
	}
	s := int64(m.Age / time.Second)
	return &s
}

type markedJSON struct {
	Mark   markFields      `json:"toolmw_fallback"`
	Result json.RawMessage `json:"result"`
}

type markFields struct {
	Source     Source        `json:"source"`
	Kind       taxonomy.Kind `json:"kind"`
	Code       string        `json:"code"`
	AgeSeconds *int64        `json:"age_seconds,omitempty"`
	Note       string        `json:"note"`
}

// Parse reads the mark of a fallback result made by this layer, and
// returns it with the original result, its parts included; ok is false
// for a result without a mark. The mark is in the content, so a tool could write one itself: a
// mark says a result is not fresh, and a program that must know a result
// is fresh should not rely on its absence alone.
// It is safe for concurrent use.
func Parse(res toolmw.Result) (m Mark, orig toolmw.Result, ok bool) {
	if res.JSON {
		return parseJSON(res)
	}
	rest, found := strings.CutPrefix(res.Content, markPrefix)
	if !found {
		return Mark{}, res, false
	}
	line, content, found := strings.Cut(rest, "\n")
	if !found {
		return Mark{}, res, false
	}
	fields, _, found := strings.Cut(line, "] ")
	if !found {
		return Mark{}, res, false
	}
	for _, f := range strings.Fields(fields) {
		name, value, _ := strings.Cut(f, "=")
		switch name {
		case "source":
			m.Source = Source(value)
		case "kind":
			m.Kind = taxonomy.Kind(value)
		case "code":
			m.Code = value
		case "age":
			s, err := strconv.ParseInt(strings.TrimSuffix(value, "s"), 10, 64)
			if err != nil || s < 0 || s > int64(1<<62/time.Second) {
				return Mark{}, res, false
			}
			m.Age = time.Duration(s) * time.Second
		}
	}
	if !m.valid() {
		return Mark{}, res, false
	}
	return m, toolmw.Result{Content: content}.WithParts(res.Parts()...), true
}

func parseJSON(res toolmw.Result) (Mark, toolmw.Result, bool) {
	if !strings.HasPrefix(res.Content, `{"`+jsonKey+`":`) {
		return Mark{}, res, false // cheap refusal of every other document
	}
	var doc struct {
		Mark   *markFields     `json:"toolmw_fallback"`
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal([]byte(res.Content), &doc); err != nil || doc.Mark == nil {
		return Mark{}, res, false
	}
	m := Mark{Source: doc.Mark.Source, Kind: doc.Mark.Kind, Code: doc.Mark.Code}
	if a := doc.Mark.AgeSeconds; a != nil {
		if *a < 0 || *a > int64(1<<62/time.Second) {
			return Mark{}, res, false
		}
		m.Age = time.Duration(*a) * time.Second
	}
	if !m.valid() {
		return Mark{}, res, false
	}
	orig := toolmw.Result{JSON: true}.WithParts(res.Parts()...)
	if len(doc.Result) > 0 && string(doc.Result) != "null" {
		orig.Content = string(doc.Result)
	}
	return m, orig, true
}

func (m Mark) valid() bool {
	return (m.Source == SourceLastGood || m.Source == SourceFunc) &&
		taxonomy.ValidKind(m.Kind) && taxonomy.ValidCode(m.Code)
}
