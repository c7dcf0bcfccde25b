package scrub

import (
	"strings"
	"testing"
)

// The cases of family high_entropy: random runs with no word to name
// them, and the runs that are not secrets.
var (
	tRand62  = "5oK0U90ME14yU6CVxV90crvfqVlNH2wRKBwcLWDc"
	tRand36  = "b11573k9ert59cgmxcrv5p631mz7l8"
	tRandB64 = "jC+6TUUjCNHcVtAXpcqBCgxnA8r+qD6MatnYaf/+289y7HWpK0BWPyLHv/K4DMN32fufwm=="
	tRandURL = "w0-9ot1_7gxyygvik_g35ujy2n6ddbpk3kzdpvby"
)

func init() {
	he := r("high_entropy")
	cases = append(cases,
		pos("high_entropy", tRand62, he),
		pos("high_entropy", "panic: vendor client: init with "+tRand36+": unexpected response 401", "panic: vendor client: init with "+he+": unexpected response 401"),
		pos("high_entropy", `{"detail":"value `+tRandB64+` was rejected"}`, `{"detail":"value `+he+` was rejected"}`),
		pos("high_entropy", "rejected: "+tRandURL+".", "rejected: "+he+"."),
		pos("high_entropy", "error: "+tRand62+"\n"+tRand62, "error: "+he+"\n"+he),
		// Hexadecimal and digits: hashes, SHAs, ids.
		neg("high_entropy", "commit 09e14370cff946989aa00a901fe962768f64e5cc"),
		neg("high_entropy", "trace 4bf92f3577b34da6a3ce929d0e0e4736 span 00f067aa0ba902b7"),
		neg("high_entropy", "order 123456789012345678901234 shipped"),
		neg("high_entropy", "instance i-0f9a8b7c6d5e4f3210a not found"),
		// Labelled digests.
		neg("high_entropy", "golang.org/x/text v0.21.0 h1:4UGqBwDSbQg7bd8e1vCp2Ti8RM8Jdh3FB8zCh+vEWC0="),
		neg("high_entropy", "integrity sha512-Nv7mh7dIXbZDBBb9H8fD1yT5pmyA3JUrMUNVyI0QS3yLQDnRKqN6ukB8z+4MBZOf4ZhKDpnfPgf"),
		neg("high_entropy", "ssh key fingerprint SHA256:nThbg6kXUpJWGl7E1IGOCspRomTxdCARLviKw6E5SY8"),
		// Names written in words.
		neg("high_entropy", "x509: failed to parse private key (use ParsePKCS8PrivateKey instead for this key format)"),
		neg("high_entropy", "pod orders-7d9f8b6c5-x2x9k crashed: back-off restarting failed container"),
		neg("high_entropy", "pub const SN_id_Gost28147_89_None_KeyMeshing"),
		// Values of keys: their key says what they are.
		neg("high_entropy", "csrf-token=x9Qm2vKp7LzR4tNw8YbC3dFh6JsA1eGu"),
		neg("high_entropy", `{"requestId": "Q7V3KLJ2M5N8P0R4S6T9U1W3X5Y7Z9AB"}`),
		neg("high_entropy", "RequestID: Q7V3KLJ2M5N8P0R4S6T9U1W3X5Y7Z9AB, retry later"),
		// Joined to a host, a file or an address; encoded text; placeholders.
		neg("high_entropy", "open /data/5oK0U90ME14yU6CVxV90crvfqVlNH2wR.json: no such file"),
		neg("high_entropy", "dial x7Kp2mQ9vL4nR8tW3yB6cD1fG5hJ0sA.internal.example.com:443"),
		neg("high_entropy", "payload aGVsbG8gd29ybGQsIHRoaXMgaXMganVzdCB0ZXh0Lg== accepted"),
		neg("high_entropy", "cert AAAAAAAAAAAAAAAAAAAAAAAAAAAwQQYDVR0fBDowODA2oDSgMoYwaHR0cDovL2Ny"),
		neg("high_entropy", "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ7vKp2Lm9XwR4tNzB8yC3dFh6JsA1eGu\n-----END CERTIFICATE-----"),
		neg("high_entropy", "-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nmQENBFOrMNcBCAC+gLI4s3bUkobS5NpOQbWfjWXbqC0Ixpc5bZYDOvsmfstmswna\n"),
	)
}

// TestHighEntropyRecall generates random runs of each alphabet keys are
// made of and of lengths 20 to 64, alone and inside a sentence, and counts
// how many are found: a random run must be found (almost) always. The
// generator is seeded, so the count is the same on every run.
func TestHighEntropyRecall(t *testing.T) {
	g := newGen(3142)
	for _, a := range []struct {
		name, alphabet string
		min            float64 // the share that must be found
	}{
		{"base62", gAlnum, 0.97},
		{"base64url", gB64URL, 0.95},
		{"base64", gB64, 0.95},
		{"lower+digits", gLowDig, 0.95},
		{"upper+digits", gUpDig, 0.95},
	} {
		found, n := 0, 0
		for k := 0; k < 400; k++ {
			v := g.str(a.alphabet, 20+k%45)
			v = strings.Trim(v, "-_+/")
			if len(v) < minRandomRun {
				continue
			}
			n++
			if String("upstream refused "+v+" (401)") == "upstream refused "+r("high_entropy")+" (401)" {
				found++
			}
		}
		if got := float64(found) / float64(n); got < a.min {
			t.Errorf("%s: %d of %d random runs found (%.1f%%), want %.0f%% or more", a.name, found, n, 100*got, 100*a.min)
		}
	}
}

// TestHighEntropyWords checks that identifiers written in words, as code
// and messages name things, are never random runs, whatever their length.
func TestHighEntropyWords(t *testing.T) {
	for _, w := range []string{
		"NewGCMWithRandomNonce", "ParsePKCS1PrivateKey", "TreatLikeAScalarOfSize", "ReadUint16LengthPrefixed",
		"IllegalStateException2", "TestHighEntropyWords", "x86_64-unknown-linux-gnu", "kube-apiserver-ip-10-0-1-23",
		"AbstractSingletonProxyFactoryBean", "Base64EncodedSignatureV4", "orders-service-7d9f8b6c5-x2x9k",
		"github.com/aws/aws-sdk-go-v2/service/dynamodb",
	} {
		if got := String("uses " + w + " here"); got != "uses "+w+" here" {
			t.Errorf("String(%q) = %q, want it unchanged", "uses "+w+" here", got)
		}
	}
}
