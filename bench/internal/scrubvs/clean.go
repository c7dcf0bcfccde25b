package scrubvs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
)

// Clean generates the constructed clean errors, category → messages: the text tools and the Go
// ecosystem print that holds no secret but has shapes a scanner may mistake for one (hex and
// base64 digests, long identifiers, URLs, numbers). The values in them are random, from fixed
// seeds (one per category), in the formats the real tools print. bench/testdata/scrubvs/clean.json
// holds the output; `go test -run TestCleanCorpusFile -update` in bench rewrites it.
func Clean() map[string][]string {
	out := map[string][]string{}
	for i, c := range cleanCategories {
		r := &gen{rand.New(rand.NewPCG(uint64(1000+i), 31))}
		msgs := make([]string, 0, cleanPerCategory)
		for j := 0; j < cleanPerCategory; j++ {
			msgs = append(msgs, c.make(r, j))
		}
		out[c.name] = msgs
	}
	return out
}

// CleanJSON is Clean encoded as testdata/scrubvs/clean.json holds it.
func CleanJSON() []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(Clean()); err != nil {
		panic(err)
	}
	return b.Bytes()
}

const cleanPerCategory = 30

type gen struct{ r *rand.Rand }

const (
	hexDigits = "0123456789abcdef"
	lower     = "abcdefghijklmnopqrstuvwxyz"
	alnum     = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	b64std    = alnum + "+/"
)

func (g *gen) str(alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[g.r.IntN(len(alphabet))]
	}
	return string(b)
}

func (g *gen) hex(n int) string { return g.str(hexDigits, n) }
func (g *gen) n(lo, hi int) int { return lo + g.r.IntN(hi-lo+1) }
func (g *gen) pick(xs ...string) string {
	return xs[g.r.IntN(len(xs))]
}

// b64 returns the base64 text of n random bytes, with padding.
func (g *gen) b64(n int) string {
	s := g.str(b64std, (n*8+5)/6)
	switch n % 3 {
	case 1:
		return s + "=="
	case 2:
		return s + "="
	}
	return s
}

func (g *gen) word() string {
	return g.pick("orders", "billing", "inventory", "users", "sessions", "payments", "catalog", "search", "shipments", "invoices")
}

func (g *gen) module() string {
	return g.pick("github.com/google/uuid", "github.com/stretchr/testify", "golang.org/x/net", "golang.org/x/sys",
		"github.com/jackc/pgx/v5", "go.opentelemetry.io/otel", "github.com/spf13/cobra", "google.golang.org/grpc",
		"github.com/prometheus/client_golang", "gopkg.in/yaml.v3")
}

func (g *gen) version() string {
	return fmt.Sprintf("v%d.%d.%d", g.n(0, 3), g.n(0, 40), g.n(0, 20))
}

var cleanCategories = []struct {
	name string
	make func(g *gen, i int) string
}{
	{"http_status", func(g *gen, i int) string {
		switch i % 6 {
		case 0:
			return fmt.Sprintf("GET https://api.partner.example/v1/%s/%d: %s", g.word(), g.n(1000, 99999),
				g.pick("503 Service Unavailable", "502 Bad Gateway", "404 Not Found", "429 Too Many Requests", "500 Internal Server Error"))
		case 1:
			return fmt.Sprintf("HTTP/1.1 %s", g.pick("401 Unauthorized", "403 Forbidden", "409 Conflict", "504 Gateway Timeout", "422 Unprocessable Entity"))
		case 2:
			return fmt.Sprintf(`Post "https://%s.internal:%d/%s": net/http: request canceled (Client.Timeout exceeded while awaiting headers)`, g.word(), g.n(8000, 9999), g.word())
		case 3:
			return fmt.Sprintf("unexpected status 429 Too Many Requests (retry after %ds, x-request-id %s)", g.n(1, 120), g.hex(16))
		case 4:
			return fmt.Sprintf(`Get "https://%s.partner.example/healthz": dial tcp: lookup %s.partner.example on 127.0.0.53:53: no such host`, g.word(), g.word())
		default:
			return fmt.Sprintf(`{"error":{"code":%d,"message":"%s","status":"%s"}}`, g.pick3(404, 429, 503), g.pick("Requested entity was not found.", "Quota exceeded for quota metric 'Requests' and limit 'Requests per minute'.", "The service is currently unavailable."), g.pick("NOT_FOUND", "RESOURCE_EXHAUSTED", "UNAVAILABLE"))
		}
	}},
	{"sql", func(g *gen, i int) string {
		switch i % 6 {
		case 0:
			return fmt.Sprintf(`ERROR: duplicate key value violates unique constraint "%s_pkey" (SQLSTATE 23505)`, g.word())
		case 1:
			return fmt.Sprintf(`pq: relation "%s_%s" does not exist`, g.word(), g.word())
		case 2:
			return fmt.Sprintf(`Error 1062 (23000): Duplicate entry '%d' for key '%s.PRIMARY'`, g.n(1, 9999999), g.word())
		case 3:
			return "sql: no rows in result set"
		case 4:
			return fmt.Sprintf(`ERROR: column "%s_id" of relation "%s" does not exist at character %d`, g.word(), g.word(), g.n(10, 400))
		default:
			return fmt.Sprintf(`sqlite3: constraint failed: UNIQUE constraint failed: %s.%s_id`, g.word(), g.word())
		}
	}},
	{"stack_trace", func(g *gen, i int) string {
		switch i % 3 {
		case 0:
			return fmt.Sprintf("goroutine %d [running]:\nmain.(*Server).handle(0xc000%06x, {0x%x, 0xc000%06x})\n\t/app/internal/server/%s.go:%d +0x%x\nnet/http.HandlerFunc.ServeHTTP(0x%x, {0x%x, 0xc000%06x}, 0xc000%06x)\n\t/usr/local/go/src/net/http/server.go:%d +0x%x",
				g.n(1, 500), g.r.IntN(1<<24), g.r.IntN(1<<24), g.r.IntN(1<<24), g.word(), g.n(10, 900), g.r.IntN(1<<12),
				g.r.IntN(1<<24), g.r.IntN(1<<24), g.r.IntN(1<<24), g.r.IntN(1<<24), g.n(2000, 3500), g.r.IntN(1<<12))
		case 1:
			return fmt.Sprintf("Traceback (most recent call last):\n  File \"/usr/lib/python3.11/site-packages/requests/adapters.py\", line %d, in send\n    raise ConnectionError(e, request=request)\nrequests.exceptions.ConnectionError: HTTPSConnectionPool(host='%s.partner.example', port=443): Max retries exceeded with url: /v1/%s (Caused by NewConnectionError('<urllib3.connection.HTTPSConnection object at 0x7f%010x>: Failed to establish a new connection: [Errno 111] Connection refused'))",
				g.n(400, 700), g.word(), g.word(), g.r.Int64N(1<<40))
		default:
			return fmt.Sprintf("java.lang.IllegalStateException: %s not initialised\n\tat com.example.%s.%sService.place(%sService.java:%d)\n\tat com.example.%s.%sController.post(%sController.java:%d)\n\tat java.base/java.lang.Thread.run(Thread.java:%d)",
				g.word(), g.word(), "Order", "Order", g.n(20, 400), g.word(), "Order", "Order", g.n(20, 400), g.n(800, 1600))
		}
	}},
	{"git", func(g *gen, i int) string {
		switch i % 5 {
		case 0:
			return fmt.Sprintf("commit %s\nAuthor: CI Bot\n\n    fix retry budget", g.hex(40))
		case 1:
			return fmt.Sprintf("HEAD is now at %s fix(%s): handle empty page", g.hex(7), g.word())
		case 2:
			return fmt.Sprintf("error: cannot lock ref 'refs/heads/main': is at %s but expected %s", g.hex(40), g.hex(40))
		case 3:
			return fmt.Sprintf("fatal: reference is not a tree: %s", g.hex(40))
		default:
			return fmt.Sprintf("Merge %s into %s: conflict in internal/%s/%s.go", g.hex(12), g.hex(12), g.word(), g.word())
		}
	}},
	{"go_sum", func(g *gen, i int) string {
		m, v := g.module(), g.version()
		if i%2 == 0 {
			return fmt.Sprintf("%s %s h1:%s", m, v, g.b64(32))
		}
		return fmt.Sprintf("%s %s/go.mod h1:%s", m, v, g.b64(32))
	}},
	{"hash", func(g *gen, i int) string {
		switch i % 6 {
		case 0:
			return fmt.Sprintf("pulling image registry.example.com/%s@sha256:%s: not found", g.word(), g.hex(64))
		case 1:
			return fmt.Sprintf("%s  %s-%s-linux-amd64.tar.gz", g.hex(64), g.word(), g.version())
		case 2:
			return fmt.Sprintf("checksum mismatch: expected md5 %s, got %s", g.hex(32), g.hex(32))
		case 3:
			return fmt.Sprintf(`npm ERR! integrity: sha512-%s`, g.b64(64))
		case 4:
			return fmt.Sprintf("ETag: \"%s\"", g.hex(32))
		default:
			return fmt.Sprintf("sha1 %s does not match %s for object %s", g.hex(40), g.hex(40), g.word())
		}
	}},
	{"path", func(g *gen, i int) string {
		switch i % 5 {
		case 0:
			return fmt.Sprintf("open /var/lib/%s/data/%s-%d.db: no such file or directory", g.word(), g.word(), g.n(1, 99))
		case 1:
			return "stat /etc/ssl/certs/ca-certificates.crt: permission denied"
		case 2:
			return fmt.Sprintf(`C:\Program Files\%s\bin\%s.exe: The system cannot find the file specified.`, strings.ToUpper(g.word()[:1])+g.word()[1:], g.word())
		case 3:
			return fmt.Sprintf("/go/pkg/mod/%s@%s/%s.go:%d:%d: undefined: %sConfig", g.module(), g.version(), g.word(), g.n(1, 500), g.n(1, 80), g.word())
		default:
			return fmt.Sprintf("mkdir /tmp/%s-%s: read-only file system", g.word(), g.str(hexDigits[:10], 9))
		}
	}},
	{"url", func(g *gen, i int) string {
		switch i % 5 {
		case 0:
			return fmt.Sprintf("see https://pkg.go.dev/%s@%s#Config", g.module(), g.version())
		case 1:
			return fmt.Sprintf("GET https://search.example.com/v1/%s?q=%s&page=%d&limit=%d: 200 OK", g.word(), g.word(), g.n(1, 20), g.pick3(10, 50, 100))
		case 2:
			return fmt.Sprintf("redirected to https://docs.example.com/%s/%s/#%s-%s", g.word(), g.version(), g.word(), g.word())
		case 3:
			return fmt.Sprintf("fetching https://github.com/example/%s/archive/refs/tags/%s.tar.gz failed: 404", g.word(), g.version())
		default:
			return fmt.Sprintf("ws://localhost:%d/socket?room=%s&v=2 closed: 1006 (abnormal closure)", g.n(3000, 9000), g.word())
		}
	}},
	{"version", func(g *gen, i int) string {
		switch i % 5 {
		case 0:
			return fmt.Sprintf("go version go1.%d.%d linux/amd64", g.n(20, 26), g.n(0, 12))
		case 1:
			return fmt.Sprintf("%s %s-rc.%d+build.%d", g.word(), g.version(), g.n(1, 5), g.n(100, 9999))
		case 2:
			return fmt.Sprintf("require %s v0.0.0-2024%02d%02d%02d%02d%02d-%s: invalid version", g.module(), g.n(1, 12), g.n(1, 28), g.n(0, 23), g.n(0, 59), g.n(0, 59), g.hex(12))
		case 3:
			return fmt.Sprintf(`Client Version: version.Info{Major:"1", Minor:"%d", GitVersion:"v1.%d.%d", GitCommit:"%s", GoVersion:"go1.%d.%d"}`, g.n(25, 31), g.n(25, 31), g.n(0, 9), g.hex(40), g.n(20, 26), g.n(0, 9))
		default:
			return fmt.Sprintf("node %s, npm %d.%d.%d, openssl 3.%d.%d", g.version(), g.n(8, 10), g.n(0, 9), g.n(0, 9), g.n(0, 3), g.n(0, 9))
		}
	}},
}

func (g *gen) pick3(a, b, c int) int {
	return []int{a, b, c}[g.r.IntN(3)]
}
