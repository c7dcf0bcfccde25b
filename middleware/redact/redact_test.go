package redact_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"go.uber.org/goleak"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware/redact"
	"github.com/toolmw/toolmw/scrub"
	"github.com/toolmw/toolmw/taxonomy"
	"github.com/toolmw/toolmw/toolmwtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const (
	card  = "4111 1111 1111 1111"
	email = "jane.doe@example.com"
)

func run(mw toolmw.Middleware, res toolmw.Result, err error) (toolmw.Result, error) {
	return mw(toolmwtest.Returning(res, err))(context.Background(), nil)
}

// assertClean fails when a planted value survives in any text of err that
// leaves the process.
func assertClean(t *testing.T, err error) {
	t.Helper()
	info, _ := json.Marshal(taxonomy.InfoOf(err))
	for where, text := range map[string]string{
		"Error":    err.Error(),
		"Info":     string(info),
		"ForModel": toolmw.ForModel(toolmw.Result{}, err),
	} {
		for _, planted := range []string{card, email, "4111"} {
			if strings.Contains(text, planted) {
				t.Errorf("%s holds %q: %s", where, planted, text)
			}
		}
	}
}

func TestToolError(t *testing.T) {
	cause := errors.New("gateway said: card " + card)
	orig := taxonomy.Transient("card_declined", "card "+card+" declined for "+email).
		WithTool("charge").WithRetryAfter(3 * time.Second).WithCause(cause)
	_, err := run(redact.New(), toolmw.Result{}, orig)
	assertClean(t, err)
	te, ok := err.(*taxonomy.ToolError)
	if !ok {
		t.Fatalf("got %T", err)
	}
	if te.Message() != "card [REDACTED:card] declined for [REDACTED:email]" {
		t.Errorf("message %q", te.Message())
	}
	if te.Kind() != orig.Kind() || te.Code() != orig.Code() || te.Tool() != "charge" ||
		!te.Retryable() || te.RetryAfter() != 3*time.Second || te.Unwrap() != cause {
		t.Errorf("got %v, want %v with its attributes", te, orig)
	}
	if orig.Message() != "card "+card+" declined for "+email {
		t.Error("the original was changed")
	}
}

func TestFieldErrors(t *testing.T) {
	orig := taxonomy.ArgsInvalid(
		taxonomy.FieldError{Type: "missing", Loc: []any{"a"}, Msg: "field required"},
		taxonomy.FieldError{Type: "value", Loc: []any{"email", 0}, Msg: "unknown address " + email},
	)
	_, err := run(redact.New(), toolmw.Result{}, orig)
	assertClean(t, err)
	fields := taxonomy.InfoOf(err).Fields
	if len(fields) != 2 || fields[0].Msg != "field required" || fields[1].Msg != "unknown address [REDACTED:email]" || fields[1].Loc[1] != 0 {
		t.Errorf("fields %+v", fields)
	}
	if orig.Fields()[1].Msg != "unknown address "+email {
		t.Error("the original's fields were changed")
	}
}

// TestFieldErrorKeys: a key of the model's arguments is input too; a
// secret used as one is scrubbed from the path, indices kept.
func TestFieldErrorKeys(t *testing.T) {
	orig := taxonomy.ArgsInvalid(taxonomy.FieldError{Type: "extra", Loc: []any{"items", 3, email}, Msg: "unknown field"})
	_, err := run(redact.New(), toolmw.Result{}, orig)
	assertClean(t, err)
	loc := taxonomy.InfoOf(err).Fields[0].Loc
	if len(loc) != 3 || loc[0] != "items" || loc[1] != 3 || loc[2] != "[REDACTED:email]" {
		t.Errorf("loc %#v", loc)
	}
	if orig.Fields()[0].Loc[2] != email {
		t.Error("the original's path was changed")
	}
}

// otherTyped is a taxonomy.Error of another implementation.
type otherTyped struct {
	msg  string
	text string
}

func (e *otherTyped) Error() string             { return e.text }
func (e *otherTyped) Unwrap() error             { return nil }
func (e *otherTyped) Kind() taxonomy.Kind       { return taxonomy.KindRefused }
func (e *otherTyped) Code() string              { return "declined" }
func (e *otherTyped) Tool() string              { return "charge" }
func (e *otherTyped) Retryable() bool           { return false }
func (e *otherTyped) RetryAfter() time.Duration { return 0 }
func (e *otherTyped) Message() string           { return e.msg }

func TestRebuilt(t *testing.T) {
	clean := taxonomy.Refusal("declined", "the card was declined")
	dirty := taxonomy.Refusal("declined", "card "+card+" declined")
	tests := []struct {
		name    string
		err     error
		inner   error  // the typed error inside
		message string // the message of the result
	}{
		{"wrapped dirty message", fmt.Errorf("charging: %w", dirty), dirty, "card [REDACTED:card] declined"},
		{"dirty wrapper text", fmt.Errorf("charging %s: %w", email, clean), clean, "the card was declined"},
		{"joined", errors.Join(errors.New("for "+email), clean), clean, "the card was declined"},
		{"other implementation", &otherTyped{msg: "card " + card, text: "declined"}, nil, "card [REDACTED:card]"},
		{"other implementation, dirty text", &otherTyped{msg: "declined", text: "declined " + card}, nil, "declined"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := run(redact.New(), toolmw.Result{}, tt.err)
			assertClean(t, err)
			te, ok := err.(*taxonomy.ToolError)
			if !ok {
				t.Fatalf("got %T %v", err, err)
			}
			if te.Kind() != taxonomy.KindRefused || te.Code() != "declined" || te.Message() != tt.message {
				t.Errorf("got %v", te)
			}
			if te.Unwrap() != tt.err || (tt.inner != nil && !errors.Is(err, tt.inner)) {
				t.Error("the original error is not the cause")
			}
		})
	}
}

func TestUnchanged(t *testing.T) {
	typed := taxonomy.Refusal("declined", "the card was declined")
	for _, err := range []error{
		nil,
		typed,
		fmt.Errorf("charging: %w", typed),
		&otherTyped{msg: "declined", text: "declined"},
		errors.New("untyped, with " + email), // withheld downstream; classify's business
		fmt.Errorf("cancelled: %w", context.Canceled),
	} {
		if _, got := run(redact.New(), toolmw.Result{}, err); got != err {
			t.Errorf("%v came back as %v", err, got)
		}
	}
}

func TestKeyedHash(t *testing.T) {
	refuse := func(mw toolmw.Middleware, who string) string {
		_, err := run(mw, toolmw.Result{}, taxonomy.Refusal("unknown_customer", "no customer "+who))
		return taxonomy.InfoOf(err).Message
	}
	mw := redact.New(redact.WithKeyedHash([]byte("secret key")))
	a1, a2, b := refuse(mw, email), refuse(mw, email), refuse(mw, "john@example.com")
	if a1 != a2 || a1 == b || !strings.HasPrefix(a1, "no customer [REDACTED:email:") || strings.Contains(a1, "jane") {
		t.Errorf("same value: %q and %q; other value %q", a1, a2, b)
	}
	if other := refuse(redact.New(redact.WithKeyedHash([]byte("another key"))), email); other == a1 {
		t.Error("another key gave the same pseudonym")
	}

	// An empty key is a random key of the process: stable within it.
	p1 := refuse(redact.New(redact.WithKeyedHash(nil)), email)
	p2 := refuse(redact.New(redact.WithKeyedHash([]byte{})), email)
	if p1 != p2 || !strings.HasPrefix(p1, "no customer [REDACTED:email:") {
		t.Errorf("process key: %q and %q", p1, p2)
	}

	// The last of WithScrubber and WithKeyedHash wins.
	if got := refuse(redact.New(redact.WithKeyedHash([]byte("k")), redact.WithScrubber(scrub.Default())), email); got != "no customer [REDACTED:email]" {
		t.Errorf("WithScrubber last: %q", got)
	}
	if got := refuse(redact.New(redact.WithScrubber(nil), redact.WithKeyedHash([]byte("k"))), email); !strings.HasPrefix(got, "no customer [REDACTED:email:") {
		t.Errorf("WithKeyedHash last: %q", got)
	}
	if got := refuse(redact.New(redact.WithScrubber(nil), nil), email); got != "no customer [REDACTED:email]" {
		t.Errorf("nil scrubber: %q", got)
	}
}

func TestResults(t *testing.T) {
	dirty := toolmw.Text("customer " + email)
	if res, _ := run(redact.New(), dirty, nil); !reflect.DeepEqual(res, dirty) {
		t.Errorf("results scrubbed without WithResults: %+v", res)
	}
	if res, _ := run(redact.New(redact.WithResults()), dirty, nil); res.Content != "customer [REDACTED:email]" {
		t.Errorf("got %+v", res)
	}
	js := toolmw.Result{Content: `{"customer":"` + email + `","n":1}`, JSON: true}
	if res, _ := run(redact.New(redact.WithResults()), js, nil); res.Content != `{"customer":"[REDACTED:email]","n":1}` || !res.JSON {
		t.Errorf("got %+v", res)
	}
	// Both the result and the error of one call.
	res, err := run(redact.New(redact.WithResults()), dirty, taxonomy.Refusal("x", email))
	if res.Content != "customer [REDACTED:email]" || taxonomy.InfoOf(err).Message != "[REDACTED:email]" {
		t.Errorf("got %+v, %v", res, err)
	}

	// Clean content is passed on as it is, not copied.
	clean := toolmw.Result{Content: `{"hotel":"Central","stars":4}`, JSON: true}
	if res, err := run(redact.New(redact.WithResults()), clean, nil); err != nil || !reflect.DeepEqual(res, clean) || unsafe.StringData(res.Content) != unsafe.StringData(clean.Content) {
		t.Errorf("clean content changed: %+v, %v", res, err)
	}

	// A card number written as a JSON number: its placeholder is not JSON,
	// so the result is passed on as text, redacted.
	num := toolmw.Result{Content: `{"card":4111111111111111}`, JSON: true}
	if res, err := run(redact.New(redact.WithResults()), num, nil); err != nil || strings.Contains(res.Content, "4111111111111111") || res.JSON != json.Valid([]byte(res.Content)) {
		t.Errorf("got %+v, %v; want the card redacted and the JSON flag to agree with the content", res, err)
	}

	// A scrubber that breaks the JSON: the result is no longer marked JSON.
	quoted, err := scrub.New(scrub.WithPattern("quoted_secret", regexp.MustCompile(`"secret[^"]*"`)))
	if err != nil {
		t.Fatal(err)
	}
	js = toolmw.Result{Content: `{"k":"secret-value"}`, JSON: true}
	res, _ = run(redact.New(redact.WithResults(), redact.WithScrubber(quoted)), js, nil)
	if res.Content != `{"k":[REDACTED:quoted_secret]}` || res.JSON {
		t.Errorf("got %+v", res)
	}
}

func TestValidate(t *testing.T) {
	opts := []redact.Option{nil, redact.WithScrubber(nil), redact.WithKeyedHash(nil), redact.WithKeyedHash([]byte("k")), redact.WithResults()}
	if err := redact.Validate(opts...); err != nil {
		t.Fatalf("Validate = %v, want nil", err)
	}
	res, _ := run(redact.New(opts...), toolmw.Text("customer "+email), nil)
	if !strings.HasPrefix(res.Content, "customer [REDACTED:email:") {
		t.Errorf("got %q, want a keyed placeholder", res.Content)
	}
}

func TestNoAllocation(t *testing.T) {
	ctx := context.Background()
	clean := taxonomy.Refusal("declined", "the card was declined")
	for name, tool := range map[string]toolmw.Tool{
		"success":               redact.New()(toolmwtest.Returning(toolmw.Text("customer "+email), nil)),
		"success, clean result": redact.New(redact.WithResults())(toolmwtest.Returning(toolmw.Text("all good"), nil)),
		"clean refusal":         redact.New()(toolmwtest.Returning(toolmw.Result{}, clean)),
		"clean wrapped refusal": redact.New()(toolmwtest.Returning(toolmw.Result{}, fmt.Errorf("x: %w", clean))),
	} {
		if n := testing.AllocsPerRun(100, func() { _, _ = tool(ctx, nil) }); n != 0 {
			t.Errorf("%s: %v allocs", name, n)
		}
	}
}

func TestSharedByManyTools(t *testing.T) {
	mw := redact.New(redact.WithKeyedHash([]byte("k")), redact.WithResults())
	want := refusalMessage(t, mw)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				if got := refusalMessage(t, mw); got != want {
					t.Errorf("got %q, want %q", got, want)
					return
				}
			}
		}()
	}
	wg.Wait()
}

func refusalMessage(t *testing.T, mw toolmw.Middleware) string {
	res, err := run(mw, toolmw.Text(email), taxonomy.Refusal("x", "no "+email))
	if strings.Contains(res.Content, email) {
		t.Error("the result was not scrubbed")
	}
	return taxonomy.InfoOf(err).Message
}
