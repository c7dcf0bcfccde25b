package jsonarg

import (
	"reflect"
	"time"
)

// ValidDateTime reports whether s is an RFC 3339 date-time (section 5.6):
//
//	date-time   = full-date "T" full-time
//	full-date   = 4DIGIT "-" 2DIGIT "-" 2DIGIT     ; month 01-12, day as the month and year allow
//	full-time   = partial-time time-offset
//	partial-time = 2DIGIT ":" 2DIGIT ":" 2DIGIT ["." 1*DIGIT]  ; 00-23, 00-59, 00-60
//	time-offset = "Z" / ("+" / "-") 2DIGIT ":" 2DIGIT   ; 00-23, 00-59
//
// with the note that "T" and "Z" may be lower case, and a second of 60
// only for a leap second: where the time, taken back to UTC by its offset,
// is 23:59:60 (any day: leap seconds are announced months ahead, and the
// table of them is not consulted). Nothing else is accepted: no one-digit
// field, no comma before the fraction, no blank, no other offset form.
//
// This is the "date-time" format the schema validator asserts (package
// schema registers it) and what a time.Time field decodes: a time.Time and
// its schema accept the same strings, and any RFC 3339 validator agrees
// with both.
func ValidDateTime(s string) bool {
	_, ok := parseDateTime(s)
	return ok
}

// dateTime is the parts of an RFC 3339 date-time.
type dateTime struct {
	year, month, day, hour, min, sec int
	nsec                             int // the fraction, truncated to nanoseconds
	offset                           int // seconds east of UTC
	utc                              bool
}

// parseDateTime checks s against RFC 3339's date-time grammar and bounds
// and returns its parts.
func parseDateTime(s string) (dateTime, bool) {
	var t dateTime
	// "YYYY-MM-DDTHH:MM:SS" is 19 bytes; then a fraction, then an offset.
	if len(s) < len("2006-01-02T15:04:05Z") ||
		s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != 't') || s[13] != ':' || s[16] != ':' {
		return t, false
	}
	var ok [6]bool
	t.year, ok[0] = digits(s[0:4])
	t.month, ok[1] = digits(s[5:7])
	t.day, ok[2] = digits(s[8:10])
	t.hour, ok[3] = digits(s[11:13])
	t.min, ok[4] = digits(s[14:16])
	t.sec, ok[5] = digits(s[17:19])
	for _, o := range ok {
		if !o {
			return t, false
		}
	}
	if t.month < 1 || t.month > 12 || t.day < 1 || t.day > daysIn(t.month, t.year) ||
		t.hour > 23 || t.min > 59 || t.sec > 60 {
		return t, false
	}
	rest := s[19:]
	if rest[0] == '.' {
		n := 1
		for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
			if n <= 9 {
				t.nsec = t.nsec*10 + int(rest[n]-'0')
			}
			n++
		}
		if n == 1 {
			return t, false // "." without a digit
		}
		for k := min(n-1, 9); k < 9; k++ {
			t.nsec *= 10
		}
		rest = rest[n:]
	}
	switch {
	case rest == "Z" || rest == "z":
		t.utc = true
	case len(rest) == len("+07:00") && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':':
		h, okH := digits(rest[1:3])
		m, okM := digits(rest[4:6])
		if !okH || !okM || h > 23 || m > 59 {
			return t, false
		}
		t.offset = (h*60 + m) * 60
		if rest[0] == '-' {
			t.offset = -t.offset
		}
	default:
		return t, false
	}
	if t.sec == 60 {
		// A leap second: 23:59:60 in UTC, wherever the offset puts it.
		utcMin := ((t.hour*60+t.min-t.offset/60)%(24*60) + 24*60) % (24 * 60)
		if utcMin != 23*60+59 {
			return t, false
		}
	}
	return t, true
}

// digits returns the value of s, a run of ASCII digits, and whether it is one.
func digits(s string) (int, bool) {
	v := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	return v, true
}

// daysIn returns the number of days in month of year (proleptic Gregorian).
func daysIn(month, year int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// setTime decodes the string s, checked by parseDateTime, into v, a
// time.Time. Its location is what time.Parse gives the same text: UTC for
// "Z", the local zone when the offset is its offset at that time, else a
// fixed zone of the offset. A leap second, which a time.Time cannot hold,
// is read as the last nanosecond of its minute (23:59:59.999999999 in
// UTC), so times keep their order.
func (d *decoder) setTime(v reflect.Value, s string) {
	p, ok := parseDateTime(s)
	if !ok {
		d.fail("datetime_type", "Input should be an RFC 3339 date-time string such as 2006-01-02T15:04:05Z")
		return
	}
	if p.sec == 60 {
		p.sec, p.nsec = 59, 999999999
	}
	var t time.Time
	if p.utc {
		t = time.Date(p.year, time.Month(p.month), p.day, p.hour, p.min, p.sec, p.nsec, time.UTC)
	} else {
		t = time.Date(p.year, time.Month(p.month), p.day, p.hour, p.min, p.sec, p.nsec, time.UTC).
			Add(-time.Duration(p.offset) * time.Second)
		if _, off := t.In(time.Local).Zone(); off == p.offset {
			t = t.In(time.Local)
		} else {
			t = t.In(time.FixedZone("", p.offset))
		}
	}
	v.Set(reflect.ValueOf(t))
}
