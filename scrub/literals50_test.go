package scrub

import "testing"

// Session 50 (issue 31): shapes of code from another scanner's test suite
// (detect-secrets' keyword detector): a password written plainly with
// brackets and symbols in it, a string literal's prefix, an array's name
// as the key, the strict comparisons, a value compared with a secret-ish
// name after it, a JWT without its signature; and, from whispers'
// fixtures, numbered keys, subscripts by a symbol or a variable, the
// literal code falls back to, and Kotlin's pairs; and a quoted value after
// a key with a secret-ish word inside. Each case that redacts fails without its
// change; the others are near misses.
var literals50 = []shapeCase{
	// Brackets inside a value hold what else ends one (',', ';', '<', '>').
	{"unquoted, brackets and symbols", "password: m{{h}o)p${e]nob(ody[finds>-_$#thisone}}", "password: [REDACTED:password]"},
	{"unquoted, a comma after the brackets", "db_pass: m{{h}o)p${e]nob(ody[finds>-_$#thisone}}, retrying", "db_pass: [REDACTED:password], retrying"},
	{"unquoted, a comma inside brackets", "password=p4{a,b}z", "password=[REDACTED:password]"},
	{"unquoted, a comma after", "password=hunter2x, user=bob", "password=[REDACTED:password], user=bob"},
	// In code, an unquoted value that is no expression: its brackets do
	// not nest.
	{"Go :=, brackets that do not nest", "db_pass := m{{h}o)p${e]nob(ody[finds>-_$#thisone}}", "db_pass := [REDACTED:password]"},
	{"Go :=, a call", "db_pass := os.Getenv(\"DB_PASS\")", "db_pass := os.Getenv(\"DB_PASS\")"},
	{"Go :=, a composite literal", "password := config{user: name}", "password := config{user: name}"},
	// A string literal's prefix.
	{"Objective-C @\"…\"", `password = @"hunter2x";`, `password = @"[REDACTED:password]";`},
	{"C# $\"…\"", `string password = $"hunter2x";`, `string password = $"[REDACTED:password]";`},
	{"Python b'…'", `password = b'hunter2x'`, `password = b'[REDACTED:password]'`},
	{"Python rb'…'", `password = rb'hunter2x'`, `password = rb'[REDACTED:password]'`},
	// An array's name.
	{"C array", `char secret[25] = "hunter2x";`, `char secret[25] = "[REDACTED:secret]";`},
	{"C array, no size", `secret[] = "hunter2x";`, `secret[] = "[REDACTED:secret]";`},
	{"a subscript that is no array's size", `secret[i] = "hunter2x";`, `secret[i] = "hunter2x";`},
	// Subscripts by a symbol or a variable.
	{"Ruby symbol subscript", `auth[:token] = "hunter2x"`, `auth[:token] = "[REDACTED:secret]"`},
	{"PHP variable subscript", `$config['db'][$passcode] = 'hunter2x';`, `$config['db'][$passcode] = '[REDACTED:password]';`},
	{"a subscript by another name", `x[:name] = "hunter2x"`, `x[:name] = "hunter2x"`},
	// Numbered keys (whispers' fixtures: static_password03 = "…").
	{"numbered key", `let static_password03 = "hunter2x";`, `let static_password03 = "[REDACTED:password]";`},
	{"numbered key after a separator", "DB_PASSWORD_2=hunter2x", "DB_PASSWORD_2=[REDACTED:password]"},
	{"numbered key in a call", `define("static_password05", "hunter2x");`, `define("static_password05", "[REDACTED:password]");`},
	{"a number that names no key", "sha256: 29f49fdc1e740a0f5049c897954a8b4a7af15265b16c22a36d37e12f2150e760", "sha256: 29f49fdc1e740a0f5049c897954a8b4a7af15265b16c22a36d37e12f2150e760"},
	{"a short name and a number", "x509: certificate signed by unknown authority", "x509: certificate signed by unknown authority"},
	// A literal that code falls back to (whispers' fixtures).
	{"JS ||", `const STATIC_TOKEN = process.env.API_TOKEN || "hunter2x";`, `const STATIC_TOKEN = process.env.API_TOKEN || "[REDACTED:secret]";`},
	{"C# ??", `String TOKEN = Environment.GetEnvironmentVariable("API_TOKEN") ?? "hunter2x";`, `String TOKEN = Environment.GetEnvironmentVariable("API_TOKEN") ?? "[REDACTED:secret]";`},
	{"Kotlin ?:", `val TOKEN: String = System.getenv("API_TOKEN") ?: "hunter2x"`, `val TOKEN: String = System.getenv("API_TOKEN") ?: "[REDACTED:secret]"`},
	{"Lua or, in parentheses", `local TOKEN = (os.getenv("API_TOKEN") or "hunter2x")`, `local TOKEN = (os.getenv("API_TOKEN") or "[REDACTED:secret]")`},
	{"Ruby ||", `TOKEN = ENV['API_TOKEN'] || 'hunter2x'`, `TOKEN = ENV['API_TOKEN'] || '[REDACTED:secret]'`},
	{"C ternary", `const char *TOKEN = getenv("API_TOKEN") ? getenv("API_TOKEN") : "hunter2x";`, `const char *TOKEN = getenv("API_TOKEN") ? getenv("API_TOKEN") : "[REDACTED:secret]";`},
	{"no literal", `token = cfg.token || fallback()`, `token = cfg.token || fallback()`},
	{"an empty literal", `token = cfg.token || ""`, `token = cfg.token || ""`},
	{"a parenthesized call", `token = (os.getenv("X"))`, `token = (os.getenv("X"))`},
	{"Kotlin pair, quoted key", `mapOf("token" to "hunter2x")`, `mapOf("token" to "[REDACTED:secret]")`},
	{"Kotlin pair, another key", `mapOf("name" to "hunter2x")`, `mapOf("name" to "hunter2x")`},
	// A key with a secret-ish word inside: a quoted value is its value,
	// whatever it looks like; an unquoted one must look random.
	{"secret word inside, quoted", `password_super_secure = "value with quotes and spaces"`, `password_super_secure = "[REDACTED:password]"`},
	{"secret word inside, quoted, symbols", `my_password_secure = @"m{{h}o)p${e]nob(ody[finds>-_$#thisone}}";`, `my_password_secure = @"[REDACTED:password]";`},
	{"secret word inside, unquoted words", "password_super_secure = value with spaces", "password_super_secure = value with spaces"},
	{"about the secret: a form's words", `"password_prompt": "Please enter your password"`, `"password_prompt": "Please enter your password"`},
	{"about the secret: how it is stored", `"password_encoder": "bcrypt"`, `"password_encoder": "bcrypt"`},
	{"about the secret: its type", `"token_type": "bearer"`, `"token_type": "bearer"`},
	// Strict comparisons: "!==" is no base64 padding.
	{"!==", `if (db_pass !== "hunter2x") {`, `if (db_pass !== "[REDACTED:password]") {`},
	// The value first.
	{"value first ==", `if ("hunter2x" == password) {`, `if ("[REDACTED:password]" == password) {`},
	{"value first !==", `if ("m{{h}o)p${e]nob(ody[finds>-_$#thisone}}" !== secret) {`, `if ("[REDACTED:secret]" !== secret) {`},
	{"value first, after another comparison", `x == "a" && 'hunter2x' != passwd`, `x == "a" && '[REDACTED:password]' != passwd`},
	{"value first, no secret-ish name", `if ("hunter2x" == name) {`, `if ("hunter2x" == name) {`},
	{"value first, a call", `if ("hunter2x" == password.trim()) {`, `if ("hunter2x" == password.trim()) {`},
	// A JWT without its signature and the dot before it.
	{"JWT, two parts", "claims eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIn0 rejected", "claims [REDACTED:jwt] rejected"},
	{"JWT, alg none: an empty signature", "got eyJhbGciOiJub25lIn0.eyJzdWIiOiJhbGljZSJ9. then", "got [REDACTED:jwt] then"},
	{"=> is no comparison", `-H "Authorization: basic {base64(email:password[\n])}" => token`, `-H "Authorization: basic {base64(email:password[\n])}" => token`},
}

func TestLiterals50(t *testing.T) { checkShapes(t, literals50) }
