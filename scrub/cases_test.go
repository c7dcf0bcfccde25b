package scrub

// Fake credentials for the tests. They have the shape of real ones but
// are random; each is assembled from two pieces so that secret scanners do
// not flag this file.
var (
	tGHP        = "gh" + "p_u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d"
	tGHO        = "gh" + "o_KLzdocJ2isAjIhKtJ0RlgLKOmxgJTeKdNnFR"
	tGHS        = "gh" + "s_IBXuDL7DxtpYlSXpfKtHF4vUCsMehGAkWvj7"
	tGHPat      = "github" + "_pat_i0B3JrTAwR4y9ojfljoQoa_F1LlqsajAIxNKu8iS2G8NPRVdD53X83RZJzzzzgEOzdmenCkhvMdgaKjIg8"
	tGlpat      = "gl" + "pat-UdjAWtGSU8po-799Nksn"
	tXoxb       = "xo" + "xb-54728038528-0841485253888-vOoNZYW2mZp0zVZomHFwUbbY"
	tXoxp       = "xo" + "xp-47439575513-goEmvnEN5N1aE6PwZPf1Qh6y"
	tXapp       = "xa" + "pp-1-M4L1VFZ3ZFK-2202972997528-40034d6608697a8d41bed440e50454f3"
	tSlackHook  = "hooks.slack.com/" + "services/TENTHJXJQ/BI3OGZ5KOK1/GzvAmwufUxbvJDCTbyvHNsG9"
	tSkLive     = "sk" + "_live_eh6Yo4gfqrc5XlrWi0B26R08"
	tRkLive     = "rk" + "_live_qzjI6GKFSufrdZSlB5er8bOf"
	tSkTest     = "sk" + "_test_ZqfM2oeq3hDavJA76rNicHTp"
	tWhsec      = "wh" + "sec_8hkqdlm7tOtHWnsCGRlrwZbqcabUGJmG"
	tSkProj     = "sk" + "-proj-8F5n3_YNBDRzrZSgqbjG3uhkWKFLf6xuI5aHUQPFeNBTxaQW"
	tSk         = "sk" + "-fErGPmpGXafq0fjzLczbttOofL9H2WjQ5TY4MyWuUFjsUNPj"
	tSkSvc      = "sk" + "-svcacct-c01T5GOBUSZGi6HWGK10Zb0RLZ5TR9SPofbciOx9"
	tSkAnt      = "sk" + "-ant-api03-nW5gcF-Ha6ili8GjHEAD6_Wj9KfzjsQGMrb9h-ImB-LK777pzNk8cL6j5IXAAjlsHUqJoUD_-Ydua-5ZMs1SWOpQaPRYpAA"
	tSkAntAdm   = "sk" + "-ant-admin01-Qx7bN2cV9mL4kP8sR1tY6wZ3aD5fG0hJ"
	tAIza       = "AI" + "zazbLGViYXjU2JgJngKtFI3OyV2dZAkg05rK-"
	tAIza2      = "AI" + "zaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"
	tJWT        = "eyJhbGciOiJIUzI1NiJ9" + ".eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
	tJWT2       = "eyJhbGciOiJSUzI1NiIsImtpZCI6IjEifQ" + ".eyJpc3MiOiJodHRwczovL2V4YW1wbGUuY29tIn0.c2lnbmF0dXJl-_x"
	tHF         = "hf" + "_d67JikEAvstqVVPqzPptEJQzhkPkenG5ZF"
	tNPM        = "np" + "m_JoC6vWCBiJmpflvJfupxqZKm4bV3AyAVHnyr"
	tPyPI       = "pypi-AgEIcHlwaS5vcmc" + "Rh_JUqBlIFXZ53Ncqe28-ajY75FnCttn6kfaqDeMqG3omjMyXHCabM6JOF8E"
	tTestPyPI   = "pypi-AgENdGVzdC5weXBpLm9yZw" + "IkN2YxOWZhOWEtY2FjYS00MGZhLTj2MGEtODFjMnE2MjdmMzY0AAIqWzMs"
	tSG         = "SG" + ".Fd0Nhcy_1kGD2VD_eR1UYz.aLiA_zNyD7CHLn_xC-1hsYgBds1ghxY5OokvQyx7eNW"
	tTwSK       = "SK" + "bae530282bd36cb9d21f6be6abf0d7c1"
	tTwAC       = "AC" + "c1e21862ab8a18a8902073fec8df4f50"
	tDOP        = "do" + "p_v1_947aaeb26c57d21fa5d328263dfe574de739988b886e7577496a2c8773e130f7"
	tDOO        = "do" + "o_v1_eb19731662b5e803b61ba4168160adb59261ff2d3c425c8d99d19bdd0b6cc60d"
	tDOR        = "do" + "r_v1_5d32cbe54014c2b54b95523cf6941fa1c257c6f561c5cb347611a3ce9d97dcbe"
	tShpat      = "sh" + "pat_e500fe7ee5fc324bdb2e1142a21c4023"
	tShpss      = "sh" + "pss_64f9572b85a8e48f687ab165c58ac583"
	tShpca      = "sh" + "pca_1be38cb8cb4ba2e751989a01749ddb14"
	tMailgun    = "ke" + "y-3ax6xnjp29jd6fds4gc373sgvjxteol0"
	tDapi       = "da" + "pief750110c57513064d6d59291f0cde2e"
	tGsk        = "gs" + "k_logqoPchv5V7S82qTdrOJRBRY6HqsP795nf4Gakq5p1Vm8kV6um4"
	tXai        = "xa" + "i-yvMpy62O6SQ1IEE1HSa2bB9UoK4tYnzNLeK6kjcbhgN7kwjSbbciSPOcSeVce2LWxm090I5Qe43W6T8y"
	tSkOr       = "sk" + "-or-v1-376631129f34369aad80b891baf90d0d3bf16295d06910bf3f5fb85967f532f3"
	tDiscord    = "MTk4NjIyNDgzNDcxOTI1MjQ4" + ".Cl2FMQ.PTmZYl2dVAMH2vWD6qeSPt5Pv74"
	tDiscord2   = "NzkyNzE1NDU0MTk2MDg4ODQy" + ".X-hvzA.GDqQ7EyIMttFPSuEPyHnvnzXtsM"
	tDiscordWH  = "discord.com/api/" + "webhooks/123456789012345678/M3JznnJAX7ebZ3CL7csGZaF31DDxp63OHm1FZuG296c0xPbX-neGBuzSm6A8cVR06AxY"
	tTelegram   = "123456789" + ":AApThGJWZhbj11THnCMZCY7Bvqiy8CsT07L"
	tAzureKey   = "q8TDIWG2x9aJTFMP9+2kUtMXhkPrSbbAjLGmsDx5StAZvlMz" + "/Bk4opH1Dr8/h97s+F/vauP7/L7V21jxUdcfQm=="
	tAWSSecret  = "wJalrXUtnFEMI/K7MDENG" + "/bPxRfiCYEXAMPLEKEY"
	tAWSSecret2 = "9+seB1qRmUR8AK3R2GgLLT" + "/ZQISA/pQyOMqlfZZg"
)

// A case is one input and the exact output the default Scrubber must give.
// A negative case has want == "": the input must come back unchanged.
type testCase struct {
	family string // the family the case is about
	in     string
	want   string
	near   bool // a negative case for family that another family finds: want is its output
}

func pos(family, in, want string) testCase { return testCase{family, in, want, false} }
func neg(family, in string) testCase       { return testCase{family, in, "", false} }

// near is a near miss of family's shape that family must not claim but
// that is random enough for high_entropy, which finds it (want).
func near(family, in, want string) testCase { return testCase{family, in, want, true} }

// r is the placeholder of a family.
func r(family string) string { return "[REDACTED:" + family + "]" }

var cases = append([]testCase{
	pos("aws_access_key", "key AKIAIOSFODNN7EXAMPLE here", "key "+r("aws_access_key")+" here"),
	pos("aws_access_key", "ASIAY34FZKBOKMUTVV7A", r("aws_access_key")),
	pos("aws_access_key", `"AccessKeyId": "AROAY34FZKBOKMUTVV7A",`, `"AccessKeyId": "`+r("aws_access_key")+`",`),
	neg("aws_access_key", "AKIAIOSFODNN7EXAMPL"),
	neg("aws_access_key", "AKIAIOSFODNN7EXAMPLEX"),
	neg("aws_access_key", "akiaiosfodnn7example"),

	pos("aws_secret_key", "aws_secret_access_key = "+tAWSSecret, "aws_secret_access_key = "+r("aws_secret_key")),
	pos("aws_secret_key", "AWS_SECRET_ACCESS_KEY="+tAWSSecret2+"\n", "AWS_SECRET_ACCESS_KEY="+r("aws_secret_key")+"\n"),
	pos("aws_secret_key", `{"SecretAccessKey": "`+tAWSSecret+`"}`, `{"SecretAccessKey": "`+r("aws_secret_key")+`"}`),
	neg("aws_secret_key", "aws_secret_access_key = "),
	neg("aws_secret_key", tAWSSecret),
	neg("aws_secret_key", "aws_region=us-east-1"),

	pos("github_token", "token "+tGHP+" leaked", "token "+r("github_token")+" leaked"),
	pos("github_token", "git clone https://x-access-token:"+tGHS+"@github.com/o/r.git", "git clone https://x-access-token:"+r("github_token")+"@github.com/o/r.git"),
	pos("github_token", "GITHUB_TOKEN="+tGHPat, "GITHUB_TOKEN="+r("github_token")),
	pos("github_token", "("+tGHO+")", "("+r("github_token")+")"),
	neg("github_token", "ghp_short123"),
	near("github_token", "ghx_u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d", r("high_entropy")),
	neg("github_token", "the"+tGHP),

	pos("gitlab_token", tGlpat, r("gitlab_token")),
	pos("gitlab_token", "PRIVATE-TOKEN: "+tGlpat, "PRIVATE-TOKEN: "+r("gitlab_token")),
	pos("gitlab_token", "("+tGlpat+")", "("+r("gitlab_token")+")"),
	neg("gitlab_token", "glpat-short"),
	neg("gitlab_token", "glpat_UdjAWtGSU8po799Nksn"),

	pos("slack_token", "slack: "+tXoxb, "slack: "+r("slack_token")),
	pos("slack_token", tXoxp+" rejected", r("slack_token")+" rejected"),
	pos("slack_token", "SLACK_APP_TOKEN="+tXapp, "SLACK_APP_TOKEN="+r("slack_token")),
	neg("slack_token", "xoxb-123"),
	neg("slack_token", "xoxz-54728038528-0841485253888-vOoNZYW2mZp0zVZomHFwUbbY"),

	pos("slack_webhook", "POST https://"+tSlackHook+" failed", "POST https://"+r("slack_webhook")+" failed"),
	pos("slack_webhook", tSlackHook, r("slack_webhook")),
	pos("slack_webhook", `{"url":"https://hooks.slack.com/services/T1/B2/q8Zr2LkW0pXv7MnTs3YdEa9c"}`, `{"url":"https://`+r("slack_webhook")+`"}`),
	neg("slack_webhook", "https://hooks.slack.com/services/"),
	neg("slack_webhook", "https://api.slack.com/methods/chat.postMessage"),

	pos("stripe_key", "stripe: "+tSkLive, "stripe: "+r("stripe_key")),
	pos("stripe_key", tRkLive, r("stripe_key")),
	pos("stripe_key", "key="+tSkTest, "key="+r("stripe_key")),
	pos("stripe_key", "signing secret "+tWhsec, "signing secret "+r("stripe_key")),
	neg("stripe_key", "pk_live_abcdefghijklmnop"),
	neg("stripe_key", "sk_live_short"),

	pos("openai_key", "OPENAI_API_KEY="+tSkProj, "OPENAI_API_KEY="+r("openai_key")),
	pos("openai_key", "Incorrect API key provided: "+tSk+".", "Incorrect API key provided: "+r("openai_key")+"."),
	pos("openai_key", tSkSvc, r("openai_key")),
	neg("openai_key", "sk-learn-library-for-python-users"),
	neg("openai_key", "sk-1234"),

	pos("anthropic_key", tSkAnt, r("anthropic_key")),
	pos("anthropic_key", "ANTHROPIC_API_KEY="+tSkAnt, "ANTHROPIC_API_KEY="+r("anthropic_key")),
	pos("anthropic_key", "admin "+tSkAntAdm+" revoked", "admin "+r("anthropic_key")+" revoked"),
	neg("anthropic_key", "sk-ant-short"),
	neg("anthropic_key", "sk-anthropic"),

	pos("google_api_key", tAIza, r("google_api_key")),
	pos("google_api_key", "https://maps.googleapis.com/maps/api/geocode/json?address=x&key="+tAIza2, "https://maps.googleapis.com/maps/api/geocode/json?address=x&key="+r("google_api_key")),
	pos("google_api_key", "using "+tAIza2+" now", "using "+r("google_api_key")+" now"),
	near("google_api_key", tAIza[:38], r("high_entropy")),
	neg("google_api_key", "AIzaSy short"),

	pos("jwt", tJWT, r("jwt")),
	pos("jwt", "id_token: "+tJWT2, "id_token: "+r("jwt")),
	pos("jwt", "session "+tJWT+" expired", "session "+r("jwt")+" expired"),
	pos("jwt", "alg none: eyJhbGciOiJub25lIn0.eyJzdWIiOiIxMjMifQ.", "alg none: "+r("jwt")),
	neg("jwt", "eyJhbGciOiJIUzI1NiJ9"),
	neg("jwt", "eyJhbGciOiJIUzI1NiJ9.notajwt"),

	pos("bearer_token", "Authorization: Bearer abc.def.ghi123", "Authorization: Bearer "+r("bearer_token")),
	pos("bearer_token", "curl -H 'Authorization: Bearer tok_9f8e7d6c5b4a' https://api", "curl -H 'Authorization: Bearer "+r("bearer_token")+"' https://api"),
	pos("bearer_token", "retrying with bearer 9f8e7d6c5b4a3210 now", "retrying with bearer "+r("bearer_token")+" now"),
	pos("bearer_token", "sent bearer abc.def.ghi123 upstream", "sent bearer "+r("bearer_token")+" upstream"),
	pos("bearer_token", `{"Authorization":"Bearer `+tJWT+`"}`, `{"Authorization":"Bearer `+r("bearer_token")+`"}`),
	neg("bearer_token", "Bearer token expired"),
	neg("bearer_token", "Authorization: Bearer"),
	neg("bearer_token", "the bearer of bad news"),

	pos("basic_auth", "Authorization: Basic dXNlcjpwYXNzd29yZA==", "Authorization: Basic "+r("basic_auth")),
	pos("basic_auth", "sent basic YWxhZGRpbjpvcGVuc2VzYW1l to proxy", "sent basic "+r("basic_auth")+" to proxy"),
	pos("basic_auth", `"authorization": "Basic Zm9vOmJhcg=="`, `"authorization": "Basic `+r("basic_auth")+`"`),
	neg("basic_auth", "Basic authentication failed"),
	neg("basic_auth", "basic dGVzdA=="),

	pos("private_key", "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----", r("private_key")),
	pos("private_key", "key: -----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n-----END OPENSSH PRIVATE KEY-----\ndone", "key: "+r("private_key")+"\ndone"),
	pos("private_key", `{"private_key": "-----BEGIN PRIVATE KEY-----\nMIIEvQ\n-----END PRIVATE KEY-----\n"}`, `{"private_key": "`+r("private_key")+`"}`),
	pos("private_key", "cut: -----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIB", "cut: "+r("private_key")),
	neg("private_key", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----"),
	neg("private_key", "-----BEGIN PUBLIC KEY-----"),

	pos("url_password", "https://alice:s3cret@example.com/path", "https://alice:"+r("url_password")+"@example.com/path"),
	pos("url_password", "ftp://user:p%40ss@ftp.example.org", "ftp://user:"+r("url_password")+"@ftp.example.org"),
	pos("url_password", "proxy http://u:hunter2@10.0.0.1:3128", "proxy http://u:"+r("url_password")+"@"+r("ip")+":3128"),
	neg("url_password", "https://example.com:8443/path"),
	neg("url_password", "https://user:@example.com"),

	pos("db_credentials", "postgres://app:Zx9pass@db.internal:5432/app", "postgres://"+r("db_credentials")+"@db.internal:5432/app"),
	pos("db_credentials", "mongodb+srv://root:example@cluster0.mongodb.net/test", "mongodb+srv://"+r("db_credentials")+"@cluster0.mongodb.net/test"),
	pos("db_credentials", "redis://:authpass@cache:6379/0", "redis://"+r("db_credentials")+"@cache:6379/0"),
	pos("db_credentials", "dial amqp://guest:guest@rabbit:5672/: refused", "dial amqp://"+r("db_credentials")+"@rabbit:5672/: refused"),
	pos("db_credentials", "mysql://user:p@ss@host/db", "mysql://"+r("db_credentials")+"@host/db"),
	neg("db_credentials", "postgres://db.internal:5432/app"),
	neg("db_credentials", "postgres://app@db/app"),

	pos("query_secret", "GET /cb?code=4/0AX4XfWh&state=xyz", "GET /cb?code="+r("query_secret")+"&state=xyz"),
	pos("query_secret", "https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20240101%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Signature=4f3e2d1c0b9a",
		"https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential="+r("query_secret")+"&X-Amz-Signature="+r("query_secret")),
	pos("query_secret", "https://acct.blob.core.windows.net/c/b?sv=2022-11-02&sp=r&sig=abc%2Bdef%3D", "https://acct.blob.core.windows.net/c/b?sv=2022-11-02&sp=r&sig="+r("query_secret")),
	pos("query_secret", "https://api.example.com/v1?api_key=abcd1234efgh&format=json", "https://api.example.com/v1?api_key="+r("query_secret")+"&format=json"),
	pos("query_secret", "https://storage.googleapis.com/b/o?X-Goog-Signature=0a1b2c3d", "https://storage.googleapis.com/b/o?X-Goog-Signature="+r("query_secret")),
	neg("query_secret", "https://example.com/search?q=token&page=2"),
	neg("query_secret", "https://example.com/?key=&code=ab"),

	pos("password", "password=hunter2", "password="+r("password")),
	pos("password", "DB_PASSWORD: 'p4ss w0rd'", "DB_PASSWORD: '"+r("password")+"'"),
	pos("password", `{"passwd":"correct-horse"}`, `{"passwd":"`+r("password")+`"}`),
	pos("password", "mysql -u root --password=Tr0ub4dor3 db", "mysql -u root --password="+r("password")+" db"),
	pos("password", `{\"password\":\"s3cr3t\"}`, `{\"password\":\"`+r("password")+`\"}`),
	pos("password", "dbPassword = letmein", "dbPassword = "+r("password")),
	pos("password", "PGPASSWORD=postgres psql", "PGPASSWORD="+r("password")+" psql"),
	neg("password", "invalid password"),
	neg("password", "password: true"),
	neg("password", "password="),
	neg("password", "password: ***"),
	neg("password", "password_file=/run/secrets/db"),
	neg("password", "password: ${DB_PASSWORD}"),
	neg("password", "bypass=on"),
	neg("password", "if password == \"\" {"),

	pos("secret", "client_secret=0a1b2c3d4e5f", "client_secret="+r("secret")),
	pos("secret", "X-Api-Key: 8f14e45fceea167a5a36dedd4bea2543", "X-Api-Key: "+r("secret")),
	pos("secret", "auth_token: abc123xyz", "auth_token: "+r("secret")),
	// "PAT", a personal access token, ends a key as a word of its own.
	pos("secret", "ADO_PAT=k3xq7m2vw5zr4ty6bn8pl2cd7fg3hj5ks4mn6qr7tv2wx3yz5ab", "ADO_PAT="+r("secret")),
	pos("secret", "export GITLAB_PAT='glp7Xq2Lm9Zr4Ty6'", "export GITLAB_PAT='"+r("secret")+"'"),
	pos("secret", `{"azure_devops_pat": "k3xq7m2vw5zr4ty6bn8pl2cd7fg3hj5ks4mn6qr7tv2wx3yz5ab"}`, `{"azure_devops_pat": "`+r("secret")+`"}`),
	neg("secret", "spat=3 compat=true"),
	neg("secret", "glob_pat: *.go"),
	pos("secret", "config:\n  secret: s3cr3t-value\n", "config:\n  secret: "+r("secret")+"\n"),
	pos("secret", "aws_secret_access_key = short1", "aws_secret_access_key = "+r("secret")),
	pos("secret", "Authorization: ApiKey 0123456789abcdef", "Authorization: ApiKey "+r("secret")),
	// A scheme of no known name stays, and the random credentials after
	// it go (not the scheme, with the credentials left).
	pos("secret", `curl -H "Authorization: Api-Token 22cb987851bc5659l29114c62e60c79abd0d2c08" https://x`, `curl -H "Authorization: Api-Token `+r("secret")+`" https://x`),
	pos("google_api_key", "Authorization: Key AIzaSyD-k7Qm2Lw9Xr4Tp8Vb3Nc6Hf1Jd0Gs5Ea", "Authorization: Key "+r("google_api_key")),
	pos("secret", "Authorization: Key 9e4f2a7c1b8d3f6a0c5e", "Authorization: Key "+r("secret")),
	pos("secret", "Authorization: Splunk 4f3c2a1b-9d8e-4c7f-a6b5-0e1d2c3b4a59", "Authorization: Splunk "+r("secret")),
	neg("secret", "Authorization: invalid token provided"),
	neg("secret", "Authorization: Bearer token expired"),
	neg("secret", "secret not found"),
	neg("secret", "token expired"),
	neg("secret", "token: expired"),
	neg("secret", "max_tokens=4096"),
	neg("secret", "token_type=Bearer"),
	neg("secret", `{"token": null}`),
	neg("secret", "auth=ok"),

	pos("huggingface_token", tHF, r("huggingface_token")),
	pos("huggingface_token", "HF_TOKEN="+tHF, "HF_TOKEN="+r("huggingface_token")),
	pos("huggingface_token", "login with "+tHF+".", "login with "+r("huggingface_token")+"."),
	neg("huggingface_token", "hf_short"),
	neg("huggingface_token", "hf_model_name_with_underscores_here"),

	pos("npm_token", tNPM, r("npm_token")),
	pos("npm_token", "//registry.npmjs.org/:_authToken="+tNPM, "//registry.npmjs.org/:_authToken="+r("npm_token")),
	pos("npm_token", "NPM_TOKEN="+tNPM, "NPM_TOKEN="+r("npm_token")),
	neg("npm_token", "npm_config_cache"),
	near("npm_token", tNPM[:39], r("high_entropy")),

	pos("pypi_token", tPyPI, r("pypi_token")),
	pos("pypi_token", "password = "+tPyPI, "password = "+r("pypi_token")),
	pos("pypi_token", "twine upload -p "+tPyPI+" dist/*", "twine upload -p "+r("pypi_token")+" dist/*"),
	neg("pypi_token", "pypi-AgEIcHlwaS5vcmc"),
	// Test PyPI (test.pypi.org) issues tokens of its own location.
	pos("pypi_token", "twine upload -r testpypi -p "+tTestPyPI, "twine upload -r testpypi -p "+r("pypi_token")),
	neg("pypi_token", "pypi-AgENdGVzdC5weXBpLm9yZw"),
	neg("pypi_token", "pypi-project"),

	pos("sendgrid_key", tSG, r("sendgrid_key")),
	pos("sendgrid_key", "SENDGRID_API_KEY="+tSG, "SENDGRID_API_KEY="+r("sendgrid_key")),
	pos("sendgrid_key", "key "+tSG+" end", "key "+r("sendgrid_key")+" end"),
	neg("sendgrid_key", "SG.abc.def"),
	neg("sendgrid_key", "SG.Fd0Nhcy_1kGD2VD_eR1UYz"),

	pos("twilio_key", tTwSK, r("twilio_key")),
	pos("twilio_key", "account "+tTwAC+" suspended", "account "+r("twilio_key")+" suspended"),
	pos("twilio_key", "TWILIO_API_KEY="+tTwSK, "TWILIO_API_KEY="+r("twilio_key")),
	neg("twilio_key", "SK123"),
	neg("twilio_key", tTwAC[:33]),
	neg("twilio_key", tTwSK+"g"),

	pos("digitalocean_token", tDOP, r("digitalocean_token")),
	pos("digitalocean_token", "oauth "+tDOO, "oauth "+r("digitalocean_token")),
	pos("digitalocean_token", "refresh="+tDOR, "refresh="+r("digitalocean_token")),
	neg("digitalocean_token", "dop_v1_abc"),
	neg("digitalocean_token", "dop_v2_947aaeb26c57d21fa5d328263dfe574de739988b886e7577496a2c8773e130f7"),

	pos("shopify_token", tShpat, r("shopify_token")),
	pos("shopify_token", "X-Shopify-Access-Token: "+tShpss, "X-Shopify-Access-Token: "+r("shopify_token")),
	pos("shopify_token", "app "+tShpca+" ok", "app "+r("shopify_token")+" ok"),
	neg("shopify_token", "shpat_xyz"),
	neg("shopify_token", "shpxx_e500fe7ee5fc324bdb2e1142a21c4023"),

	pos("mailgun_key", tMailgun, r("mailgun_key")),
	pos("mailgun_key", "MAILGUN_API_KEY="+tMailgun, "MAILGUN_API_KEY="+r("mailgun_key")),
	pos("mailgun_key", "https://api:"+tMailgun+"@api.mailgun.net/v3", "https://api:"+r("mailgun_key")+"@api.mailgun.net/v3"),
	neg("mailgun_key", "key-value store"),
	near("mailgun_key", tMailgun[:35], r("high_entropy")),

	pos("azure_key", "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey="+tAzureKey+";EndpointSuffix=core.windows.net",
		"DefaultEndpointsProtocol=https;AccountName=acct;AccountKey="+r("azure_key")+";EndpointSuffix=core.windows.net"),
	pos("azure_key", "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=abc123def456ghi789=",
		"Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey="+r("azure_key")),
	pos("azure_key", "BlobEndpoint=https://a.blob.core.windows.net/;SharedAccessSignature=sv=2022-11-02&ss=b&sig=abc%2F123",
		"BlobEndpoint=https://a.blob.core.windows.net/;SharedAccessSignature="+r("azure_key")),
	neg("azure_key", "AccountName=acct;EndpointSuffix=core.windows.net"),
	neg("azure_key", "AccountKey=;"),

	pos("discord_token", tDiscord, r("discord_token")),
	pos("discord_token", "bot login "+tDiscord2+" failed", "bot login "+r("discord_token")+" failed"),
	pos("discord_token", "DISCORD_TOKEN="+tDiscord, "DISCORD_TOKEN="+r("discord_token")),
	neg("discord_token", "MTk4NjIy.Cl2FMQ.abc"),
	neg("discord_token", "Mozilla/5.0 (X11; Linux x86_64)"),

	pos("discord_webhook", "https://"+tDiscordWH, "https://"+r("discord_webhook")),
	pos("discord_webhook", "https://discordapp.com/api/webhooks/1234567/Xk3pQ9vLm2RtY7wZa5Nc8BdE4fGh6JsU", "https://"+r("discord_webhook")),
	pos("discord_webhook", `{"webhook":"https://`+tDiscordWH+`"}`, `{"webhook":"https://`+r("discord_webhook")+`"}`),
	neg("discord_webhook", "https://discord.com/api/webhooks/"),
	neg("discord_webhook", "https://discord.com/channels/123456/789"),

	pos("telegram_token", tTelegram, r("telegram_token")),
	pos("telegram_token", "https://api.telegram.org/bot"+tTelegram+"/sendMessage", "https://api.telegram.org/bot"+r("telegram_token")+"/sendMessage"),
	pos("telegram_token", "TELEGRAM_BOT_TOKEN="+tTelegram, "TELEGRAM_BOT_TOKEN="+r("telegram_token")),
	pos("telegram_token", "12345678:BA"+tTelegram[12:], r("telegram_token")), // (any 35 random bytes: session 59)
	neg("telegram_token", "12345678:BA"+tTelegram[13:]),
	neg("telegram_token", "1234:AA"+tTelegram[12:]),

	pos("databricks_token", tDapi, r("databricks_token")),
	pos("databricks_token", tDapi+"-2 rejected", r("databricks_token")+" rejected"),
	pos("databricks_token", "DATABRICKS_TOKEN="+tDapi, "DATABRICKS_TOKEN="+r("databricks_token")),
	neg("databricks_token", tDapi[:35]),
	neg("databricks_token", "dapiclient"),

	pos("groq_key", tGsk, r("groq_key")),
	pos("groq_key", "GROQ_API_KEY="+tGsk, "GROQ_API_KEY="+r("groq_key")),
	pos("groq_key", "("+tGsk+")", "("+r("groq_key")+")"),
	neg("groq_key", "gsk_short"),
	neg("groq_key", "gsk_"),

	pos("xai_key", tXai, r("xai_key")),
	pos("xai_key", "XAI_API_KEY="+tXai, "XAI_API_KEY="+r("xai_key")),
	pos("xai_key", "401 for "+tXai+": bad key", "401 for "+r("xai_key")+": bad key"),
	neg("xai_key", "xai-grok-model-name"),
	neg("xai_key", "xai-abcdefghijklmnopqrstuvwx"),

	pos("openrouter_key", tSkOr, r("openrouter_key")),
	pos("openrouter_key", "OPENROUTER_API_KEY="+tSkOr, "OPENROUTER_API_KEY="+r("openrouter_key")),
	pos("openrouter_key", "key "+tSkOr+".", "key "+r("openrouter_key")+"."),
	neg("openrouter_key", "sk-or-v1-abc"),
	neg("openrouter_key", "sk-or-v2-376631129f34369aad80b891baf90d0d3bf16295d06910bf3f5fb85967f532f3"),

	pos("cookie", "Cookie: session=abc123; theme=dark", "Cookie: "+r("cookie")),
	pos("cookie", "Set-Cookie: id=a3fWa; Expires=Thu, 21 Oct 2021 07:28:00 GMT; Secure\nnext", "Set-Cookie: "+r("cookie")+"\nnext"),
	pos("cookie", `curl -H "Cookie: sid=31d4d96e407aad42" https://x`, `curl -H "Cookie: `+r("cookie")+`" https://x`),
	neg("cookie", "cookie consent banner"),
	neg("cookie", "Cookie:"),
	neg("cookie", "Cookie: ok"),

	pos("email", "contact john.doe@example.com today", "contact "+r("email")+" today"),
	pos("email", "<Jane.Roe+tag@Mail.Example.CO.UK>", "<"+r("email")+">"),
	pos("email", "user=ops_team@corp.io,", "user="+r("email")+","),
	neg("email", "git@github.com:org/repo.git"),
	neg("email", "pkg@v1.2.3"),
	neg("email", "@types/node"),
	neg("email", "root@localhost"),

	pos("card", "card 4111 1111 1111 1111 declined", "card "+r("card")+" declined"),
	pos("card", "5555-5555-5555-4444", r("card")),
	pos("card", "amex 378282246310005.", "amex "+r("card")+"."),
	pos("card", "pan=4012888888881881 exp 12/27", "pan="+r("card")+" exp 12/27"),
	pos("card", "4111111111111111 2024", r("card")+" 2024"),
	neg("card", "4111 1111 1111 1112"),
	neg("card", "id 1234567890123452"),
	neg("card", "order 4111111111111111111111"),
	neg("card", "ts 1700000000000"),

	pos("iban", "GB82 WEST 1234 5698 7654 32", r("iban")),
	pos("iban", "iban=DE89370400440532013000;", "iban="+r("iban")+";"),
	pos("iban", "IBAN: FR14 2004 1010 0505 0001 3M02 606 (main)", "IBAN: "+r("iban")+" (main)"),
	neg("iban", "GB82 WEST 1234 5698 7654 33"),
	neg("iban", "AB12 hello"),
	neg("iban", "HTTP2 ISO8601"),

	pos("phone", "call +1 (415) 555-2671", "call "+r("phone")),
	pos("phone", "+44 20 7946 0958.", r("phone")+"."),
	pos("phone", "tel:+4915112345678", "tel:"+r("phone")),
	pos("phone", "from +33 1 23 45 67 89 now", "from "+r("phone")+" now"),
	pos("phone", "call +44 20 7946 0958 0A now", "call "+r("phone")+" 0A now"),                                          // found by FuzzNeighbours
	pos("bearer_token", `token: token\u0020Bearer Zm9vYmFyQ2FuYXJ5MTIz`, `token: token\u0020Bearer `+r("bearer_token")), // found by FuzzNeighbours
	pos("bearer_token", `token: token\u00a0Bearer Zm9vYmFyQ2FuYXJ5MTIz`, `token: token\u00a0Bearer `+r("bearer_token")), // found by FuzzNeighbours
	pos("card", "api_key= 4556 7375 8689 9855", "api_key= "+r("card")),                                                  // found by FuzzNeighbours
	pos("iban", "password: GB82 WEST 1234 5698 7654 32 ok", "password: "+r("iban")+" ok"),
	pos("iban", "Authorization: Bearer GB82 WEST 1234 5698 7654 32 word", "Authorization: Bearer "+r("iban")+" word"), // found by FuzzNeighbours
	pos("phone", "password = +44 20 7946 0958 word", "password = "+r("phone")+" word"),                                // found by FuzzNeighbours
	neg("phone", "+00000000000000000000000000000000000000"),                                                           // a panic FuzzNeighbours found in the fallback
	pos("ssn", "0 100-01 4556 7375 8689 9855 word", "0 "+r("ssn")+" word"),                                            // found by FuzzNeighbours
	pos("secret", "TOKEN=000!be43b7fd 123e4567-e89b-12d3-a456-426614174000 word", "TOKEN="+r("secret")+" word"),       // found by FuzzNeighbours
	pos("iban", "AA00000000000000 9C00 GB82 WEST 1234 5698 7654 32 word", r("iban")+" word"),                          // found by FuzzNeighbours: two IBANs sharing groups
	neg("phone", "+1.5"),
	neg("phone", "+12345"),
	neg("phone", "score +100 points"),
	neg("phone", "2024-01-15T10:30:00+05:30"),

	pos("ip", "from 10.0.0.12 port 22", "from "+r("ip")+" port 22"),
	pos("ip", "dial tcp 192.168.1.1:8080: refused", "dial tcp "+r("ip")+":8080: refused"),
	pos("ip", "addr 2001:db8::1 down", "addr "+r("ip")+" down"),
	pos("ip", "[fe80::1ff:fe23:4567:890a]:443", "["+r("ip")+"]:443"),
	pos("ip", "::ffff:192.0.2.1", r("ip")),
	pos("ip", "2001:0db8:85a3:0000:0000:8a2e:0370:7334", r("ip")),
	neg("ip", "127.0.0.1"),
	neg("ip", "listen [::1]:8080"),
	neg("ip", "0.0.0.0:80"),
	neg("ip", "version 1.2.3"),
	neg("ip", "1.2.3.4.5"),
	neg("ip", "v1.2.3.4"),
	neg("ip", "at 10:30:00"),
	neg("ip", "256.1.1.1"),
	neg("ip", "std::vector<int> a::b"),
	neg("ip", "ratio 16:9:4"),

	pos("uuid", "request 123e4567-e89b-12d3-a456-426614174000 failed", "request "+r("uuid")+" failed"),
	pos("uuid", "id=F47AC10B-58CC-4372-A567-0E02B2C3D479", "id="+r("uuid")),
	pos("uuid", "/v1/runs/0191d2c4-7a3b-7cde-8f01-23456789abcd/steps", "/v1/runs/"+r("uuid")+"/steps"),
	neg("uuid", "123e4567-e89b-12d3-a456-42661417400"),
	neg("uuid", "123e4567e89b12d3a456426614174000"),
	neg("uuid", "g23e4567-e89b-12d3-a456-426614174000"),

	pos("home_user", "open /home/alice/project/main.go", "open /home/"+r("home_user")+"/project/main.go"),
	pos("home_user", "/Users/bob/Library/Caches", "/Users/"+r("home_user")+"/Library/Caches"),
	pos("home_user", `C:\Users\carol\AppData\Local`, `C:\Users\`+r("home_user")+`\AppData\Local`),
	pos("home_user", `{"dir":"C:\\Users\\dave\\go"}`, `{"dir":"C:\\Users\\`+r("home_user")+`\\go"}`),
	neg("home_user", "/home/"),
	neg("home_user", "/usr/local/bin"),
	neg("home_user", "/Users/Shared/data"),
}, issue13Cases...)

// cleanCases must come back unchanged: the false-positive policy.
var cleanCases = []string{
	"upstream returned 503 Service Unavailable while calling booking service after 3 attempts",
	"request took 1.5s (30ms in queue), version v1.2.3, go1.22.3",
	"deployed 1.2.3.4.5 at 2024-01-15T10:30:00Z and 2024-01-15T10:30:00.123+02:00",
	"HTTP 404 Not Found; HTTP/1.1 200 OK; exit status 137",
	"token expired; invalid password; secret not found; auth failed",
	"listening on 127.0.0.1:8080 and [::1]:8080 and 0.0.0.0:9090",
	"retry 3 of 5 after 250ms backoff (jitter 0.2)",
	"user " + r("email") + " with " + r("github_token") + " and [REDACTED:email:ab12cd34]",
	"password: " + r("password") + ", token=" + r("secret"),
	"https://example.com/docs/api?page=2&limit=50#auth",
	"error: json: cannot unmarshal string into Go value of type int",
	"panic: runtime error: index out of range [5] with length 3",
	"total 123456789 bytes, 42 files, 3.14 ratio, -17 delta, 1e9 ops",
	"SELECT * FROM users WHERE id = 42 AND status = 'active'",
	"key=value pairs: name=booking region=eu-west-1 retries=3",
}
