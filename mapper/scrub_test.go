package mapper_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/mapper"
	"github.com/toolmw/toolmw/scrub"
	"github.com/toolmw/toolmw/taxonomy"
)

const (
	plantedToken = "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"
	plantedEmail = "jane.doe@example.com"
	plantedCard  = "4111 1111 1111 1111"
)

// leakyErr is a foreign error whose text holds secrets.
type leakyErr struct{ code int }

func (e *leakyErr) Error() string {
	return fmt.Sprintf("POST /charge failed: Authorization: Bearer %s; customer %s; card %s", plantedToken, plantedEmail, plantedCard)
}
func (e *leakyErr) StatusCode() int { return e.code }

// surfaces returns every text of err that leaves the process: Error(), the
// Info record as JSON, the problem document and what the model is shown.
func surfaces(t *testing.T, err error) map[string]string {
	t.Helper()
	info, jerr := json.Marshal(taxonomy.InfoOf(err))
	if jerr != nil {
		t.Fatal(jerr)
	}
	problem, jerr := json.Marshal(taxonomy.InfoOf(err).Problem())
	if jerr != nil {
		t.Fatal(jerr)
	}
	return map[string]string{
		"Error":    err.Error(),
		"Info":     string(info),
		"Problem":  string(problem),
		"ForModel": toolmw.ForModel(toolmw.Result{}, err),
	}
}

func assertNoSecret(t *testing.T, err error) {
	t.Helper()
	for where, text := range surfaces(t, err) {
		for _, secret := range []string{plantedToken, plantedEmail, plantedCard, "ghp_", "jane.doe"} {
			if strings.Contains(text, secret) {
				t.Errorf("%s holds %q: %s", where, secret, text)
			}
		}
	}
}

func TestScrubbedTranslation(t *testing.T) {
	foreign := fmt.Errorf("charge: %w", &leakyErr{code: 503})
	keyed, err := scrub.New(scrub.WithKeyedHash([]byte("k")))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		m        *mapper.Map
		err      error
		contains string // a text the message must hold
	}{
		{"default", mapper.Default(), foreign, "the upstream service is unavailable"},
		{"unmapped", mapper.New(), foreign, ""},
		{"with messages", mapper.Default().WithOptions(mapper.WithMessages()), foreign, "the upstream service is unavailable: charge: POST /charge failed"},
		{"unmapped with messages", mapper.New(mapper.WithMessages()), foreign, "[REDACTED:email]"},
		{"rule message", mapper.New().With(mapper.Status(503, mapper.Refusal("declined", "card "+plantedCard+" declined"))), foreign, "card [REDACTED:card] declined"},
		{"computed message", mapper.New().With(mapper.TypeFunc(func(e *leakyErr) (mapper.Verdict, bool) {
			return mapper.Permanent("charge_failed").WithMessage("failed: " + e.Error()), true
		})), foreign, "failed: POST /charge failed"},
		{"keyed scrubber", mapper.New(mapper.WithMessages(), mapper.WithScrubber(keyed)), foreign, "[REDACTED:email:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.m.Classify("charge", tt.err)
			assertNoSecret(t, got)
			if !strings.Contains(got.Error(), tt.contains) {
				t.Errorf("Error() = %q, want it to hold %q", got.Error(), tt.contains)
			}
			// Code still reaches the cause.
			var le *leakyErr
			if !errors.Is(got, tt.err) || !errors.As(got, &le) {
				t.Errorf("the cause is not reachable: %v", got)
			}
		})
	}
}

func TestWithDoesNotMutate(t *testing.T) {
	errSoldOut := errors.New("sold out")
	d := mapper.Default()
	before := d.Classify("t", errSoldOut)

	m := d.With(mapper.Is(errSoldOut, mapper.Refusal("sold_out", "the fare is sold out")))
	m2 := d.WithOptions(mapper.WithMessages())
	check(t, m.Classify("t", errSoldOut), want{taxonomy.KindRefused, "sold_out", false})
	if got := m2.Classify("t", errSoldOut).Error(); got != "t: tool-failed unmapped_failure: sold out" {
		t.Fatalf("WithOptions: Error() = %q", got)
	}
	// m keeps d's options; m2 keeps d's rules.
	if got := m.Classify("t", errOther).Error(); got != "t: tool-failed unmapped_failure" {
		t.Fatalf("With: Error() = %q", got)
	}
	check(t, m2.Classify("t", &statusErr{code: 404}), want{taxonomy.KindRefused, taxonomy.CodeUpstreamNotFound, false})

	for _, shared := range []*mapper.Map{d, mapper.Default()} {
		after := shared.Classify("t", errSoldOut)
		if after.Error() != before.Error() || after.Error() != "t: tool-failed unmapped_failure" {
			t.Fatalf("the default map changed: %v", after)
		}
	}
	if d != mapper.Default() {
		t.Fatal("Default() is not shared")
	}
	// Two maps extended from one base do not see each other's rules.
	a := d.With(mapper.Is(errSentinel, mapper.Permanent("a")))
	b := d.With(mapper.Is(errSentinel, mapper.Permanent("b")))
	check(t, a.Classify("t", errSentinel), want{taxonomy.KindFailed, "a", false})
	check(t, b.Classify("t", errSentinel), want{taxonomy.KindFailed, "b", false})
}

func TestConcurrentUse(t *testing.T) {
	d := mapper.Default()
	errs := []error{
		&statusErr{code: 503},
		&net.OpError{Op: "dial", Err: errOther},
		newGRPC(14),
		&ghErr{Response: statusResponse(429, nil)},
		fmt.Errorf("x: %w", &leakyErr{code: 500}),
		errOther,
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m := d.With(mapper.Is(errSentinel, mapper.Permanent(fmt.Sprintf("g%d", g))))
			for i := range 200 {
				err := errs[i%len(errs)]
				if _, ok := taxonomy.From(d.ClassifyFor("t", i%2 == 0, err)); !ok {
					t.Error("not typed")
					return
				}
				if got, _ := taxonomy.From(m.Classify("t", errSentinel)); got.Code() != fmt.Sprintf("g%d", g) {
					t.Errorf("got %s", got.Code())
					return
				}
			}
		}()
	}
	wg.Wait()
}
