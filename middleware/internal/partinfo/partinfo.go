// Package partinfo holds what the layers do alike with a result's parts:
// describe them to a log line, a span or an event without their content
// ([List]), and copy a result whose parts a cache keeps
// ([Clone]).
package partinfo

import (
	"strconv"

	"github.com/toolmw/toolmw"
)

// MaxListed is how many parts the layers describe of one result, to a span
// or a log line.
const MaxListed = 8

// List returns the descriptions of the first max of parts (Part.Describe),
// and, when parts has more, a last entry "+N more".
func List(parts []toolmw.Part, max int) []string {
	n := min(len(parts), max)
	out := make([]string, 0, n+1)
	for _, p := range parts[:n] {
		out = append(out, p.Describe())
	}
	if len(parts) > n {
		out = append(out, "+"+strconv.Itoa(len(parts)-n)+" more")
	}
	return out
}

// Clone returns res with its parts copied, their data and annotations too,
// so that neither the one who kept res nor the one given the copy can
// change what the other holds. A result without parts is returned as it is.
func Clone(res toolmw.Result) toolmw.Result {
	if res.Parts() == nil {
		return res
	}
	parts := make([]toolmw.Part, len(res.Parts()))
	for i, p := range res.Parts() {
		if p.Data != nil {
			p.Data = append([]byte{}, p.Data...)
		}
		if a := p.Annotations; a != nil {
			c := *a
			if a.Audience != nil {
				c.Audience = append([]string{}, a.Audience...)
			}
			if a.Priority != nil {
				pr := *a.Priority
				c.Priority = &pr
			}
			p.Annotations = &c
		}
		parts[i] = p
	}
	res = res.WithParts(parts...)
	return res
}
