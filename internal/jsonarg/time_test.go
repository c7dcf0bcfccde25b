package jsonarg

import (
	"encoding/json"
	"os"
	"reflect"
	"testing"
	"time"
)

// dateTimeCase is one string and whether it is an RFC 3339 date-time
// (section 5.6, with the note that "T" and "Z" may be lower case, and the
// leap second of section 5.7).
type dateTimeCase struct {
	in    string
	valid bool
	from  string // where the case comes from
}

// dateTimeCases reads testdata/date-time.json: RFC 3339 date-time
// strings and whether each is one, from RFC 3339, the
// JSON-Schema-Test-Suite and what Go's time.Parse gets wrong (see the
// file's description).
func dateTimeCases(t *testing.T) []dateTimeCase {
	t.Helper()
	b, err := os.ReadFile("testdata/date-time.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Cases []struct {
			Data  string `json:"data"`
			Valid bool   `json:"valid"`
			From  string `json:"from"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(b, &doc); err != nil || len(doc.Cases) < 50 {
		t.Fatalf("testdata/date-time.json: %v, %d cases", err, len(doc.Cases))
	}
	out := make([]dateTimeCase, len(doc.Cases))
	for i, c := range doc.Cases {
		out[i] = dateTimeCase{c.Data, c.Valid, c.From}
	}
	return out
}

// TestValidDateTime: ValidDateTime, which package schema registers as the
// "date-time" format, follows RFC 3339 on every case.
func TestValidDateTime(t *testing.T) {
	for _, c := range dateTimeCases(t) {
		if got := ValidDateTime(c.in); got != c.valid {
			t.Errorf("%s: ValidDateTime(%q) = %v, want %v", c.from, c.in, got, c.valid)
		}
	}
}

// TestDecodeDateTime: a time.Time field takes exactly the RFC 3339
// date-times, and reads them as time.Parse reads the upper-case form; a
// leap second, which a time.Time cannot hold, reads as the last
// nanosecond of its minute.
func TestDecodeDateTime(t *testing.T) {
	type in struct {
		At time.Time `json:"at"`
	}
	m := For(reflect.TypeFor[in]())
	for _, c := range dateTimeCases(t) {
		var v in
		b, _ := json.Marshal(c.in)
		err := m.Decode([]byte(`{"at":`+string(b)+`}`), &v, 0)
		if (err == nil) != c.valid {
			t.Errorf("%s: %q: %v, want valid %v", c.from, c.in, err, c.valid)
		}
	}
	for s, want := range map[string]time.Time{
		"1963-06-19t08:30:06.283185z":          time.Date(1963, 6, 19, 8, 30, 6, 283185000, time.UTC),
		"1985-04-12T00:59:59.999999999999999Z": time.Date(1985, 4, 12, 0, 59, 59, 999999999, time.UTC),
		"1998-12-31T23:59:60Z":                 time.Date(1998, 12, 31, 23, 59, 59, 999999999, time.UTC),
		"1998-12-31T15:59:60.123-08:00":        time.Date(1998, 12, 31, 15, 59, 59, 999999999, time.FixedZone("", -8*3600)),
		"1937-01-01T12:00:27.87+00:20":         time.Date(1937, 1, 1, 12, 0, 27, 870000000, time.FixedZone("", 20*60)),
	} {
		var v in
		b, _ := json.Marshal(s)
		if err := m.Decode([]byte(`{"at":`+string(b)+`}`), &v, 0); err != nil || !v.At.Equal(want) {
			t.Errorf("%q: %v, %v; want %v", s, v.At, err, want)
		}
		_, off := v.At.Zone()
		if _, wantOff := want.Zone(); off != wantOff {
			t.Errorf("%q: offset %d, want %d", s, off, wantOff)
		}
	}
}
