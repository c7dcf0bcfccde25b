// Package scrub finds secrets and personal identifiers in text and replaces
// each with a typed placeholder, so that error messages and tool results can
// be shown to a model, logged or traced without leaking credentials.
//
//	scrub.String("dial postgres://app:hunter2@10.0.0.7:5432: connection refused")
//	// dial postgres://[REDACTED:db_credentials]@[REDACTED:ip]:5432: connection refused
//
// # What it finds
//
// Secrets, each in a family of its own (Families lists the names):
//
//   - cloud keys: AWS access key ids (AKIA…, ASIA…) and secret keys after an
//     aws_secret… key, Google API keys (AIza…), Azure account keys and shared
//     access signatures in connection strings, DigitalOcean (dop_v1_…) and
//     Databricks (dapi…) tokens;
//   - VCS and SaaS tokens: GitHub (ghp_, gho_, ghu_, ghs_, ghr_,
//     github_pat_), GitLab (glpat-), Slack (xoxb-, xoxp-, xapp-…) and Slack
//     webhooks, Stripe (sk_live_, rk_live_, sk_test_, whsec_), Twilio,
//     SendGrid, Mailgun, Shopify, npm, PyPI, Hugging Face, Discord bot tokens
//     and webhooks, Telegram bot tokens;
//   - AI providers: OpenAI (sk-, sk-proj-), Anthropic (sk-ant-), OpenRouter
//     (sk-or-v1-), Groq (gsk_), xAI (xai-);
//   - JWTs, Authorization Bearer and Basic credentials, Cookie and Set-Cookie
//     header values, PEM private key blocks;
//   - the password in scheme://user:password@host, and the whole
//     user:password of database and broker URLs (postgres, mysql, mongodb,
//     redis, amqp and others);
//   - secret URL query parameters: token, access_token, api_key, sig,
//     signature, X-Amz-Signature, X-Amz-Credential, X-Goog-Signature, code,
//     key and the like;
//   - the value after a secret-ish key in key=value, key: value and
//     "key": "value" form, where the key ends in password, passwd, pwd,
//     secret, token, api_key, access_key, private_key, client_secret, auth,
//     credentials or the like, however it is spelled: DB_PASSWORD,
//     dbPassword and db.password alike.
//
// Identifiers: e-mail addresses; payment card numbers (13 to 19 digits,
// grouped by spaces or dashes or not, starting with 2 to 6, Luhn-valid);
// IBANs (mod-97 valid); international phone numbers (a '+' and 8 to 15
// digits); IPv4 and IPv6 addresses; UUIDs; the user name in home directory
// paths (/home/<name>, /Users/<name>, C:\Users\<name>).
//
// # Placeholders
//
// A finding becomes [REDACTED:<family>], such as [REDACTED:github_token].
// Context worth keeping stays: the key before a redacted value, the quotes
// around it, the "Bearer " before a token, the user name before a URL's
// password, the path around a home directory's user name. With
// WithKeyedHash, identifiers become stable pseudonyms instead, such as
// [REDACTED:email:3f2a9c1b].
//
// Placeholders never match anything, so scrubbing is idempotent:
// String(String(s)) == String(s).
//
// # False positives
//
// The scrubber leaves ordinary text alone. The following stay untouched,
// and the tests hold it to that:
//
//   - loopback and unspecified addresses: 127.0.0.0/8, ::1, 0.0.0.0, ::;
//   - versions: an IPv4 address has exactly four octets of at most 255 and
//     is not part of a longer dotted sequence, so v1.2.3, 1.2.3 and
//     1.2.3.4.5 stay (a bare four-part 1.2.3.4 reads as an address);
//   - durations (1.5s, 30ms), RFC 3339 timestamps, HTTP status codes and
//     other numbers: a card number needs 13 digits, a leading 2 to 6 and a
//     valid Luhn checksum, a phone number needs its leading '+';
//   - words about a secret without one: "token expired", "invalid
//     password", "secret not found";
//   - values that are not secrets: after a secret-ish key, a value must be
//     at least 3 bytes long and not a stop word (true, false, null, none,
//     empty, redacted, expired, invalid, …), a mask (***, xxxx), a template
//     (${VAR}, {{ .x }}, $(cmd), <token>), a nested object or array, or a
//     placeholder;
//   - keys that merely mention a secret: password_file, max_tokens,
//     token_type, bypass;
//   - git@host SSH remotes, package@version, C++ and Rust paths (a::b),
//     and placeholders themselves.
//
// Vendor tokens need their full prefix, length and alphabet; the short
// prefixes that ordinary identifiers share (sk-, xai-) also need a body
// with digits and letters of both cases.
//
// Known limits: an unquoted value ends at the first blank, so an unquoted
// passphrase with spaces loses only its first word; a 16-digit number that
// starts with 2 to 6 passes the Luhn check one time in ten and is redacted
// as a card; a secret of no known shape after no secret-ish key is not
// found.
//
// # Performance
//
// Scrubbing is one pass over the input, linear in its length: no regular
// expressions and no backtracking, and every look backwards or ahead that
// can fail is bounded. A table of byte classes lets the scanner skip
// lower-case words, blanks and common punctuation in a tight loop; only a
// digit, an upper-case letter, '_' or a trigger byte (@ : = + - / \ [)
// makes it look closer, and a hand-written matcher decides. Clean input is
// returned as is, without allocating: a clean 256-byte error message takes
// a few hundred nanoseconds, a hundred or more times less than one regular
// expression for the same families. Dirty input is built in one buffer of
// exactly the right size. Extra patterns added with WithPattern run the
// regexp engine and cost what it costs.
//
// # Concurrency
//
// A Scrubber is immutable after New and safe for concurrent use by multiple
// goroutines. String and Default share one package-level Scrubber.
package scrub
