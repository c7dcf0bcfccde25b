package scrub

import "testing"

// Session 57 (issue 31), from detect-secrets' test suite
// (test_data/config2.yaml): a YAML tag between a key and its value
// (password: !!binary aHVu…) was read as the value, and the value after it
// stayed. The value now follows the tag; a tag that makes the value a
// reference to a secret kept elsewhere (Home Assistant's !secret,
// CloudFormation's !Ref) leaves nothing to redact, and a password that
// begins with '!' is still a password.
func TestYAMLTags(t *testing.T) {
	cases := []case57{
		{"password: !!binary aHVudGVyMkh1bnRlcg==", "password: !!binary " + r("password")},
		{"high_entropy_hex_binary_secret: !!binary MmIwMDA0MmY3NDgxYzdiMDU2YzRiNDEwZDI4ZjMzY2Y=",
			"high_entropy_hex_binary_secret: !!binary " + r("secret")},
		{"db:\n  password: !!str hunter2Hunter\n  user: app", "db:\n  password: !!str " + r("password") + "\n  user: app"},
		{"password: !!binary |\n  aHVudGVyMkh1bnRlcg==", "password: !!binary |\n  " + r("password")},
		{"password: !!binary\n  aHVudGVyMkh1bnRlcg==", "password: !!binary\n  " + r("password")},
		{"api_key: !unsafe 'sk9vQ2mLp7Rt{{x}}'", "api_key: !unsafe '" + r("secret") + "'"},
		{"password: !Passw0rd", "password: " + r("password")},
		{"password: !secret db_password", ""},
		{"MasterUserPassword: !Ref DBPassword", ""},
		{"token: !ENV ${API_TOKEN}", ""},
		{"password: !!binary", ""},
	}
	check57(t, cases)
}

// TestShapes57 covers the other shapes session 57 took from trufflehog's
// detector tests: a value after a secret-ish word and a dash between
// blanks ("token - '…'", as log lines write it), every copy of a value
// where another matcher found a token at the copy's start only, and a
// value after a key as vague as "key" that is a run of base64url bytes
// with no digit (generatedToken).
func TestShapes57(t *testing.T) {
	cases := []case57{
		{"thinkific token - '35992abe3b6b861c66d4e1d668ac9367'", "thinkific token - '" + r("secret") + "'"},
		{"using api key - sk9vQ2mLp7Rt8xYz", "using api key - " + r("secret")},
		{"password - Tr0ub4dor3x", "password - " + r("password")},
		{"error refreshing token - 'invalid_grant'", ""},
		{"the token - see docs", ""},
		{"token -- 'b631516f9ef65883d1fa8124a'", ""},
		{"square token = 'EAAAYmTgYL4kQ-65xyZ4zANgipYVJQFTrb=roK23I=iFebzL4rjYbUg10N6o1l--' | 'EAAAYmTgYL4kQ-65xyZ4zANgipYVJQFTrb=roK23I=iFebzL4rjYbUg10N6o1l--'",
			"square token = '" + r("square_token") + "' | '" + r("square_token") + "'"}, // (the '=' inside: gluedTail, session 59)
		{`codemagic_key: "PSIYbVgfkbEPQoqJfzHpACTtihONkQ_cKmOpNDPNiCU"`, `codemagic_key: "` + r("secret") + `"`},
		{"CODEMAGIC_KEY=PSIYbVgfkbEPQoqJfzHpACTtihONkQ_cKmOpNDPNiCU", "CODEMAGIC_KEY=" + r("secret")},
		{`sort_key: "createdAtDescendingOrder"`, ""},
		{`cache_key: "UserProfileServiceCache"`, ""},
		{`primary_key: "PSIYbVgfkbEPQoqJfzHpACTtihONkQ_cKmOpNDPNiCU"`, ""},
	}
	check57(t, cases)
}

// TestKeyContext57 covers what session 57 took from Nosey Parker's rule
// examples and negative examples: a key that ends a string literal whose
// closing quote code follows has no value there ("MasterUserPassword: " +
// getMasterUserPassword()), a value aligned far after ':' by blanks is
// still the key's, and a bracketed description is a placeholder, not a
// value ([Shared Access key goes here]), unlike Go's %v of a slice.
func TestKeyContext57(t *testing.T) {
	cases := []case57{
		{`sb.append("MasterUserPassword: " + getMasterUserPassword() + ",");`, ""},
		{`echo 'password = '.$p['config']['daemon_password']."\n";`, ""},
		{`usernameLabel:"Username or email:",passwordLabel:"Password:",rememberMeLabel:"Remember me:"`, ""},
		{`"token=" + token`, ""},
		{`="Etsy_token: "bjdngbb60phznow5ac6h9pan"`, `="Etsy_token: "` + r("secret") + `"`},
		{`"password: hunter2Xq"`, `"password: ` + r("password") + `"`},
		{`{"password": "hunter2Xq"}`, `{"password": "` + r("password") + `"}`},
		{`     fbApiKey:            "171e84fd57f430fc59afa8fad3dbda2a",`, `     fbApiKey:            "` + r("secret") + `",`},
		{"SharedAccessKeyName=[Shared Access Key Name goes here];SharedAccessKey=[Shared Access key goes here];", ""},
		{`password="[your password]"`, ""},
		{"password=[hunter2 Xq9vQ2mLp7]", "password=[" + r("password") + "]"},
		{"form: map[password:[Eq7DREH48bjLYr] username:[ops]]", "form: map[password:[" + r("password") + "] username:[ops]]"},
	}
	check57(t, cases)
}

// TestVendors57: New Relic's admin (NRAA-), Insights query (NRIQ-) and
// REST API (NRRA-) keys and its license keys (…NRAL), an Insights key
// with '_' in it, and Vault Enterprise's namespaced service tokens
// (s.CAES…), from Nosey Parker's rules; Test PyPI's tokens are in
// cases_test.go.
func TestVendors57(t *testing.T) {
	cases := []case57{
		{"admin_access:NRAA-4780f48c47df5882dbec3fd82c7", "admin_access:" + r("newrelic_key")},
		{`"querykey": "NRIQ-pD-yUGl9Z3ACIJ89V-zGkhMxFJE5O121",`, `"querykey": "` + r("newrelic_key") + `",`},
		{`insertKey: "NRII-7a6SL_Pau5Dz923jEuBEylu3clzXzfby")`, `insertKey: "` + r("newrelic_key") + `")`},
		{`-H "X-Api-Key:NRRA-e270623d47659ff6a48ac5bde6bba223bef47c8c26"`, `-H "X-Api-Key:` + r("newrelic_key") + `"`},
		{"license: eu01xxaa7460e1ea3abdfbbbd36e85c10cd0NRAL", "license: " + r("newrelic_key")},
		{"ingest with 033f2f2072ca3f2cb2ec39024fa9e49cd640NRAL now", "ingest with " + r("newrelic_key") + " now"},
		{"license: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaNRAL", ""},
		{"NRAA-4780f48c47df5882", ""},
		{"-vaultToken s.CAESIP2jTxc9S3K7Z6CtcFWQv7-044m_oSsxnPE0H3nF89l3GiYKHGh3cy5sQmlIZVNyTWJNcDRsYWJpQjlhYjVlb2cQh6PL8wEYAg done",
			"-vaultToken " + r("vault_token") + " done"},
		{"function(){s.addComponentsFromRegistry()}", ""},
	}
	check57(t, cases)
}

// TestCryptHash57: password hashes in the modular crypt and PHC formats
// and Kerberos roasting hashes, from Nosey Parker's rules, redacted as
// password; a shell's $1$2 and prices are none.
func TestCryptHash57(t *testing.T) {
	cases := []case57{
		{"$1$OKgLCmVl$d02jECa4DXn/oXX0R.MoQ/", r("password")},
		{"root:$6$52450745$k5ka2p8bFuSmoVT1tzOyyuaREkkKBcCNqoDKzYiJL9RaE8yMnPgh2XzzF0NDrUhgrcLwg78xs1w5pJiypEdFX/:19000:0:99999:7:::",
			"root:" + r("password") + ":19000:0:99999:7:::"},
		{`{"hash":"$2a$12$R9h/cIPz0gi.URNNX3kh2OPST9/PgBkqquzi.Ss7KIUgO2t0jWMUW"}`, `{"hash":"` + r("password") + `"}`},
		{"$5$rounds=5000$GX7BopJZJxPc/KEK$le16UF8I2Anb.rOrn22AUPWvzUETDGefUmAV8AZkGcD", r("password")},
		{"enable secret 8 $8$TnGX/fE4KGHOVU$pEhnEvxrvaynpi8j4f.EMHr6M.FzU8xnZnBr/tJdFWk", "enable secret 8 " + r("password")},
		{"$argon2id$v=19$m=65536,t=3,p=4$c29tZXNhbHQ$RdescudvJCsgt3ub+b+dWRWJTmaaJObG", r("password")},
		{"$krb5asrep$23$8cf8eb5287e28a4006c064892150c4fb$3e05ecc13548bec8e1eeb900dea5429cc6931bae9b85", r("password")},
		{"$krb5tgs$23$*user$realm$test/spn*$b548e10f5694ae018d7ad63c257af7dc$35e8e45658860bc31a859b41a08989265f", r("password")},
		{"echo $1$2 and $5$x", ""},
		{"cost: $2.50$ each", ""},
		{"$6$salt$tooshort", ""},
		{"$3$abc$0123456789abcdefghijklmnopqrstuv", ""},
	}
	check57(t, cases)
}

// TestTemplates57, from whispers' fixtures: a URL's query parameter that
// a quote follows is empty (the quote closes the attribute the URL is
// in), a placeholder in braces and a Python format string are templates,
// not values; a braced GUID is a value.
func TestTemplates57(t *testing.T) {
	cases := []case57{
		{"url=\"jdbc:mysql://h/a?user=dbuser&amp;password=\"\n  userTable=\"users\" other=\"x\"", ""},
		{`url="jdbc:mysql://h/a?user=dbuser&password="  userTable="users"`, ""},
		{`fetch(base + "?token=" + tok)`, ""},
		{`url="https://h/a?user=dbuser&amp;password=Xk9vQ2mLp7" other="users"`, `url="https://h/a?user=dbuser&amp;password=` + r("query_secret") + `" other="users"`},
		{`variable_password6 = "{password}";`, ""},
		{`variable_password7 = "{ password }";`, ""},
		{`format_password = "prefix_{}".format(dynamic_value1)`, ""},
		{`format_password = f"prefix_{dynamic_value3}"`, ""},
		{`password = "ab{c}d9Xq"`, `password = "` + r("password") + `"`},
		{`password="{acd3c08b-74e8-4f44-a2d0-80694le24f46}"`, `password="` + r("password") + `"`},
	}
	check57(t, cases)
}

// A case57 is a message and what scrubbing makes of it; want "" is the
// message itself.
type case57 struct{ in, want string }

// check57 checks the cases as checkShapes does.
func check57(t *testing.T, cases []case57) {
	t.Helper()
	shapes := make([]shapeCase, len(cases))
	for k, c := range cases {
		shapes[k] = shapeCase{c.in, c.in, c.want}
		if c.want == "" {
			shapes[k].want = c.in
		}
	}
	checkShapes(t, shapes)
}
