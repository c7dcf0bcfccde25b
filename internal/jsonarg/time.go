package jsonarg

import (
	"reflect"
	"time"
)

// ValidDateTime reports whether s is a date-time as a time.Time decodes
// one from JSON: RFC 3339 by Go's strict rules (upper-case T and Z, no
// leap second, a two-digit hour). The schema validator checks the
// "date-time" format with it, so a time.Time field and its schema agree.
func ValidDateTime(s string) bool {
	var t time.Time
	b := make([]byte, 0, len(s)+2)
	b = append(append(append(b, '"'), s...), '"')
	return t.UnmarshalJSON(b) == nil
}

// setTime decodes the string s into v, a time.Time.
func (d *decoder) setTime(v reflect.Value, s string) {
	var t time.Time
	b := make([]byte, 0, len(s)+2)
	b = append(append(append(b, '"'), s...), '"')
	if err := t.UnmarshalJSON(b); err != nil {
		d.fail("datetime_type", "Input should be an RFC 3339 date-time string such as 2006-01-02T15:04:05Z")
		return
	}
	v.Set(reflect.ValueOf(t))
}
