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
//   - cloud keys: AWS access key ids (AKIA…, ASIA…), secret keys after an
//     aws_secret… key and session tokens (IQoJb3JpZ2luX2Vj…,
//     FwoGZXIvYXdzE…), Google API keys (AIza…), Google OAuth access and
//     refresh tokens (ya29.…, 1//0…) and client secrets (GOCSPX-…), Azure
//     account keys and shared access signatures in connection strings,
//     Azure identifiable keys (84 characters with the signature JQQJ9 at
//     52: AI services, Container Registry, …) and Azure AD client secrets
//     (…Q~…), Alibaba Cloud access key ids (LTAI…),
//     DigitalOcean (dop_v1_…), Databricks (dapi…), Terraform Cloud
//     (….atlasv1.…), Pulumi (pul-), Fly.io (fo1_, fm2_), Heroku (HRKU-),
//     Supabase (sbp_, sb_secret_), PlanetScale (pscale_tkn_ and the like),
//     HashiCorp Vault (hvs., hvb., hvr.) and Doppler (dp.st. and the like)
//     tokens;
//   - VCS and SaaS tokens: GitHub (ghp_, gho_, ghu_, ghs_, ghr_,
//     github_pat_), GitLab (glpat-, gldt-, glrt-, glrtr-, glptt-, glsoat-,
//     glft-, glimt-, glagent-, gloas-, glcbt-, glffct-, GR1348941…), Slack
//     (xoxb-, xoxp-, xapp-, xoxe.…) and Slack webhooks, Stripe (sk_live_,
//     rk_live_, sk_test_, whsec_), Square (sq0atp-, sq0csp-, EAAA…), Twilio,
//     SendGrid, Mailgun, Mailchimp, Shopify, npm, PyPI, RubyGems, Docker Hub
//     (dckr_pat_), Hugging Face, Discord bot tokens and webhooks, Telegram
//     bot tokens, Atlassian (ATATT3…, ATBB…), Linear (lin_api_), Notion
//     (ntn_, secret_…), Postman (PMAK-), New Relic (NRAK-, NRJS-), Sentry
//     (sntrys_, sntryu_), Grafana (glsa_, glc_), Mapbox secret tokens
//     (sk.eyJ…), Facebook access tokens (EAA…), age secret keys
//     (AGE-SECRET-KEY-1…);
//   - AI providers: OpenAI (sk-, sk-proj-, and any sk-… key with the
//     watermark T3BlbkFJ, whatever its body; Realtime client secrets,
//     ek_), Anthropic (sk-ant-), OpenRouter
//     (sk-or-v1-), Groq (gsk_), xAI (xai-), Replicate (r8_), Perplexity
//     (pplx-), LangSmith (lsv2_pt_, lsv2_sk_), Pinecone (pcsk_), Tavily
//     (tvly-), NVIDIA (nvapi-), Langfuse (sk-lf-), PostHog personal API
//     keys (phx_), ElevenLabs (sk_ and 48 hexadecimal digits), and the
//     sk- keys of OpenAI-compatible APIs written as 32 hexadecimal digits
//     (DeepSeek, DashScope; as openai_key);
//   - the other vendor tokens of gitleaks' default rules that have a
//     prefix or a fixed structure (issue 31): 1Password (ops_eyJ…, A3-…
//     secret keys), Adobe (p8e-), Airtable (pat….<hex>), Artifactory
//     (AKCp, cmVmd), Authress, Amazon Bedrock (ABSK…,
//     bedrock-api-key-…), Beamer (b_), Brevo (xkeysib-), ClickHouse
//     (4b1d), Clojars (CLOJARS_), Cloudflare origin CA keys (v1.0-) and
//     API tokens and keys (cfut_, cfat_, cfk_), Defined Networking
//     (dnkey-), Dropbox (sl. and long-lived), Duffel, Dynatrace (dt0c01.), EasyPost (EZAK, EZTK), Flutterwave (FLWSECK…),
//     Frame.io (fio-u-), GoCardless and Lob (live_, test_), Harness (pat.,
//     sat.), Infracost (ico-), intra42 (s-s4t2ud-), MaxMind (…_mmk),
//     Microsoft Teams webhooks, Octopus Deploy (API-), OpenShift
//     (sha256~), Plaid (access-sandbox-…), Prefect (pnu_), ReadMe (rdme_),
//     Scalingo (tk-us-), SettleMint (sm_pat_), Shippo, SonarQube (squ_),
//     Sourcegraph (sgp_, slk_), Figma (figd_), Twitter/X (AAAA… bearer
//     tokens, <id>-… access tokens), Typeform (tfp_), Yandex (AQVN, YC,
//     t1.), Vercel (vcp_, vci_, vca_, vcr_, vck_), Tailscale (tskey-…),
//     Private Packagist (packagist_ort_ and the like), Zapier webhooks
//     (hooks.zapier.com/hooks/catch/…), Salesforce session ids and
//     access tokens (00D…!…); and, as trufflehog and Kingfisher describe
//     them, Buildkite (bkua_), Flexport (shltm_), Fleetbase (flb_live_)
//     and HubSpot private app tokens (pat-na1-, pat-eu1- and a UUID);
//     and more shapes of
//     the families above: Sentry organisation tokens whole ('+', '/' and
//     '=' inside), Hugging Face organisation tokens (api_org_), Slack
//     workflow and trigger webhooks and legacy tokens (xoxo-, xoxs-,
//     xoxa-, xoxr-; a placeholder judged by the secret after the ids),
//     Entra ID client secrets that begin with '.', '~' or a digit, Fly.io
//     macaroons (fm1r_, fm1a_), Stripe sk_prod_ and rk_prod_, legacy Vault
//     tokens (s.<24>, and s.CAES… in namespaces), Grafana API keys
//     (eyJrIjoi…), New Relic insert, query, admin, REST API and license
//     keys (NRII-, NRIQ-, NRAA-, NRRA-, …NRAL), Test PyPI tokens, Mapbox
//     public tokens (pk.), routable GitLab tokens,
//     AWS A3T… key ids, Facebook app tokens (<app id>|<secret>), Telegram
//     bot tokens of any bot id length, JWTs encoded in base64 (ZXlK…);
//   - JWTs, compact JWS of any payload and JWE (five parts after a JOSE
//     header), Authorization credentials (Bearer, Basic, and the value after
//     other schemes, Basic admin:hunter2 written in plain too), Cookie and
//     Set-Cookie header values, PEM private key blocks;
//   - the password in scheme://user:password@host, whatever reserved bytes
//     it holds ('#', '@', '/', '?', ':'), and the whole user:password of
//     database and broker URLs (postgres, mysql, mongodb, redis, amqp and
//     others);
//   - secret URL query parameters: token, access_token, api_key, sig,
//     signature, X-Amz-Signature, X-Amz-Credential, X-Goog-Signature, code,
//     key, session and the like;
//   - the value after a secret-ish key, where the key ends in password,
//     passwd, passphrase, pwd, secret, token, api_key, access_key,
//     private_key, client_secret, session_id, cvv, auth, credentials or the
//     like (a few other languages' words for password too; pat, a personal
//     access token, with a random-looking value), however it is
//     spelled: DB_PASSWORD, dbPassword, db-password, db.password, API-KEY,
//     X-Api-Key, x-api-key, apiKey and "API Key" alike. The key and value
//     may be written as configuration files, shells, programming languages
//     and logs write them: key=value, key: value (a full-width colon too),
//     key = value, key => value, key := value, ::=, :::=, ?=, ??=, .=, +=,
//     ||= (a quoted or random-looking value in code), the comparisons ==,
//     === and !=, with a type between key and value (var apiToken string =
//     "…", val apiToken: String = "…", api_token: str = "…"), "key": "value",
//     os.environ["KEY"] = "…", <key>value</key>, as the two quoted arguments
//     of a call (System.setProperty("db.password", "…"),
//     os.Setenv("API_TOKEN", "…"), define('DB_PASSWORD', '…')) or the one
//     argument of a setter (setPassword("…"), .password("…")), as a value
//     field named by a field before it (name: DB_PASSWORD, then value: …;
//     <add key="ApiKey" value="…"/>; {"credentials": {"value": …}}), as a
//     command-line flag (--api-key value, the password of curl -u
//     user:password or 'user:password', an API key as curl's user name,
//     mysql -p<password>), or SQL's IDENTIFIED BY '…'. The value may be
//     quoted with blanks or braces inside, run to the end of its line after
//     a key that begins the line (password: correct horse battery staple),
//     stand alone on the next line (password=⏎…), follow a YAML tag
//     (password: !!binary …; a reference tag such as !secret or !Ref
//     leaves nothing to redact), be a YAML block scalar (key: | on the
//     line before) or a list: a JSON array of strings, and
//     Go's %v and %#v printing of an http.Header or url.Values
//     (map[Authorization:[Bearer …] Cookie:[…]],
//     http.Header{"X-Api-Key":[]string{"…"}}), whose elements all go;
//   - a random-looking value after a key with a secret-ish word inside
//     (password_super_secure, mySecretString, todo_secret_do_not_commit),
//     and a generated one (10 bytes or more of letters and digits that
//     change often, or 8 or more whose letters of both cases change as
//     random ones do and read as no words: hQXWkRZpVt, not OAuthToken)
//     after a key as vague as "key" or a session cookie's name (Using
//     Key=…, sshKey, ?key=…, _gitlab_session=…, laravel_session=…); a
//     label and a generated value after a key (password=key: UyFQ…); a
//     '&' inside an unquoted value is one of its bytes unless a form's
//     next pair (&user=…) follows;
//   - the values under data: in a Kubernetes Secret (kubectl get secret
//     -o yaml), base64 whatever their keys;
//   - a random-looking value (6 or 8 bytes or more, with a digit and a
//     letter, or random letters of both cases) after a secret-ish word in
//     prose: "the token is 8f3k2j…", "token - '8f3k2j…'", "login with
//     password w7Sg…", "your API key is …", ".netrc: password s3cr3t",
//     "credential tRmQpXwZkL was rejected", whole however long; a
//     generated value that ends a link of an error chain loses only the
//     chain's ':' (init with password: Rq7X…: unexpected EOF);
//   - user:password standing alone, with no key or word to name it
//     (deploy:qRzTkWpXnVbLmHcY, "j.doe:Rq7Xw2Kp#9Lz", elastic:P@ssw0rd$1,
//     kevin:'pRf7…', <e-mail address>:pass), the whole pair, when the
//     password looks generated or holds one of !@#$%^&*~ and two classes
//     of letters and digits; a quoted pair with one half empty
//     (":password", "apikey:") loses the half that is there; Sidekiq's
//     credentials (eight lower-case hexadecimal digits, ':', eight more);
//     base64 of user:password alone (HTTP Basic credentials without their
//     scheme, a Kubernetes Secret's value) as basic_auth;
//   - a password hash, which is cracked offline into the password, as
//     password: crypt(3)'s and bcrypt's ($1$, $2b$, $5$, $6$, $7$),
//     Cisco's ($8$, $9$), Argon2 and PBKDF2 in the PHC format
//     ($argon2id$v=19$…), and Kerberos hashes from AS-REP and TGS roasting
//     ($krb5asrep$, $krb5tgs$), a hash of 22 bytes or more after the last
//     '$';
//   - with no word to name it (family high_entropy), a run of base64 or
//     base64url bytes that stands alone and looks generated: 16 bytes or
//     more, not hexadecimal and not digits alone, its classes of bytes
//     (digits, capitals, small letters) changing as random bytes change,
//     and not read as words ("init with 5oK0U90ME14yU6CVxV90crvfqVlN…:
//     401"); or a run of 12 to 15 letters and digits with a digit whose
//     letters look generated too (su9OL59biWiJu7, i7nz3oy4x5j69u5: both
//     cases changing as random ones do, or small letters with a digit in
//     three bytes; no word of Go's code in it, no four capitals or five
//     small letters in a row: v4InV6Prefix, OpAMD64LEAL2 and
//     AVLSSEG2E16V stay), not after '>' (an XML element's text, which its
//     element names); with a password's symbols glued to it
//     (…x8#P7r5&@*xC$utE) the run takes them too; a run with one '='
//     inside whose head begins with a digit is one token (Okta's 00…),
//     as no name begins so. Most API keys without a prefix are such runs. So are
//     identifiers built the same way (ULIDs, KSUIDs, nanoids, opaque
//     cursors and request ids in prose); WithoutFamilies("high_entropy")
//     keeps them, and the value of a key is judged by its key instead
//     (RequestId: …, "requestId": "…", cursor=…). A run in which another
//     matcher finds a token is that token.
//
// Identifiers: e-mail addresses; payment card numbers (13 to 19 digits,
// grouped by spaces, dashes or dots or not, starting with 2 to 6,
// Luhn-valid); IBANs (mod-97 valid, in upper case, or in lower case with
// the length of their country; grouped by spaces or dashes or not);
// international phone numbers (a '+' and 8 to 15 digits) and North
// American ones written nationally ((415) 555-0132, 415-555-0132,
// 415.555.0132: area code and exchange from 2 to 9); IPv4 and IPv6
// addresses; UUIDs; MAC addresses (3c:22:fb:9a:10:e4, 3C-22-…, 3c22.fb9a.…);
// US social security numbers (AAA-GG-SSSS anywhere, and nine digits after
// an ssn key); the user name in home directory paths (/home/<name>,
// /Users/<name>, C:\Users\<name>).
//
// # What it sees through
//
// A message may wrap what it carries. Before matching, the scrubber
// decodes JSON string escapes (\u0041, \", \\, \/), \xNN escapes,
// percent-encoding (%41, and %255F encoded twice), and HTML character
// references (&amp;, &nbsp;, &#61;, &#x5f;); it reads look-alike
// separators as the ASCII they imitate (no-break, thin, ideographic and
// other Unicode spaces as a blank, Unicode hyphens, dashes and the minus
// sign as '-', the fullwidth forms of ASCII letters, digits and
// punctuation as themselves, and the small and ideographic look-alikes of
// '.', ':', '=', '@', '/' and '_'); and it sees through invisible format
// characters (zero-width spaces and joiners, word joiners, the byte order
// mark, soft hyphens, bidirectional marks, variation selectors, tag
// characters), raw or escaped. An invisible character is read both ways:
// left out, so that one inside a token (gh\u200bp_…) hides nothing, and as
// a blank, so that one glued to a token (token\u200bghp_…,
// AKIA…\ufeffword) does not hide where it starts or ends; a message with
// one is matched once each way and the findings of both are redacted. A
// finding is then redacted in the original text: the placeholder replaces
// the whole original span, escapes, look-alikes and invisible characters
// included. A value written plainly goes on across an escaped
// delimiter (password=correct%20horse is one value); a value opened by an
// escaped separator or quote ends at an escaped delimiter too.
//
// A value split by a line break is one value: a quoted value goes on to
// its closing quote a few lines on, an unquoted random-looking value goes
// on when the next line is one random-looking run of token bytes (a key
// wrapped by a terminal), a vendor token too short for its prefix goes
// on across the break, and so does a card number (4111 1111⏎1111 1111).
//
// A secret may be encoded: a run of 16 to 4,096 base64 (standard or
// URL-safe) or hexadecimal characters, or lines of one wrapped at a fixed
// width (MIME's 76 columns), that decodes to printable text with a
// finding inside, such as base64("password=hunter2"), is redacted whole
// as that finding's family, also two encodings deep. Decoding stops at
// the first byte that is not text, so digests and binary data cost a few
// bytes' work.
//
// # Every copy
//
// A value found once is redacted wherever else the message holds it
// ("token=X rejected; retrying with X"), where no matcher would have
// found it on its own too: the same bytes, not inside a longer word. Only
// random-looking values (with a digit and a letter, or letters of both
// cases, 6 bytes or more; a wrapped one line by line) are looked for, and
// at most 16 of them a message, each with one search of the message.
//
// # Placeholders
//
// A finding becomes [REDACTED:<family>], such as [REDACTED:github_token].
// Context worth keeping stays: the key before a redacted value, the quotes
// around it, the brackets of a list, the "Bearer " before a token, the
// user name before a URL's password, the path around a home directory's
// user name. With WithKeyedHash, identifiers become stable pseudonyms
// instead, such as [REDACTED:email:3f2a9c1b]; the pseudonym is of the value
// as written (an escaped address gets another one).
//
// Placeholders never match anything, so scrubbing is idempotent:
// String(String(s)) == String(s).
//
// # Recall
//
// RECALL.md, in this package's directory, has the recall per family and
// per shape on a corpus of 227 fake values in realistic messages (error
// texts, log lines, header and form dumps, JSON bodies, URLs), next to
// the recall before these evasions and families were handled: every
// documented shape and every evasion above is found, 225 of the 227
// values in all (99%, 51% before), and the 79 clean messages of the corpus
// come back unchanged. TestRecall and TestCleanCorpus keep it so.
//
// # False positives
//
// The scrubber leaves ordinary text alone. The following stay untouched,
// and the tests hold it to that:
//
//   - loopback and unspecified addresses: 127.0.0.0/8, ::1, 0.0.0.0, ::;
//     the null and broadcast MAC addresses;
//   - versions: an IPv4 address has exactly four octets of at most 255 and
//     is not part of a longer dotted sequence, so v1.2.3, 1.2.3 and
//     1.2.3.4.5 stay (a bare four-part 1.2.3.4 reads as an address, but
//     not after "version", "OID" or the like when it begins with one
//     digit: OID 1.3.6.1);
//   - what names no machine: netmasks (255.255.255.0) and the network
//     address of a CIDR block (10.0.0.0/8, 2001:db8::/32); an address in
//     CIDR form with host bits set (10.1.2.3/24) and the ends of a range
//     (10.0.0.1-10.0.0.255) are addresses and go;
//   - durations (1.5s, 30ms), RFC 3339 timestamps and dates, HTTP status
//     codes and other numbers: a card number needs 13 digits, a leading 2
//     to 6 and a valid Luhn checksum, a phone number needs its leading '+'
//     and the length of its numbering plan (+1 and +7: 11 digits, so
//     quantity +12500000 stays), or the North American plan's groups
//     whole (3-3-4, area code and exchange from 2 to 9, nothing glued on
//     either side: 123-456-7890 and part 415-555-0132-7 stay),
//     a social security number its dashes (or an ssn key) and valid parts;
//   - words about a secret without one: "token expired", "invalid
//     password", "secret not found", "API key rotation", and error chains
//     in which a key term ends a phrase, where a value must look random
//     ("x509: cannot verify signature: algorithm unimplemented", "failed
//     to get current token: EOF", "AWS_SECRET_ACCESS_KEY: unbound
//     variable", "open /run/secrets/token: permission denied"); every
//     errors.New and fmt.Errorf message of the Go standard library
//     (testdata/stdlib_errors.txt, made by go generate) and common SDK
//     errors (testdata/sdk_errors.txt) come back unchanged;
//   - values that are not secrets: after a secret-ish key, a value must be
//     at least 3 bytes long and not a stop word (true, false, null, none,
//     empty, redacted, expired, invalid, …) or a configuration word
//     (oauth2, saml, oidc, ldap, basic, default, env, vault, …), a mask
//     (***, xxxx, one byte repeated or most of the value), a placeholder
//     (foo, changeme, YOUR_TOKEN_HERE, AIza...redacted), an algorithm
//     (RSA-SHA256, HS256, ecdsa-sha2-nistp256), a version
//     (jjwt-jackson-0.11.2), a type (apiToken: String), a template (${VAR},
//     {{ .x }}, $(cmd), #{x}, <token>, %VAR%, [PASSWORD], SOPS's ENC[…]), a
//     variable ($DB_PASSWORD), code (os.getenv("X"), self.token,
//     req.body.password, token = token, password: DB_PASSWORD), a file path
//     (/etc/ssl/private/server.key), a count or a word after a plural key
//     (api_keys: 3, "total_tokens": 1290), or a nested object;
//   - keys that merely mention a secret: password_file, max_tokens,
//     token_type, token_endpoint, passwordless, tokenizer, bypass,
//     secret_name, api_key_id, publicToken, csrf-token, primaryKey, and free
//     "bearer" words in a form (token_type=bearer expires_in=3600);
//   - web routes that look like home directories: /home/ and /Users/ after
//     a host or another path segment (example.com/home/feed,
//     /api/Users/42), after an HTTP method (GET /home/x), before a query or
//     fragment, with a route word (/home/dashboard, /home/settings), a web
//     page (/home/index.html) or a number as the "user name";
//   - runs that look random but are no secret (high_entropy): hexadecimal
//     in one case or digits (hashes, addresses, trace and order ids, a
//     UUID, i-0f9a…, key-5d41… with a short prefix); digests labelled as
//     such (h1:…, sha256:…, sha512-…, SHA256:…); names written in the
//     words of Go's own identifiers and comments (LoadMaskedInt64x2,
//     ParsePKCS8PrivateKey, chacha20poly1305, from a list generated from
//     GOROOT, codewords.go), in CamelCase, in capitals joined by '_'
//     (R_AARCH64_P32_ABS32) or with a lower-case word between separators
//     (orders-7d9f8b6c5-x2x9k); runs joined to a host, a file name, an
//     address or an escape ('.', '@', '%', '\' before a name: a '\' before
//     a blank, a brace or the end joins nothing); the value of a key
//     written as code or configuration (name=…, "name": …, name:…,
//     RequestID: …), which its key judges; base64 of text (searched for
//     findings instead); the body of a certificate, public key or
//     signature block; masks and placeholders;
//   - hashes: commit hashes, image digests and trace ids are left alone
//     (but key-<32 hex digits>, the shape of a Mailgun private API key in
//     gitleaks' rule and Mailgun's documentation, is redacted as one);
//   - placeholder tokens: a vendor prefix with a body that is one byte
//     for half of it or more (ghp_xxxx…, AKIAXXXX…,
//     sha256~XXXXXXXXXX_PUT_YOUR_TOKEN_HERE_XXXX…), counting runs
//     (0123456789abcdef…) or a handful of distinct bytes;
//   - pairs that are no credentials: host:port, image:tag
//     (redis:7.2.4-alpine), region:us-east-1, label:name and error:
//     prefixes, OpenSSL's error:0A000086:…, an ARN, a digest's label
//     (sha512:…), base64 of a cursor (offset:100), hexadecimal pairs of
//     other widths or without a letter in each half (0000cafe:00001234);
//   - git@host SSH remotes, package@version, C++ and Rust paths (a::b),
//     and placeholders themselves.
//
// Vendor tokens need their full prefix, length and alphabet; the short
// prefixes that ordinary identifiers share (sk-, xai-, r8_, LTAI, ATBB,
// EAAA, secret_, s., b_, live_, YC, hf_) also need a body that looks
// generated: digits and letters of both cases, or letters whose case
// changes often, or a digit in every few bytes, and not CamelCase words
// (hf_servingcellpriorityparametersdesc, s.ReadUint16LengthPrefixed and
// xoxb-my-bot-token stay). A token is found where its prefix begins a
// word; a prefix of five bytes or more that gitleaks' rules match with no
// boundary before it (github_pat_, glpat- and GitLab's others, xoxb- and
// Slack's others, shpat_, lin_api_, CLOJARS_, duffel_, fio-u-, ops_eyJ,
// pypi-, bedrock-api-key-, AGE-SECRET-KEY-1) is found also where the word
// before runs into it (ourgithub_pat_…, tokenxoxb-…); the bytes before
// stay. Shorter prefixes keep their boundary (Sogho_ICANVAS… stays).
//
// # Known limits
//
// An unquoted value ends at the first blank (but after a key that begins
// its line with ':'), so an unquoted passphrase with spaces in a log line
// loses only its first word. A 16-digit number that starts with 2 to 6
// passes the Luhn check one time in ten and is redacted as a card. A
// secret of no known shape after no secret-ish key or word is found only
// when it looks generated (high_entropy): one in hexadecimal or digits,
// shorter than 12 bytes (or 12 to 15 with a symbol, without a digit, or
// in one case with few digits), or written in words is not found, nor a random
// run that happens to fail the tests above (of random runs of 16 to 64
// bytes, about 1.5% of base62 ones and 3 to 4.5% of base64, base36 and
// upper-case base36 ones, most of them short); an identifier that looks
// generated is redacted as one. Nor is a word-like one found after a key that only has a
// secret word inside or ends a phrase (failed to load token: hunter), nor
// a copy of a word-like
// value (password=letmein, then letmein), nor copies of a message's 17th
// and later values. A run of encoded characters longer than 4,096 bytes
// is not decoded, nor text that is not printable ASCII or is encoded more
// than twice. A value that a wrap at a fixed width splits goes on only
// when the next line holds the rest of it alone. A bare user:password
// pair whose password is a word (admin:password), or whose user name is
// quoted apart from its password ("user":"pass"), is not found; nor is a
// hexadecimal pair of another width than Sidekiq's. Not found either, by
// design or for now (the "hard" shape of RECALL.md): escapes nested more
// than once (but %25XX), look-alike letters in a key (Cyrillic а in
// pаssword), Go's %v of a struct (its field names are not printed; a
// generated value inside is found as high_entropy), phone
// numbers in national form, and nine-digit social security numbers
// without dashes or a key.
// A password in a URL that holds '@' followed by what looks like a host
// and a path is redacted up to the last such '@', the host and path
// before it included.
//
// # Performance
//
// Scrubbing is one pass over the input, linear in its length: no regular
// expressions and no backtracking, and every look backwards or ahead that
// can fail is bounded. A table of byte classes lets the scanner skip
// lower-case words, blanks and common punctuation in a tight loop; only a
// digit, an upper-case letter, '_' or a trigger byte (@ : = + - / \ [)
// makes it look closer, and a hand-written matcher decides. The bytes an
// escape may begin with ('\', '%', '&' and non-ASCII bytes) cost a check
// when the scan meets them: at the first escape, the scan of the raw text
// stops, and the message is decoded into a pooled buffer and scanned in
// its decoded view instead (twice, when it holds an invisible character:
// once reading it as nothing, once as a blank). A run of base64 or
// hexadecimal characters is decoded only as far as it stays text, and
// text into a pooled buffer. Clean input is returned as
// is, without allocating, escapes or not: a clean 256-byte error message takes a few
// hundred nanoseconds (a few times that with escapes), hundreds of times
// less than one regular expression for the same families. A message with
// findings costs at most 16 more searches of it, one for each value whose
// copies are looked for. Dirty input is
// built in one buffer of exactly the right size. Extra patterns added with
// WithPattern run the regexp engine on the original text and cost what it
// costs.
//
// # Concurrency
//
// A Scrubber is immutable after New and safe for concurrent use by multiple
// goroutines. String and Default share one package-level Scrubber.
package scrub
