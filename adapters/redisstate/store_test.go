package redisstate_test

import (
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	redisstate "github.com/toolmw/toolmw/adapters/redisstate"
)

// TestNewRefuses: New refuses a nil client, a client that ignores
// contexts' deadlines, and option values it cannot use, which Validate
// reports too.
func TestNewRefuses(t *testing.T) {
	good := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", ContextTimeoutEnabled: true})
	defer good.Close()
	deaf := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer deaf.Close()
	deafCluster := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}})
	defer deafCluster.Close()
	var nilClient *redis.Client
	cases := []struct {
		name   string
		client redis.UniversalClient
		opts   []redisstate.Option
		want   string // in the error; "" means none
	}{
		{"defaults", good, nil, ""},
		{"all options", good, []redisstate.Option{redisstate.WithPrefix("app:{tenant}:"),
			redisstate.WithTimeout(time.Second), redisstate.WithTTL(time.Hour)}, ""},
		{"zero options", good, []redisstate.Option{redisstate.WithPrefix(""), redisstate.WithTimeout(0), redisstate.WithTTL(0), nil}, ""},
		{"nil client", nil, nil, "needs a client"},
		{"nil *Client", nilClient, nil, "needs a client"},
		{"no context timeouts", deaf, nil, "ContextTimeoutEnabled"},
		{"cluster without context timeouts", deafCluster, nil, "ContextTimeoutEnabled"},
		{"long prefix", good, []redisstate.Option{redisstate.WithPrefix(strings.Repeat("p", redisstate.MaxPrefixLen+1))}, "at most 64 bytes"},
		{"prefix with a space", good, []redisstate.Option{redisstate.WithPrefix("my app:")}, "printable"},
		{"prefix with a newline", good, []redisstate.Option{redisstate.WithPrefix("app\r\n")}, "printable"},
		{"negative timeout", good, []redisstate.Option{redisstate.WithTimeout(-time.Second)}, "WithTimeout"},
		{"negative TTL", good, []redisstate.Option{redisstate.WithTTL(-time.Second)}, "WithTTL"},
		{"TTL under a millisecond", good, []redisstate.Option{redisstate.WithTTL(time.Microsecond)}, "WithTTL"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := redisstate.New(tc.client, tc.opts...)
			if tc.want == "" {
				if err != nil || s == nil {
					t.Fatalf("New = %v, %v; want a Store", s, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New error = %v, want one saying %q", err, tc.want)
			}
			if s != nil {
				t.Error("New returned a Store with its error")
			}
			if verr := redisstate.Validate(tc.opts...); tc.opts != nil && (verr == nil || verr.Error() != err.Error()) {
				t.Errorf("Validate = %v, want New's error %v", verr, err)
			}
		})
	}
}
