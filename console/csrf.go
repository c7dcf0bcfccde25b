package console

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
)

// The anti-forgery token of a form: an HMAC, under the console's key, of
// the browser session's cookie and the reviewer, so a token taken from one
// session or reviewer is worth nothing in another. The cookie is random,
// HttpOnly and SameSite=Strict; the token travels in the form. Together
// with the origin check every POST passes first (http.CrossOriginProtection),
// a page of another site can neither send the cookie with a request nor
// know the token.

// sessionCookie names the console's session cookie.
const sessionCookie = "toolmw_console_session"

type csrf struct{ key []byte }

// session returns the browser session's cookie value, setting a new one on
// w when the request has none (or one not of the console's shape).
func (c csrf) session(w http.ResponseWriter, r *http.Request) string {
	if ck, err := r.Cookie(sessionCookie); err == nil && validSession(ck.Value) {
		return ck.Value
	}
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	v := base64.RawURLEncoding.EncodeToString(b)
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: v, Path: "/", HttpOnly: true,
		Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode})
	return v
}

func validSession(v string) bool {
	b, err := base64.RawURLEncoding.DecodeString(v)
	return err == nil && len(b) == 32
}

// token returns the form token of session and reviewer.
func (c csrf) token(session, reviewer string) string {
	m := hmac.New(sha256.New, c.key)
	m.Write([]byte("toolmw console csrf\x00"))
	m.Write([]byte(session))
	m.Write([]byte{0})
	m.Write([]byte(reviewer))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// check reports whether the request carries the session cookie and the
// token of that session and reviewer.
func (c csrf) check(r *http.Request, reviewer, token string) bool {
	ck, err := r.Cookie(sessionCookie)
	if err != nil || !validSession(ck.Value) || token == "" {
		return false
	}
	return hmac.Equal([]byte(token), []byte(c.token(ck.Value, reviewer)))
}
