package scrub

import "testing"

// Session 45 (issue 31, speed): mayMatchWord lets matchWord try a word
// only where one of its matchers may begin, worthKey reads a key before
// ':' that ends like a term further only where keyKind or secretData may
// take it, and the look back for a PEM block's or a YAML document's
// marker searches forward. These are the edges of each; what they find
// is what was found before.
var shapes45 = []shapeCase{
	// mayMatchWord: tokens that start with no prefix of their own.
	{"Discord bot token, 24-byte first part", "bot MTIzNDU2Nzg5MDEyMzQ1Njc4.GAbcde.abcdefghijklmnopqrstuvwxyz0123 rejected",
		"bot [REDACTED:discord_token] rejected"},
	{"Discord-like, 23-byte first part", "bot MTIzNDU2Nzg5MDEyMzQ1Njc.GAbcde.abcdefghijklmnopqrstuvwxyz0123 rejected",
		"bot MTIzNDU2Nzg5MDEyMzQ1Njc.GAbcde.abcdefghijklmnopqrstuvwxyz0123 rejected"},
	{"MaxMind license key", "geoip: key 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 expired", "geoip: key [REDACTED:maxmind_key] expired"},
	{"Telegram bot token, short bot id", "bot 35378:AAGqXzKq3xM9zP2wLm4Vb8Nc1Dz5Rt7Yh3Gf0 revoked", "bot [REDACTED:telegram_token] revoked"},
	{"UUID", "order 123e4567-e89b-42d3-a456-426614174000 not found", "order [REDACTED:uuid] not found"},
	{"MAC address, dotted", "port 3c22.fb9a.10e4 down", "port [REDACTED:mac_address] down"},
	{"Harness key after its prefix", "key pat.Ab3dEf6hIj9kLm2oPq5sTu.Q7vKp2Lm9XwR4tNz8bY5cF1g.Zz9Yy8Xx7Ww6Vv5Uu4Tt in use",
		"key [REDACTED:harness_key] in use"},
	{"Vault token after hvs.", "vault: hvs.CAESIJ3xZq7Kp2Lm9WvR4tNzQ8bY5cF1gH6 denied", "vault: [REDACTED:vault_token] denied"},
	{"no token: names in a path", "at com.example.billing.OrderService.place(OrderService.java:358)",
		"at com.example.billing.OrderService.place(OrderService.java:358)"},
	{"no token: versions", "require golang.org/x/sys v0.0.0-20241102055051-1f96126baa6f", "require golang.org/x/sys v0.0.0-20241102055051-1f96126baa6f"},
	// worthKey before ':': keys that end like a term.
	{"error chain", "upload failed: connection: IllegalStateException: boom", "upload failed: connection: IllegalStateException: boom"},
	{"a term ends the key", "session token: Qx7pW2mZr9KtLm4V", "session token: [REDACTED:secret]"},
	{"key after a qualifier", "API Key: Qx7pW2mZr9KtLm4V", "API Key: [REDACTED:secret]"},
	{"a secret-ish word inside, then a term's ending", "mySecretRegion: Qx7pW2mZr9KtLm4V", "mySecretRegion: [REDACTED:secret]"},
	{"a secret-ish word inside, then id", "api_token_uid: Qx7pW2mZr9KtLm4V", "api_token_uid: [REDACTED:secret]"},
	{"a secret-ish word's hash, then a term's ending", "password_hash_id: Qx7pW2mZr9KtLm4V", "password_hash_id: Qx7pW2mZr9KtLm4V"},
	{"a Secret's data, a key that ends like a term", "kind: Secret\ndata:\n  region: c2VjcmV0LXZhbHVlLTEyMzQ=\n",
		"kind: Secret\ndata:\n  region: [REDACTED:secret]\n"},
	{"a ConfigMap's data, the same key", "kind: ConfigMap\ndata:\n  region: c2VjcmV0LXZhbHVlLTEyMzQ=\n",
		"kind: ConfigMap\ndata:\n  region: c2VjcmV0LXZhbHVlLTEyMzQ=\n"},
	// lastIndex: the last marker before a run.
	{"a public block, then a key", "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEq3xM9zP2wLm4Vb8Nc1Dz5Rt7Yh3Gf0kL\n-----END PUBLIC KEY-----\n" +
		"-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0Pp\n-----END PUBLIC KEY-----",
		"-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEq3xM9zP2wLm4Vb8Nc1Dz5Rt7Yh3Gf0kL\n-----END PUBLIC KEY-----\n" +
			"-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0Pp\n-----END PUBLIC KEY-----"},
	{"two documents, the Secret second", "kind: ConfigMap\ndata:\n  a: b\n---\nkind: Secret\ndata:\n  region: c2VjcmV0LXZhbHVlLTEyMzQ=\n",
		"kind: ConfigMap\ndata:\n  a: b\n---\nkind: Secret\ndata:\n  region: [REDACTED:secret]\n"},
	{"two documents, the Secret first", "kind: Secret\ndata:\n  a: b\n---\nkind: ConfigMap\ndata:\n  region: c2VjcmV0LXZhbHVlLTEyMzQ=\n",
		"kind: Secret\ndata:\n  a: b\n---\nkind: ConfigMap\ndata:\n  region: c2VjcmV0LXZhbHVlLTEyMzQ=\n"},
}

func TestShapes45(t *testing.T) { checkShapes(t, shapes45) }
