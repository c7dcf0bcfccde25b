package toolmw_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/scrub"
	"github.com/toolmw/toolmw/taxonomy"
	"github.com/toolmw/toolmw/toolmwtest"
	"github.com/toolmw/toolmw/toolmwtest/canary"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestWrapRejects(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec toolmw.Spec
		tool toolmw.Tool
		mws  []toolmw.Middleware
		code string
	}{
		{"empty name", toolmw.Spec{}, toolmwtest.OK, nil, taxonomy.CodeNameInvalid},
		{"space in name", toolmw.Spec{Name: "book flight"}, toolmwtest.OK, nil, taxonomy.CodeNameInvalid},
		{"dot in name", toolmw.Spec{Name: "book.flight"}, toolmwtest.OK, nil, taxonomy.CodeNameInvalid},
		{"unicode name", toolmw.Spec{Name: "réserver"}, toolmwtest.OK, nil, taxonomy.CodeNameInvalid},
		{"name too long", toolmw.Spec{Name: strings.Repeat("a", 65)}, toolmwtest.OK, nil, taxonomy.CodeNameInvalid},
		{"nil tool", toolmw.Spec{Name: "book"}, nil, nil, taxonomy.CodeToolNil},
		{"nil middleware", toolmw.Spec{Name: "book"}, toolmwtest.OK, []toolmw.Middleware{toolmw.Chain(), nil}, taxonomy.CodeMiddlewareNil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tool, err := toolmw.Wrap(tc.spec, tc.tool, tc.mws...)
			if tool != nil {
				t.Fatal("Wrap returned a tool with an error")
			}
			te, isTyped := taxonomy.From(err)
			if !isTyped || te.Kind() != taxonomy.KindDefinitionInvalid || te.Code() != tc.code {
				t.Fatalf("err = %v, want tool-definition-invalid/%s", err, tc.code)
			}
			if !errors.Is(err, taxonomy.ErrDefinitionInvalid) {
				t.Fatal("errors.Is(ErrDefinitionInvalid) is false")
			}
		})
	}
	for _, name := range []string{"a", "A-b_9", strings.Repeat("x", 64)} {
		if _, err := toolmw.Wrap(toolmw.Spec{Name: name}, toolmwtest.OK); err != nil {
			t.Errorf("Wrap(%q) = %v", name, err)
		}
	}
}

func TestMustWrapPanics(t *testing.T) {
	defer func() {
		if r := recover(); !errors.Is(r.(error), taxonomy.ErrDefinitionInvalid) {
			t.Fatalf("recovered %v", r)
		}
	}()
	toolmw.MustWrap(toolmw.Spec{Name: ""}, toolmwtest.OK)
}

func TestCallFrom(t *testing.T) {
	if _, found := toolmw.CallFrom(context.Background()); found {
		t.Fatal("CallFrom found a call in a bare context")
	}
	var seen []toolmw.Call
	tool := toolmw.MustWrap(toolmw.Spec{Name: "lookup", Idempotent: true},
		func(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
			c, _ := toolmw.CallFrom(ctx)
			seen = append(seen, c)
			return toolmw.Result{}, nil
		},
		func(next toolmw.Tool) toolmw.Tool { // a two-attempt "retry"
			return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
				_, _ = next(ctx, args)
				toolmw.SetAttempt(ctx, 2)
				return next(ctx, args)
			}
		})
	ctx := toolmw.WithCallID(context.Background(), "call_1")
	if _, err := tool(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 2 || seen[0].Attempt != 1 || seen[1].Attempt != 2 {
		t.Fatalf("attempts seen: %+v", seen)
	}
	c := seen[0]
	if c.Tool != "lookup" || c.ID != "call_1" || !c.Idempotent || c.Spec.Type != "function" {
		t.Fatalf("call = %+v", c)
	}
	// A new call through the same tool starts again at attempt 1.
	seen = nil
	_, _ = tool(context.Background(), nil)
	if seen[0].Attempt != 1 || seen[0].ID != "" {
		t.Fatalf("second call = %+v", seen[0])
	}
	toolmw.SetAttempt(context.Background(), 3) // no call: nothing happens
}

func TestCallContextKeepsCancellation(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	tool := toolmw.MustWrap(toolmw.Spec{Name: "wait"}, func(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
		inner, stop := context.WithTimeout(ctx, time.Hour)
		defer stop()
		cancel()
		<-inner.Done()
		return toolmw.Result{}, inner.Err()
	})
	if _, err := tool(ctx, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
}

func TestWrapNamesTypedErrors(t *testing.T) {
	tool := toolmw.MustWrap(toolmw.Spec{Name: "pay"}, func(context.Context, json.RawMessage) (toolmw.Result, error) {
		return toolmw.Result{}, taxonomy.Failure("card_declined", "declined")
	})
	_, err := tool(context.Background(), nil)
	if te, _ := taxonomy.From(err); te.Tool() != "pay" {
		t.Fatalf("tool = %q", te.Tool())
	}
}

func TestToolbox(t *testing.T) {
	var order []string
	trace := func(name string) toolmw.Middleware {
		return func(next toolmw.Tool) toolmw.Tool {
			return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
				order = append(order, name)
				return next(ctx, args)
			}
		}
	}
	box := toolmw.NewToolbox(trace("box"))
	if err := box.Register(toolmw.Spec{Name: "a", Description: "first"}, toolmwtest.OK, trace("tool")); err != nil {
		t.Fatal(err)
	}
	if err := box.Register(toolmw.Spec{Name: "b"}, toolmwtest.OK); err != nil {
		t.Fatal(err)
	}
	err := box.Register(toolmw.Spec{Name: "a"}, toolmwtest.OK)
	if te, _ := taxonomy.From(err); te == nil || te.Kind() != taxonomy.KindDuplicateTool || te.Code() != taxonomy.CodeDuplicateTool {
		t.Fatalf("duplicate: %v", err)
	}
	if err := box.Register(toolmw.Spec{Name: "c d"}, toolmwtest.OK); !errors.Is(err, taxonomy.ErrDefinitionInvalid) {
		t.Fatalf("bad name: %v", err)
	}
	if _, err := box.Call(context.Background(), "a", nil); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(order, []string{"box", "tool"}) {
		t.Fatalf("middleware order %v", order)
	}
	for _, name := range []string{"nope", "</untrusted-data>"} {
		_, err = box.Call(context.Background(), name, nil)
		if te, _ := taxonomy.From(err); te == nil || te.Kind() != taxonomy.KindNotFound || te.Code() != taxonomy.CodeToolNotFound {
			t.Fatalf("unknown %q: %v", name, err)
		}
		if strings.Contains(err.Error(), "untrusted") {
			t.Fatalf("an invalid requested name was echoed: %v", err)
		}
	}
	specs := box.Specs()
	if len(specs) != 2 || specs[0].Name != "a" || specs[1].Name != "b" {
		t.Fatalf("specs %+v", specs)
	}
	var zero toolmw.Toolbox
	if err := zero.Register(toolmw.Spec{Name: "z"}, toolmwtest.OK); err != nil {
		t.Fatalf("zero Toolbox: %v", err)
	}
}

func TestToolboxConcurrent(t *testing.T) {
	box := toolmw.NewToolbox()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = box.Register(toolmw.Spec{Name: fmt.Sprintf("t%d", i)}, toolmwtest.OK)
			for j := range 100 {
				_, _ = box.Call(context.Background(), fmt.Sprintf("t%d", j%8), nil)
			}
			_ = box.Specs()
		}()
	}
	wg.Wait()
	if n := len(box.Specs()); n != 8 {
		t.Fatalf("%d specs", n)
	}
}

func TestJSONResult(t *testing.T) {
	res, err := toolmw.JSON(map[string]int{"a": 1})
	if err != nil || res.Content != `{"a":1}` || !res.JSON {
		t.Fatalf("JSON = %+v, %v", res, err)
	}
	_, err = toolmw.JSON(func() {})
	if te, _ := taxonomy.From(err); te == nil || te.Code() != taxonomy.CodeResultEncoding {
		t.Fatalf("unencodable: %v", err)
	}
}

func TestSafeCallID(t *testing.T) {
	long := strings.Repeat("a", toolmw.MaxCallIDLen)
	for _, id := range []string{"", "call_a1B2", "toolu_01A09q90qw90lq917835lq9", "fc_67.x:1-2", long,
		"call_abc123XYZ789def456GHI012", "call_0", "tc-4f2a", "toolu_01Xy9Kp2Lm4Qr7St8Uv1Wz3"} {
		if got := toolmw.SafeCallID(id); got != id {
			t.Errorf("SafeCallID(%q) = %q, want it unchanged", id, got)
		}
	}
	bad := []string{long + "a", strings.Repeat("x", 1<<20), "call_1\nlevel=error", "ghp_x token=sk_live_CANARY", "<b>", "call é"}
	bad = append(bad, canary.Values()...) // tokens in the id's own charset too
	for _, id := range bad {
		got := toolmw.SafeCallID(id)
		if !strings.HasPrefix(got, "invalid_call_id_") || len(got) != len("invalid_call_id_")+16 {
			t.Errorf("SafeCallID(%.40q) = %q", id, got)
		}
		if toolmw.SafeCallID(id) != got {
			t.Error("the same bad id reads differently")
		}
	}
	// What the layers see through a Wrap'd tool.
	var seen string
	tool := toolmw.MustWrap(toolmw.Spec{Name: "t"}, func(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
		c, _ := toolmw.CallFrom(ctx)
		seen = c.ID
		return toolmw.Text("ok"), nil
	})
	_, _ = tool(toolmw.WithCallID(context.Background(), strings.Repeat("k", 1<<20)), nil)
	if len(seen) > toolmw.MaxCallIDLen {
		t.Fatalf("a 1 MiB call id reached the layers as %d bytes", len(seen))
	}
}

// TestSafeCallIDNamespace: an id that reads like a replaced one ("invalid_call_id_"
// and 16 lower-case hex digits) is itself replaced, so no model id can pose as
// the replaced form of another; ids merely starting like it pass as they are.
func TestSafeCallIDNamespace(t *testing.T) {
	for _, id := range []string{"call/1", "a+b@c", strings.Repeat("x", 200), "call_1\nlevel=error"} {
		replaced := toolmw.SafeCallID(id)
		if again := toolmw.SafeCallID(replaced); again == replaced {
			t.Errorf("the literal %q, the replaced form of %.20q, passes as it is", replaced, id)
		} else if !strings.HasPrefix(again, "invalid_call_id_") || len(again) != len(replaced) {
			t.Errorf("SafeCallID(%q) = %q", replaced, again)
		}
	}
	for _, id := range []string{"invalid_call_id_", "invalid_call_id_0123456789ABCDEF", "invalid_call_id_0123456789abcdef0", "invalid_call_id_x"} {
		if got := toolmw.SafeCallID(id); got != id {
			t.Errorf("SafeCallID(%q) = %q, want it unchanged", id, got)
		}
	}
}

// alien is a taxonomy.Error made outside toolmw that says anything.
type alien struct{ s string }

func (a alien) Error() string             { return "alien " + a.s }
func (a alien) Unwrap() error             { return nil }
func (a alien) Kind() taxonomy.Kind       { return taxonomy.Kind(a.s) }
func (a alien) Code() string              { return a.s }
func (a alien) Tool() string              { return a.s }
func (a alien) Message() string           { return "msg " + a.s }
func (a alien) Retryable() bool           { return true }
func (a alien) RetryAfter() time.Duration { return 1 << 62 }

// TestForeignErrorNormalisedAtTheEdge: a taxonomy.Error made elsewhere
// leaves a Wrap'd tool as the *taxonomy.ToolError of its normalised record,
// named after the tool, still reachable with errors.As.
func TestForeignErrorNormalisedAtTheEdge(t *testing.T) {
	const secret = "sk_live_51HcanaryCANARYcanary0000"
	tool := toolmw.MustWrap(toolmw.Spec{Name: "book"}, func(context.Context, json.RawMessage) (toolmw.Result, error) {
		return toolmw.Result{}, alien{secret}
	})
	_, err := tool(context.Background(), nil)
	te, ok := err.(*taxonomy.ToolError)
	if !ok {
		t.Fatalf("got %T, want *taxonomy.ToolError", err)
	}
	if te.Kind() != taxonomy.KindFailed || te.Code() != taxonomy.CodeInvalidCode || te.Tool() != "book" ||
		te.RetryAfter() != taxonomy.MaxRetryAfter || strings.Contains(te.Error(), "anary") {
		t.Fatalf("got %s (retry after %v)", te.Error(), te.RetryAfter())
	}
	var a alien
	if !errors.As(err, &a) {
		t.Fatal("the foreign error is not reachable")
	}
	if info := taxonomy.InfoOf(alien{secret}); info.Tool != "" || info.Code != taxonomy.CodeInvalidCode {
		t.Fatalf("InfoOf kept the foreign tool name or code: %+v", info)
	}
}

// gluedSamples are one value of each family of the default scrubber that a
// call id can hold (ASCII letters, digits and "_-.:"), by family; the
// values are made up, split so that no scanner takes this file for a leak.
var gluedSamples = map[string][]string{
	"age_secret_key":       {"AGE-SE" + "CRET-KEY-1PERX0PZSKHRVRESRTTUHDWNFRDH5WS8EUZ4Q9CXXQEMGPXYF9CJ5SGC4HA"},
	"alibaba_key":          {"LTAIBc" + "m7elEetHMyXUaRIg7h"},
	"anthropic_key":        {"sk" + "-ant-api03-nW5gcF-Ha6ili8GjHEAD6_Wj9KfzjsQGMrb9h-ImB-LK777pzNk8cL6j5IXAAjlsHUqJoUD_-Ydua-5ZMs1SWOpQaPRYpAA"},
	"atlassian_token":      {"ATBBrY" + "pi7Y1AlceOTPomxtxWBOQjW01S7M9y"},
	"aws_access_key":       {"AKIA" + "QWERTYUIOPASDFGH", "ASIA" + "QWERTYUIOPASDFGH"},
	"aws_secret_key":       {"aws_secret_access_key:" + "wJalrXUtnFEMIK7MDENGbPxRfiCY9q2Lm4Kp7Xz1"},
	"aws_session_token":    {"IQoJb3" + "JpZ2luX2Vj" + "nQvWys81vp7hB1dx8PpD5KHXe3PYiGkPAuNaRL63xYKwzEInncIIA3ANxN9K3KSU9Mi4roNL89sM995YTBXaK7JQEVT0mlAmrtVETW0TesULee"},
	"databricks_token":     {"dapi" + "0a1b2c3d4e5f60718293a4b5c6d7e8f9"},
	"digitalocean_token":   {"do" + "p_v1_947aaeb26c57d21fa5d328263dfe574de739988b886e7577496a2c8773e130f7"},
	"discord_token":        {"MTk4NjIyNDgzNDcxOTI1MjQ4" + ".Cl2FMQ.PTmZYl2dVAMH2vWD6qeSPt5Pv74"},
	"dockerhub_token":      {"dckr_p" + "at_bL1XvnkR3Qum1BtTtiay6CfQIYq"},
	"doppler_token":        {"dp.st." + "dev.NcitBvJYTpvGvTwY0mOFq5F6llw1u5xusUAFwDmR"},
	"facebook_token":       {"EAABzC" + "hRcSthsK1yCCSSYbJjVkHypCdhOT0ArPsGI5XEvtOmYB5z1nfYl1NiJHEQYBl5KjEBPuV4uRViW7VtL0Rih7ypO9faxN4hdH9J4hiwtMukhqODQ1abq4oaMaT9uhXtNZuwR96bpf8HRkvlj8oKNTOP0apURkIh"},
	"flyio_token":          {"fo1_nm" + "mrAXi0Lm9kOMVil68pZ_oRpuICRBDs7ZqBSqIcwH7"},
	"github_token":         {"gh" + "p_u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d", canary.Secrets[0].Value},
	"gitlab_token":         {"gl" + "pat-UdjAWtGSU8po-799Nksn"},
	"google_api_key":       {"AI" + "zazbLGViYXjU2JgJngKtFI3OyV2dZAkg05rK-"},
	"google_client_secret": {"GOCSPX" + "-ve2vAPFRiFATt5lz4CXMw929VEGp"},
	"google_oauth_token":   {"ya29.a" + "02avhlvrUU8YLghux76nTPDYpm9gPGcsN847UdJ3rrID5y67fiCnwx6Fdco8m4eS0EptOlxwHZSgRqnK2yF3HVTCJFiovmVSPewVrV0LjRRHQ9f"},
	"grafana_token":        {"glsa_F" + "J8u4ObWswOoDk0uTQW5aDAwXsuU3Bel_c25d2a26"},
	"groq_key":             {"gsk_" + "Q7vKp2Lm9XwR4tNzAb3dE5gH7k"},
	"nvidia_key":           {"nvapi-" + "cyGfLPg6snafPfAQQ1su_4Gr5Oc7ecP9R54c96qGZyck75jcsNu4PTUxFO69ljWy"},
	"langfuse_key":         {"sk-lf-" + "8c1d5e2a-4b3f-4e9a-9d7c-2f6b8a1e3c5d"},
	"posthog_key":          {"phx_" + "Xk9vQ2mLp7Rt8xYzAb3Cd4Ef5Gh6Ij7Kl8Mn9Op0Qr1St2Uv"},
	"buildkite_token":      {"bkua_" + "z1x2c3v4b5n6m7q8w9e0r1t2y3u4i5o6p7l8k9j0"},
	"flexport_key":         {"shltm_" + "k2Jd9_xQ-8vL3mNp7RtY4wZa1Bc6De0Fg5Hi2JkL"},
	"fleetbase_key":        {"flb_live_" + "Zk8QwR2mXp9LtV4nBy7C"},
	"hubspot_token":        {"pat-na1-" + "3f9a2b7c-1d4e-4a6b-9c8d-7e5f3a2b1c0d"},
	"elevenlabs_key":       {"sk_" + "3f8a9c1d4e7b6a3f0c5d8e1a4b7c9d2e3f8a9c1d4e7b6a3f"},
	"heroku_key":           {"HRKU-A" + "AQv196RIoWY0PIhU6z5aw2fX2mbmDPT73Zz7qGBpWtqj1tz2_EzbDPjR7Ik"},
	"huggingface_token":    {"hf" + "_d67JikEAvstqVVPqzPptEJQzhkPkenG5ZF"},
	"jwt":                  {"eyJhbGciOiJIUzI1NiJ9" + ".eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", canary.Secrets[3].Value},
	"langsmith_key":        {"lsv2_p" + "t_fbb0259e847c4f0aaaf9d1d501406ee8_fabe2c4964"},
	"linear_key":           {"lin_ap" + "i_JQkr036IikVg235ONeSsauAgXkoQa2FtUvNhaTMM"},
	"mailchimp_key":        {"a2e12e" + "eb260e4faa1bab1cdf401911cb-us14"},
	"mailgun_key":          {"ke" + "y-3ax6xnjp29jd6fds4gc373sgvjxteol0"},
	"mapbox_token":         {"sk.eyJ" + "1IjoiQo_ZVabusWC9BLMXfN2_28CFhH-2HijfRT2L0cjI.DpGnqZrUSTpZRZLuynOC46"},
	"newrelic_key":         {"NRAK-P" + "IA8E94X1VT9RF50RTHG80SNLZ5"},
	"notion_token":         {"ntn_43" + "314882775FFV4ktmOJv3328eN3Gb5FVjisfBbWOLpROl"},
	"npm_token":            {"np" + "m_JoC6vWCBiJmpflvJfupxqZKm4bV3AyAVHnyr"},
	"openai_key":           {"sk" + "-proj-8F5n3_YNBDRzrZSgqbjG3uhkWKFLf6xuI5aHUQPFeNBTxaQW", "ek_" + "3f9a1c7e5b2d4f6a8c0e1b3d5f7a9c2e"},
	"openrouter_key":       {"sk-or-v1-" + "0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9"},
	"password":             {"password:" + "Hunter2Canary"},
	"perplexity_key":       {"pplx-l" + "tbgJcogNVVMMqDjeUZRgsAD2WctCAPLGN77F1bsqFJuC7Wh"},
	"pinecone_key":         {"pcsk_n" + "yFtA_C5RbaD86MpUJJxmvBpkfVjVplxFZtKvgY1pRyT082xE6MoY1SIeKIqWlv6JtbbY"},
	"planetscale_token":    {"pscale" + "_tkn_TNJ3tkUSR61TsvxwRv71P6o3DW67Vsnbi919RiWMvSM"},
	"postman_key":          {"PMAK-e" + "f0d36d9935eed4e6c6c37c4-de8cd8b8e74cd7b945a50219ee84b9dad0"},
	"pulumi_token":         {"pul-be" + "43b7fd236b7c885f98f26adf63d1e5930599fb"},
	"pypi_token":           {"pypi-AgEIcHlwaS5vcmc" + "Rh_JUqBlIFXZ53Ncqe28-ajY75FnCttn6kfaqDeMqG3omjMyXHCabM6JOF8E"},
	"replicate_key":        {"r8_wnX" + "vfQWfZrQsk8d3Amh0kxA3QKdukRtN8O6KH"},
	"rubygems_token":       {"rubyge" + "ms_baf2abac2cddbc0ceafba0037bb109e2b0f73eb30cd18935"},
	"secret":               {"api_key:" + "Q7vKp2Lm9XwR4tNz"},
	"sendgrid_key":         {"SG" + ".Fd0Nhcy_1kGD2VD_eR1UYz.aLiA_zNyD7CHLn_xC-1hsYgBds1ghxY5OokvQyx7eNW"},
	"sentry_token":         {"sntryu" + "_dec1db5d9640a1c26f5806c1afd663e3969e0a1e8a74d8bb887bf7dd5035046a"},
	"shopify_token":        {"sh" + "pat_e500fe7ee5fc324bdb2e1142a21c4023"},
	"slack_token":          {"xo" + "xb-54728038528-0841485253888-vOoNZYW2mZp0zVZomHFwUbbY"},
	"square_token":         {"sq0atp" + "-H6IZkK4s5Jax_XdSmLrcyu"},
	"stripe_key":           {"sk" + "_live_eh6Yo4gfqrc5XlrWi0B26R08"},
	"supabase_token":       {"sbp_02" + "fee32719d7b1178c42030ac876376c97b76368"},
	"tavily_key":           {"tvly-u" + "uNsGa7NMyl3zaoW5Xtwd57TKmERl722"},
	"telegram_token":       {"123456789" + ":AApThGJWZhbj11THnCMZCY7Bvqiy8CsT07L"},
	"terraform_token":      {"nyPxUe" + "uq2qmwxQ.atlasv1.nqtgFGTiOvPg8csYukf1mMBBeHH36NbXKjItVaoxopNXxixBk52iw2QDn0gN1Z92nto"},
	"twilio_key":           {"SK" + "bae530282bd36cb9d21f6be6abf0d7c1", "AC" + "c1e21862ab8a18a8902073fec8df4f50"},
	"vault_token":          {"hvs.bP" + "R58vDUPgfR5gB2Z-EAPsLSA8rHAaw-RAgmsizw8GklypfRd7L3k6NRJF8os0qzLfEXnZtZnoxoe6hFCpirtRyf7n"},
	"xai_key":              {"xa" + "i-yvMpy62O6SQ1IEE1HSa2bB9UoK4tYnzNLeK6kjcbhgN7kwjSbbciSPOcSeVce2LWxm090I5Qe43W6T8y"},

	// Vendor tokens added for issue 31 (gitleaks' rules).
	"adobe_key":               {"p8e-Ae" + "HwZJrCI8HiOtwIJvCqDIOiuchaNlFH"},
	"airtable_token":          {"patBx8" + "4ZVMNVZXm9P.66d115b464c02e66db6a7f18a9acfa639592560b3c9963e6aec1383366a54f1f"},
	"artifactory_token":       {"AKCpny" + "gR3XnfolC2HfIzumsf1xBQfwyeWPAGYlScLCIHk3nD7n4NyM803TsLjdjsght3gZOhM"},
	"authress_key":            {"sc_3t3" + "uixh7wmsy.kch1n.acc_jpytn1t8prcc4rq8.Mb0sXNZC0cYtMPNUWTs9XHxNEP4nse4fc7pRqLaCEeJTze1AARYRwST46PlTZ5xO"},
	"beamer_token":            {"b_pj8u" + "gmbx85t47qtyzn9o0dppd0urg9dup51jdtuc0o82"},
	"bedrock_key":             {"ABSKQm" + "Vkcm9ja0FQSUtleS1iJEBfzecReweqrA5r0upVPKFd2WD7kZ63UnYMaO8Dr31cC4uacwZI09vy69vh6UbPjQyFdDI3lT3t3MIpYdORVV96axU1Rmc0qaVELpO5Q059K"},
	"brevo_key":               {"xkeysi" + "b-3398ed623affb4df418aa91a375849cea82544f4de55e4bcf6fa0fb64f9563ef-W82Iy6Ew56omS0KE"},
	"clickhouse_key":          {"4b1dGB" + "zD2WkLPEXaaThD9TZ0GEGZKgSKpCWEiJZS3x"},
	"clojars_token":           {"CLOJAR" + "S_gupp4w701kqa9pnbjgrm5ow3ks3xorwr3vym108cb38v740f635979bap6dz"},
	"cloudflare_key":          {"v1.0-9" + "c82e75e7c5f748a18830cc1-e3e3ec952ab59b84348226f19e6831c1116483e22224ac9a3b15df7f701b7741e43cb28fa9cb3c14b0473f46b6a088cc9b6a62da847e219ba88bd06ea29abc0c10296ddfda531726c2", "cfut_" + "Ab3dE5fGh7Jk9Lm2Np4Qr6St8Uv0Wx1Yz3Ab5Cd7" + "1a3f5c7e"},
	"definednetworking_token": {"dnkey-" + "175r8kg8p1w0d6rqlbugvz96jx-msb1k2k969sm3e3c36vtlq60giubm4adx5bts4ixgopby4prvryj"},
	"dropbox_token":           {"sl.m_p" + "Rt_YfskkggGjidIXat-G5HOaBt3GxwW86hl-tRTlRQe6BxwiLsG-7Jsm6jQfs0BkGyGtZXc1X4f7cdFM0eXMx8R9XngCisaHxD5_wu-ULQoWGx4JSaxKeXxMxBtJLsP4V_DZxR5gx"},
	"duffel_token":            {"duffel" + "_test_0EFC6ssgG0KlAXi3DHr1kvRqpiA1Am359wOefPdaxsx"},
	"dynatrace_token":         {"dt0c01" + ".F33CJU33RXJ1NJBQR28BWBUG.en8cgITpjPo8u41EHsNiGBxWfyfuCMzPcAbterHoBLszAaJ33Aq3IKXLNVdVx5Zg"},
	"easypost_key":            {"EZAK1l" + "1t6wf3zbbnx54qicwbpuxmiyaq41uqvea7fia3pgl1tipk50ovum"},
	"flutterwave_key":         {"FLWSEC" + "K_TEST-19e1c0946460097a415fd245fd346b10-X"},
	"frameio_token":           {"fio-u-" + "C9v8BncRJOAg3HVR29Y2qop_R3782XSS0uf1nKFOU8jOg_2xrmXczvkIP_VpWrSx"},
	"gocardless_token":        {"live_m" + "1h25aad24zt56fhe64iem6vam8k24bhbceuk3fx"},
	"figma_token":             {"figd_Q" + "7vKp2Lm9XwR4tNz-8sJd3Hq6Yb1Fc5Gw0Zr_eTa"},
	"vercel_token":            {"vcp_" + "4Hq8ZtRkXw2mNcLp9VbYs3Jd"},
	"tailscale_key":           {"tskey-" + "auth-kBZWNR5CNTRL-Vj6b3xPZ9YwH2mKqT4rLs8dNcE1fGuA"},
	"packagist_token":         {"packagist_" + "ort_6675e11a686c692f3f2e3b6ce528c3d122d22d912ea69a20713cdf51714ba710ad74"},
	"harness_key":             {"pat.81" + "IDrjiWqs4MZRHOzloeyx.NAqMgJnJr1pb1FbPiAXQd7y3.rYJVQbpWgAi3CRSucL5n"},
	"infracost_key":           {"ico-qF" + "ObYMraNmovdlJntlbLvMWf6EWYsnj3"},
	"intra42_secret":          {"s-s4t2" + "ud-034f8669b9adf56a28cf31946fe68b2bacd0e29ce9dc18e14fa9010511721c15"},
	"lob_key":                 {"test_p" + "ub_87951793c77abaeecef78ba75e7297e"},
	"maxmind_key":             {"U4g3KQ" + "_guSgrD3UcjzPnFidd3lAg2jRCmt4L_mmk"},
	"octopus_key":             {"API-BH" + "251J6YRI028Q1O8JA1ET8DAH"},
	"onepassword_token":       {"A3-TC8" + "IIF-3SRY8YQ5OE0-0JD58-6JI4U-O4844"},
	"plaid_token":             {"access" + "-sandbox-dab6dab2-56eb-e3f2-356e-3d7002b7a03b"},
	"prefect_key":             {"pnu_zm" + "0u4d5zsSPB4rvmORCRo8fiVfZPEQwJwvBm"},
	"readme_key":              {"rdme_w" + "t8hv6z0zftbwk6q8fhow8em65r91w3dnvibqrjk0xgcuqrqmdjledy6ia8fwzp8wh5c4k"},
	"scalingo_token":          {"tk-us-" + "ZruIrYzIr75KOpd3ZIy_cyGPb8QLRN-QRdMZEV8DylfpcyGx"},
	"settlemint_token":        {"sm_pa" + "t_z530qTeAosfI5veP"},
	"shippo_token":            {"shippo" + "_live_c29d74f92a829a0ca015bd4ab0f7dadca8579d99"},
	"sonar_token":             {"squ_ed" + "5abe7e358f8f494e26b0bd92931b07f15b210a"},
	"sourcegraph_token":       {"sgp_0d" + "d37cd0ae53b248445572a042b553ae8c7c6ae9"},
	"twitter_token":           {"AAAAAA" + "AAAAAAAAAAAAAAAA2VWLVslugmZ51gMjSuIxAM4JTLq3F9wjUKgye8KoMyh6IbB8Rwd3sOOm5EzR1vX2DQzSQtHcvgLhwbVoMd9haj8Hu3"},
	"typeform_token":          {"tfp_ot" + "3VCO0jKA6BKe-kfNx9movxmuP_Uyt46WhTzkFqTugzHov3IOOsdO0a5ix"},
	"yandex_key":              {"AQVNYq" + "K6-IvhpH3e8kalxgbAEoxC2GppnaO4LGax"},
}

// gluedIdentifiers are samples of the scrubber's identifier families that
// a call id can hold: found where a word starts, as in text (an id that is
// one is replaced), but not glued inside an id, where a random id's digits
// and hex would spell them now and then (a 15-digit run passing Luhn's
// check in an fc_ id).
var gluedIdentifiers = map[string][]string{
	"card":        {"4556737586899855", "4556-7375-8689-9855"},
	"iban":        {"GB82WEST12345698765432"},
	"ip":          {"10.20.30.41"},
	"mac_address": {"3c:22:fb:9a:10:e4"},
	"ssn":         {"219-09-9999"},
	"uuid":        {"123e4567-e89b-12d3-a456-426614174000"},
}

// notInCallIDs are the scrubber's families whose values a call id cannot
// hold, and why.
var notInCallIDs = map[string]string{
	"basic_auth":          "a blank after the scheme",
	"bearer_token":        "a blank after the scheme",
	"cookie":              "a header: blanks, '=' and ';'",
	"db_credentials":      "a URL: '/' and '@'",
	"url_password":        "a URL: '/' and '@'",
	"discord_webhook":     "a URL: '/'",
	"slack_webhook":       "a URL: '/'",
	"home_user":           "a path: '/' or '\\'",
	"email":               "'@'",
	"phone":               "'+' and blanks",
	"private_key":         "a PEM block: blanks and line breaks",
	"query_secret":        "a query: '?', '&' and '='",
	"azure_client_secret": "'~'",
	"azure_key":           "a connection string: '=' and ';'",
	"openshift_token":     "'~'",
	"teams_webhook":       "a URL: '/' and '@'",
	"zapier_webhook":      "a URL: '/'",
	"salesforce_token":    "'!' after the organization's id",
	"high_entropy":        "a random run is what a model's call id is: SafeCallID does not ask",
}

// TestSafeCallIDGluedSecrets: a secret or identifier glued to the prefix
// of a model call id (call_ghp_…, call_AKIA…, toolu_01 and a token, fc_…),
// where the scrubber, which looks where words start, does not see it, is
// found all the same: every such id is replaced. Every family of the
// default scrubber is covered, by a sample or by the reason a call id
// cannot hold it. Model call ids that hold nothing pass as they are.
func TestSafeCallIDGluedSecrets(t *testing.T) {
	for _, f := range scrub.Families() {
		n := 0
		for _, m := range []map[string][]string{gluedSamples, gluedIdentifiers} {
			if _, ok := m[f]; ok {
				n++
			}
		}
		if _, ok := notInCallIDs[f]; ok {
			n++
		}
		if n != 1 {
			t.Errorf("family %s: give it a sample a call id can hold (a secret's or an identifier's), or the reason it cannot, and only one", f)
		}
	}
	for family, samples := range gluedIdentifiers {
		for _, id := range samples {
			if m := scrub.Default().Find(id); len(m) != 1 || m[0].Family != family {
				t.Errorf("%s: the sample %q reads as %+v", family, id, m)
			}
			if got := toolmw.SafeCallID(id); got == id {
				t.Errorf("%s: SafeCallID(%q) passes it as it is", family, id)
			}
		}
	}
	// SafeCallID does not ask high_entropy (a call id is a random run):
	// what a glued sample reads as is asked without it too.
	plain, err := scrub.New(scrub.WithoutFamilies("high_entropy"))
	if err != nil {
		t.Fatal(err)
	}
	glue := []string{"", "call_", "call", "toolu_01", "toolu_01Ab3", "fc_", "fc_67ab", "x", "X", "0", "call_ab", "call-", "call-x", "_", "a1B2c3"}
	tails := []string{"", "_end"}
	for family, samples := range gluedSamples {
		for _, sample := range samples {
			if m := scrub.Default().Find(sample); len(m) != 1 || m[0].Family != family || m[0].Start != 0 && family != "password" && family != "secret" && family != "aws_secret_key" {
				t.Errorf("%s: the sample %.20q reads as %+v", family, sample, m)
				continue
			}
			for _, g := range glue {
				for _, tail := range tails {
					if plain.Find(sample+tail) == nil {
						continue // the tail makes it something else ("…_end" after a UUID)
					}
					id := g + sample + tail
					if len(id) > toolmw.MaxCallIDLen {
						id = id[:toolmw.MaxCallIDLen] // longer ids are replaced anyway; keep the glued start
						if plain.Find(id[len(g):]) == nil {
							continue // the sample no longer fits whole
						}
					}
					if got := toolmw.SafeCallID(id); got == id {
						t.Errorf("%s glued: SafeCallID(%.60q) passes it as it is", family, id)
					}
				}
			}
		}
	}
	// Model call ids holding nothing pass: each shape with random bodies.
	rng := rand.New(rand.NewPCG(1, 2))
	const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	const hexDigits = "0123456789abcdef"
	body := func(set string, n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = set[rng.IntN(len(set))]
		}
		return string(b)
	}
	for range 20000 {
		for _, id := range []string{
			"call_" + body(alnum, 24),
			"toolu_01" + body(alnum, 22),
			"fc_" + body(hexDigits, 48),
			body(alnum, 9),
			"chatcmpl-tool-" + body(hexDigits, 32),
		} {
			if toolmw.SafeCallID(id) != id {
				t.Errorf("the clean id %q is replaced", id)
			}
		}
	}
}
