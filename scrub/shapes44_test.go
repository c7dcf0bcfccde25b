package scrub

import (
	"strings"
	"testing"
)

// Session 44 (issue 31, speed): pairPassword reads the classes of a
// pair's second half before its longer looks, a '/' tries the webhook and
// home-directory matchers only where their text can stand, worthKey
// looks for a weak pair while it finds the key's start, and the look back
// to an Authorization scheme is made only with a scheme word near. These
// are the edges of each; what they find is what was found before.
var shapes44 = []shapeCase{
	// pairPassword: small letters and digits need four letters past f.
	{"pair, three letters past f", "login as ops:ab3g9c2hk1 failed", "login as ops:ab3g9c2hk1 failed"},
	{"pair, four letters past f", "login as ops:abg3hkm9c2 failed", "login as [REDACTED:password] failed"},
	{"pair, hexadecimal", "login as ops:a3b9c2d7e4f1 failed", "login as ops:a3b9c2d7e4f1 failed"},
	{"pair, hexadecimal in both cases", "login as ops:a3B9c2D7e4F1 failed", "login as [REDACTED:password] failed"},
	{"pair, capitals and digits", "login as ops:KQ3XM9ZP2W failed", "login as [REDACTED:password] failed"},
	{"pair, a symbol", "login as ops:Kq3xM9zP!w failed", "login as [REDACTED:password] failed"},
	{"pair, a version", "login as ops:v1.29.6-rc.1 failed", "login as ops:v1.29.6-rc.1 failed"},
	{"pairs, kubectl", `Client Version: version.Info{Major:"1", Minor:"27", GitVersion:"v1.29.6", GitCommit:"7487e231782808c4230f37e2ec994a356fc8cf5b", GoVersion:"go1.23.1"}`,
		`Client Version: version.Info{Major:"1", Minor:"27", GitVersion:"v1.29.6", GitCommit:"7487e231782808c4230f37e2ec994a356fc8cf5b", GoVersion:"go1.23.1"}`},
	// '/': a home directory, a webhook's host, and paths that are neither.
	{"home", "open /home/alice/.ssh/id_rsa: permission denied", "open /home/[REDACTED:home_user]/.ssh/id_rsa: permission denied"},
	{"home, macOS", "open /Users/bob/.aws/credentials: no such file", "open /Users/[REDACTED:home_user]/.aws/credentials: no such file"},
	{"no home", "stat /usr/lib/python3.11/site-packages: no such file", "stat /usr/lib/python3.11/site-packages: no such file"},
	{"webhook", "post https://hooks.slack.com/services/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: 404", "post https://[REDACTED:slack_webhook]: 404"},
	{"no webhook host", "post https://example.com/services/T0AB1CD2E: 404", "post https://example.com/services/T0AB1CD2E: 404"},
	// schemeLook: the farthest a scheme word may stand before a word of
	// credentials (a run of authRunBack token68 bytes, authBlanks blanks),
	// and one byte farther.
	{"bearer, 64 bytes and 9 blanks back", "sent bearer         " + strings.Repeat("abcdefgh.", 7) + "Qx7pW2mZr9Kt then",
		"sent bearer         [REDACTED:bearer_token] then"},
	{"bearer, 64 bytes back", "sent bearer " + strings.Repeat("abcdefgh.", 7) + "-Qx7pW2mZr9Kt then",
		"sent bearer [REDACTED:bearer_token] then"},
	{"bearer, 65 bytes back", "sent bearer " + strings.Repeat("abcdefgh.", 7) + "a.Qx7pW2mZr9Kt then",
		"sent bearer " + strings.Repeat("abcdefgh.", 7) + "a.Qx7pW2mZr9Kt then"},
	{"Bearer, capitalised", "sent Bearer abcdefgh.Qx7pW2mZr9Kt.Rq7Xw2Kp9Lz4 then", "sent Bearer [REDACTED:bearer_token] then"},
	// worthKey: a secret-ish word inside a key.
	{"weak pair inside a key", "mySecretStuff: Qx7pW2mZr9Kt", "mySecretStuff: [REDACTED:secret]"},
	{"weak pair, a word", "mySecretStuff: quietly", "mySecretStuff: quietly"},
	{"weak pair, dotted key", "x.secret.y: Qx7pW2mZr9Kt", "x.secret.y: [REDACTED:secret]"},
}

func TestShapes44(t *testing.T) { checkShapes(t, shapes44) }
