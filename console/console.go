package console

import (
	"crypto/rand"
	"embed"
	"html/template"
	"io/fs"
	"net/http"
)

//go:embed assets
var assets embed.FS

// pages are the console's HTML templates, parsed once.
var pages = template.Must(template.ParseFS(assets, "assets/*.html"))

// view is one page of the console, listed on its index.
type view struct {
	Path  string // relative to the console's root, as the index links it
	Title string
	About string
}

// console is the handler New makes.
type console struct {
	mux   *http.ServeMux
	views []view
	csrf  csrf
	desk  *deskConfig
	state *stateConfig
}

// New returns the console configured by opts: an http.Handler serving an
// index of its views and the views themselves, with their JSON. Mount it
// under a prefix that ends in a slash, stripped:
//
//	mux.Handle("/debug/toolmw/", http.StripPrefix("/debug/toolmw", console.New(opts...)))
//
// Its pages link relatively, so any prefix works. Every response is
// marked not to be cached, framed or sniffed, and its pages load no script,
// style or data from anywhere else (a Content-Security-Policy). With an invalid option
// (see [Validate]) it answers every request with 500. The handler is safe
// for concurrent use.
func New(opts ...Option) http.Handler {
	c := newConfig(opts)
	if c.err != nil {
		return secure(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "console: misconfigured (see console.Validate)", http.StatusInternalServerError)
		}))
	}
	h := &console{mux: http.NewServeMux(), desk: c.desk, state: c.state}
	h.csrf.key = c.csrfKey
	if h.csrf.key == nil {
		h.csrf.key = make([]byte, MinCSRFKeyLen)
		_, _ = rand.Read(h.csrf.key) // crypto/rand.Read never fails (Go 1.24+)
	}
	static, _ := fs.Sub(assets, "assets") // a constant path into the embedded files
	h.mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	h.mux.HandleFunc("GET /{$}", h.index)
	if h.state != nil {
		h.addState()
	}
	if h.desk != nil {
		h.addDesk()
	}
	// State changes come only by POST, and only from the console's own
	// origin (Sec-Fetch-Site, else Origin against Host); each view also
	// checks its form's token.
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		refuse(w, http.StatusForbidden, "Refused: the request came from another site.")
	}))
	return secure(cop.Handler(h.mux))
}

// secure sets the headers of every response of the console.
func secure(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Cache-Control", "no-store")
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("X-Frame-Options", "DENY")
		hd.Set("Referrer-Policy", "same-origin")
		hd.Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; img-src 'self'; script-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
		next.ServeHTTP(w, r)
	})
}

func (h *console) index(w http.ResponseWriter, _ *http.Request) {
	render(w, http.StatusOK, "index.html", struct{ Views []view }{h.views})
}

// render writes the template name with data, or a bare 500.
func render(w http.ResponseWriter, status int, name string, data any) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_ = pages.ExecuteTemplate(w, name, data) // a write error: the client left
}

// refuse answers with status and a fixed sentence, as a page.
func refuse(w http.ResponseWriter, status int, msg string) {
	render(w, status, "refused.html", struct {
		Status  int
		Message string
	}{status, msg})
}

// ServeHTTP implements http.Handler.
func (h *console) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }
