package scrub

import "testing"

// Session 58 (issue 31), from Kingfisher's rule examples and negative
// examples (github.com/mongodb/kingfisher, data/rules/*.yml).

// TestDottedRuns58: a long random run after a '.' is a token's body (a
// vendor's dotted prefix, JWT-like segments that do not decode), and the
// whole dotted word goes; a short part of a dotted name, or a long run
// that a host name or a file name goes on after, stays.
func TestDottedRuns58(t *testing.T) {
	check57(t, []case57{
		{"x na1.Fbz1cPQaRxpDTVoymS6I8HFfH+6HkNCcbKcB7rVv06NzRPfWXd3bOVaDlNElBXPEV83eI6BjzKHPHL2zjjeVTYxZVulXk7KVtEqK y",
			"x " + r("high_entropy") + " y"},
		{"x eyJ0eXAiOiJKV1QiLCJhbGciOiJIUzI1NiJ9.YwK6gJ8sMVylaDNuXRiGFLRR1kgZaLF45EbJ0qHSRaW4CRtWaqWciTZZXxkk4a4wLh8f7cTTlb.wvTVCRC1RLCpd98q4WK3ef6M3TBrb08AkS9-jNOdA_r y",
			"x " + r("jwt") + " y"}, // (a JWS whose payload is not JSON: matchOpaqueJOSE, session 59)
		// (secretlint's sendgrid rule: no SendGrid key without the S.)
		{"G.APhb3zgjtx3hajdas1TjBB.H7Sgbba3afgKSDyB442aDK0kpGO3SD332313-L5528K", r("high_entropy")},
		{"at com.example.AbstractSingletonProxyFactoryBeanWithMoreWords2.run", ""},
		{"x abc.Fbz1cPQaRxpDTVoymS6I8HFfH6HkNCcbKcB7rVv06NzRPfWXd3.com y", ""},
		{"hawk.e4etQU7u5w-TWXvSna4C.wq", ""},
		{"see config.yaml.template and obj.getSessionTokenForUser", ""},
	})
}

// TestURLPlaceholders58: a URL's password that is masked, a variable or a
// template writes no secret, and the URL stays as it is.
func TestURLPlaceholders58(t *testing.T) {
	check57(t, []case57{
		{"amqp://user:*****@example.com", ""},
		{"redis://:******@cache:6379", ""},
		{"amqps://username:$password@localhost:5672", ""},
		{"postgres://app:${DB_PASS}@db:5432/x", ""},
		{"mysql://root:xxxxxx@db/x", ""},
		{"https://user:<password>@host.com/x", ""},
		{"postgres://app:s3cr3tP4ss@db:5432/x", "postgres://" + r("db_credentials") + "@db:5432/x"},
		{"postgres://u:pass$word1@db/x", "postgres://" + r("db_credentials") + "@db/x"},
		{"amqp://guest:Xk3$mP9q@rabbit:5672/", "amqp://" + r("db_credentials") + "@rabbit:5672/"},
	})
}

// TestKeys58 covers keys and values from the same examples: a qualifier
// before "key" counts only as a word of its own (bitbucket_key is no
// bucket's key), a C cast after a password's key is code, "not-set" is a
// placeholder, and the nil UUID identifies nothing (but is still the body
// of a token after its prefix).
func TestKeys58(t *testing.T) {
	check57(t, []case57{
		{"bitbucket_key=HedmnK9h6KD_eh9KK8FlI9ahUc8WfaNZ4gulbrtN2ouV", "bitbucket_key=" + r("secret")},
		{"bucket_key=HedmnK9h6KD_eh9KK8FlI9ahUc8WfaNZ4gulbrtN2ouV", ""},
		{"s3BucketKey=HedmnK9h6KD_eh9KK8FlI9ahUc8WfaNZ4gulbrtN2ouV", ""},
		{"pwd = (char *) (p + ulen + 2);", ""},
		{"password = (String) obj;", ""},
		{"password=(hunter2) and", "password=" + r("password") + " and"},
		{`const password = process.env.REACT_APP_PASSWORD || "not-set"`, ""},
		{`const password = process.env.REACT_APP_PASSWORD || "Tr0ub4dor3x"`, `const password = process.env.REACT_APP_PASSWORD || "` + r("password") + `"`},
		{"InstrumentationKey=00000000-0000-0000-0000-000000000000;", ""},
		{"job 00000000-0000-0000-0000-00000000002a done", ""},
		{"InstrumentationKey=9f3c2a1e-7b4d-4e8f-a2c6-5d1b9e0f3a7c;", "InstrumentationKey=" + r("secret") + ";"},
		{"job 9f3c2a1e-7b4d-4e8f-a2c6-5d1b9e0f3a7c done", "job " + r("uuid") + " done"},
		{"sk-lf-00000000-0000-0000-0000-000000000000", r("langfuse_key")},
	})
}

// TestTeamsLegacy58: Teams webhooks made before 2021, on
// outlook.office.com, are webhooks too.
func TestTeamsLegacy58(t *testing.T) {
	check57(t, []case57{
		{"https://outlook.office.com/webhook/9da5da9c-4218-4c22-aed6-b5c8baebfff5@2f2b54b7-0141-4ba7-8fcd-ab7d17a60547/IncomingWebhook/1bf66ccbb8e745e791fa6e6de0cf465b/43bd7d8c-5ef0-4d4c-9c4f-0e7e0c5d7b1a",
			"https://" + r("teams_webhook")},
		{"see https://outlook.office.com/mail/inbox", ""},
	})
}

// TestIdentifiers58 covers what Presidio's recognizer tests
// (github.com/microsoft/presidio, presidio-analyzer/tests) showed: North
// American phone numbers written nationally, with their groups whole and
// nothing glued on, and an IPv6 address that ends a sentence.
func TestIdentifiers58(t *testing.T) {
	check57(t, []case57{
		{"call me at (415) 555-0132 today", "call me at " + r("phone") + " today"},
		{"US: 415-555-0132", "US: " + r("phone")},
		{"United States: (415)555-0132", "United States: " + r("phone")},
		{"tel 415.555.0132.", "tel " + r("phone") + "."},
		{"+1 (415) 555-0132", r("phone")},
		{"part 415-555-0132-7", ""},
		{"v1.415.555.0132", ""},
		{"x-415-555-0132", ""},
		{"f(415) 555-0132", ""},
		{"code 123-456-7890", ""},
		{"retry (3) times", ""},
		{"ssn 123-45-6789", "ssn " + r("ssn")},
		{"Server IP: 2400:c401::5054:ff:fe1b:b031.", "Server IP: " + r("ip") + "."},
		{"at 2a00:1450:4001:82a::200e.", "at " + r("ip") + "."},
		{"::ffff:10.1.2.3.", r("ip") + "."},
		{"pulled nginx:1.25.3.", ""},
	})
}
