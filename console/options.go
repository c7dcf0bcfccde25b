package console

import (
	"fmt"
	"net/http"
	"time"

	"github.com/toolmw/toolmw/middleware/approval"
	"github.com/toolmw/toolmw/taxonomy"
)

// Option configures the console [New] makes.
type Option func(*config)

// DeskOption configures the approval desk view ([WithDesk]).
type DeskOption func(*deskConfig)

// DefaultApprovalTTL is how long an approval made in the page stands
// unused, unless [WithApprovalTTL] says otherwise.
const DefaultApprovalTTL = 15 * time.Minute

// MinCSRFKeyLen is the shortest key [WithCSRFKey] accepts.
const MinCSRFKeyLen = 32

type config struct {
	desk    *deskConfig
	state   *stateConfig
	csrfKey []byte
	err     error
}

type deskConfig struct {
	desk      *approval.Desk
	reviewer  func(*http.Request) (string, bool)
	authorize func(reviewer, tool string) bool
	ttl       time.Duration
}

func (c *config) reject(format string, args ...any) {
	if c.err == nil {
		c.err = taxonomy.New(taxonomy.KindDefinitionInvalid, taxonomy.CodeOptionInvalid,
			fmt.Sprintf("console: "+format, args...))
	}
}

// WithDesk adds the approval desk: a page (and its JSON) listing the
// requests of desk that wait for a decision, where a reviewer approves or
// denies them with a reason. Access is the application's decision, so the
// desk needs both [WithReviewer] and [WithAuthorize]; without either it is
// an invalid option (see [Validate]) and the console refuses every
// request. A nil desk is invalid too.
func WithDesk(desk *approval.Desk, opts ...DeskOption) Option {
	return func(c *config) {
		if desk == nil {
			c.reject("WithDesk: a nil Desk")
			return
		}
		d := &deskConfig{desk: desk, ttl: DefaultApprovalTTL}
		for _, o := range opts {
			if o != nil {
				o(d)
			}
		}
		switch {
		case d.reviewer == nil:
			c.reject("WithDesk needs WithReviewer: who is the reviewer of a request is the application's to say")
		case d.authorize == nil:
			c.reject("WithDesk needs WithAuthorize: which tools a reviewer may decide is the application's to say")
		case d.ttl <= 0 || d.ttl > approval.MaxTTL:
			c.reject("WithApprovalTTL(%v): it must be above 0 and at most %v", d.ttl, approval.MaxTTL)
		}
		c.desk = d
	}
}

// WithReviewer sets how the desk learns who sends a request: f returns the
// reviewer's identity (1 to approval.MaxReviewerLen bytes of text, as the
// application knows them: it is recorded in the sealed row with every
// decision) and true, or false when the request comes from nobody allowed
// to review; then the desk answers 403 and shows nothing. It typically
// reads the session the application's own login made. f must be safe for
// concurrent use; a panic in it refuses the request.
func WithReviewer(f func(r *http.Request) (reviewer string, ok bool)) DeskOption {
	return func(d *deskConfig) { d.reviewer = f }
}

// WithAuthorize sets which tools a reviewer may decide: f(reviewer, tool)
// is asked, on the server, for every decision before it is made (and for
// each request listed, to offer the buttons only where it would say yes);
// false refuses the decision with 403. f must be safe for concurrent use;
// a panic in it refuses.
func WithAuthorize(f func(reviewer, tool string) bool) DeskOption {
	return func(d *deskConfig) { d.authorize = f }
}

// WithApprovalTTL sets how long an approval made in the page stands
// unused: above 0, at most approval.MaxTTL. 0 means [DefaultApprovalTTL].
func WithApprovalTTL(ttl time.Duration) DeskOption {
	return func(d *deskConfig) {
		if ttl != 0 {
			d.ttl = ttl
		}
	}
}

// WithCSRFKey sets the key that binds the page's anti-forgery tokens to
// the browser session and the reviewer: at least [MinCSRFKeyLen] bytes,
// the same for every replica serving the console behind one address. nil
// means the default, a key made at random for the console (then a token
// holds only on the replica that issued it). The console keeps a copy.
func WithCSRFKey(key []byte) Option {
	return func(c *config) {
		if key == nil {
			return
		}
		if len(key) < MinCSRFKeyLen {
			c.reject("WithCSRFKey: a key of %d bytes; at least %d are needed", len(key), MinCSRFKeyLen)
			return
		}
		c.csrfKey = append([]byte(nil), key...)
	}
}

func newConfig(opts []Option) config {
	var c config
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	return c
}

// Validate reports the first invalid option value, as a
// tool-definition-invalid error with code option_invalid, or nil. A
// console made with an invalid option answers every request with 500 and
// a fixed sentence.
func Validate(opts ...Option) error {
	return newConfig(opts).err
}
