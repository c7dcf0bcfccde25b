package scrub

// Cases for the families and shapes added by issue #13. Fake values, as in
// cases_test.go: random, of the right shape, each assembled from two
// pieces so that secret scanners do not flag this file.
var (
	tYa29         = "ya29.a" + "02avhlvrUU8YLghux76nTPDYpm9gPGcsN847UdJ3rrID5y67fiCnwx6Fdco8m4eS0EptOlxwHZSgRqnK2yF3HVTCJFiovmVSPewVrV0LjRRHQ9f"
	tG1           = "1//0KN" + "z1zyjD_qAbBQbZa1gHlqzDxVaXIfateMgozYeDpqklC5mMDc4XJBfJ0LKK"
	tGocspx       = "GOCSPX" + "-ve2vAPFRiFATt5lz4CXMw929VEGp"
	tHvs          = "hvs.bP" + "R58vDUPgfR5gB2Z-EAPsLSA8rHAaw-RAgmsizw8GklypfRd7L3k6NRJF8os0qzLfEXnZtZnoxoe6hFCpirtRyf7n"
	tHvb          = "hvb.Dm" + "QMRNARLXdbbNIZWRFH7IEJU8mK-PMf4WwgyVSQ73dGROA7rcaPRh0fIVNTHg_b1-zT3B5Fp-KqlchEK_qCGQ7wiFoesuoF2v7YT8yC6pJM_B"
	tGlsa         = "glsa_F" + "J8u4ObWswOoDk0uTQW5aDAwXsuU3Bel_c25d2a26"
	tGlc          = "glc_ZI" + "Ux8ziLvnaHqTTrSeyZYgZjWZnQxJtz+cteXNJiLxsnJbOvZObuVXcc4DRJ=="
	tSntryu       = "sntryu" + "_dec1db5d9640a1c26f5806c1afd663e3969e0a1e8a74d8bb887bf7dd5035046a"
	tSntrys       = "sntrys" + "_eyJpYXQiOjE3IO6YibWuiGbU6R8Em4nIcJVp9AWtcRue1cmK8yvuvsRLSFXJq1XVwG0VtiuM"
	tLin          = "lin_ap" + "i_JQkr036IikVg235ONeSsauAgXkoQa2FtUvNhaTMM"
	tNtn          = "ntn_43" + "314882775FFV4ktmOJv3328eN3Gb5FVjisfBbWOLpROl"
	tSecretNotion = "secret" + "_TefSH2GSXcSbvIaZhw1f7s97p9wlD9FdSp7FI9QuZUG"
	tPmak         = "PMAK-e" + "f0d36d9935eed4e6c6c37c4-de8cd8b8e74cd7b945a50219ee84b9dad0"
	tNrak         = "NRAK-P" + "IA8E94X1VT9RF50RTHG80SNLZ5"
	tNrjs         = "NRJS-7" + "71977bad350ef5d930"
	tDpSt         = "dp.st." + "dev.NcitBvJYTpvGvTwY0mOFq5F6llw1u5xusUAFwDmR"
	tDpPt         = "dp.pt." + "XjbSseWFtkPvwsY26MCQGHp5CcnY5bDMW71eajOjqtt"
	tAtatt        = "ATATT3" + "xFfGF0cOQLryeMEfLOzEhxY0c1CX_iwA9qU3sKYFzEahnRllHKX2ICcMIDhlgsQL3X0BAI-aS_5Ys_ggmxGHGbrxdKs0G1OTQjj-qf-9QOKtq0V_Y2l76Sia7-5Z4NehTJnxMBIaqDncV2YucYBf8O5vPXOBXNrcNMhdQVagJoDiVFGQwSuwFg8e-u=DFE53585"
	tAtbb         = "ATBBrY" + "pi7Y1AlceOTPomxtxWBOQjW01S7M9y"
	tSbp          = "sbp_02" + "fee32719d7b1178c42030ac876376c97b76368"
	tSbSecret     = "sb_sec" + "ret_e2VrQhFLOUzxnQwfMMxnBKewhVUj8HbD"
	tAge          = "AGE-SE" + "CRET-KEY-1PERX0PZSKHRVRESRTTUHDWNFRDH5WS8EUZ4Q9CXXQEMGPXYF9CJ5SGC4HA"
	tSq0atp       = "sq0atp" + "-H6IZkK4s5Jax_XdSmLrcyu"
	tSq0csp       = "sq0csp" + "-vFie3XaLK8CsRgqSgogrUhTnkIobUlqgu43Td9U1zuL"
	tEAAA         = "EAAAsc" + "2zezoe1J0ktiqVk6xOyvfR0YzED7CxQ13VC5nE4qokRJlbfBQzn7bPauUK"
	tPul          = "pul-be" + "43b7fd236b7c885f98f26adf63d1e5930599fb"
	tDckr         = "dckr_p" + "at_bL1XvnkR3Qum1BtTtiay6CfQIYq"
	tPscale       = "pscale" + "_tkn_TNJ3tkUSR61TsvxwRv71P6o3DW67Vsnbi919RiWMvSM"
	tPscalePw     = "pscale" + "_pw_1VgNvOA9ql1STVY7IY45CWcUxgX-lY8cS4vxZZL9kTq"
	tR8           = "r8_wnX" + "vfQWfZrQsk8d3Amh0kxA3QKdukRtN8O6KH"
	tPplx         = "pplx-l" + "tbgJcogNVVMMqDjeUZRgsAD2WctCAPLGN77F1bsqFJuC7Wh"
	tLsv2         = "lsv2_p" + "t_fbb0259e847c4f0aaaf9d1d501406ee8_fabe2c4964"
	tLsv2sk       = "lsv2_s" + "k_c5b9df7078f0bb86ad7f319c8a38c5cb_13d1ee1206"
	tPcsk         = "pcsk_n" + "yFtA_C5RbaD86MpUJJxmvBpkfVjVplxFZtKvgY1pRyT082xE6MoY1SIeKIqWlv6JtbbY"
	tTvly         = "tvly-u" + "uNsGa7NMyl3zaoW5Xtwd57TKmERl722"
	tNvapi        = "nvapi-" + "cyGfLPg6snafPfAQQ1su_4Gr5Oc7ecP9R54c96qGZyck75jcsNu4PTUxFO69ljWy"
	tLangfuse     = "sk-lf-" + "8c1d5e2a-4b3f-4e9a-9d7c-2f6b8a1e3c5d"
	tPostHog      = "phx_" + "Xk9vQ2mLp7Rt8xYzAb3Cd4Ef5Gh6Ij7Kl8Mn9Op0Qr1St2Uv"
	tEleven       = "sk_" + "3f8a9c1d4e7b6a3f0c5d8e1a4b7c9d2e3f8a9c1d4e7b6a3f"
	tSalesforce   = "00Dxx0000001gPL!" + "AR8AQJXg5oj8jXSgxJfA0lBog.39AsX.LVpxezPwuX5VAIrrbbHMuol7GQxnMeYMN7cj8EoWr78nBQZ2kT3Rj7uO1mXA1sk"
	tDeepSeek     = "sk-" + "2f8a9c1d4e7b6a3f0c5d8e1a4b7c9d2e"
	tTvlyDev      = "tvly-d" + "ev-OuRkuRpohDdSw9RZLwliNioe40Pi9koc"
	tMailchimp    = "a2e12e" + "eb260e4faa1bab1cdf401911cb-us14"
	tLtai         = "LTAIBc" + "m7elEetHMyXUaRIg7h"
	tAzureSecret  = "gbO8Q~" + "9M_f8Rl7Dm67aJEIbOGIXy~5gc40xO4a2c"
	tIQoJ         = "IQoJb3" + "JpZ2luX2VjEadi6lm7aUnIrLZejCQ7+BM1PNX+LHD11q/D1yVKDCzFyDiK9unma5YY5hySKrcRSWrA2+23n45Uvl++syuH7tduTz06Va+IVcyU/xLXQQ81rRcgcdpR2/0aV77xbfKF50nOlUCykQe1LOFFtUNbBi0Y9TMY/c1OR/rZTkL71woD47etlslC4JWeCD5Ny8Prlz5AXlJ3/1heUYz14xAtgTriHfVq2QaxJUbSFTOIcqPNrOgaJDELoOyC3uw9FAuSW0L+aTWKW2ei4JsT1iF0wEgrFFc1iGzCZ1ZIBWmL8Q6e6"
	tFwoG         = "FwoGZX" + "IvYXdzE2/a0mRprwKcjjaCEO1Ykkx44NNGNNElTGutdcceohfXQfj0gd6olgQivWV8E2WB9TOp9R6B9rcZmj700TiJAVuQCLkBkyWzDAXp4oWuTqtKtlY19CPhy3trxzhlgKowltWzKiu6i11GpTXqDdekuJZoGY7JCXxfYSfA1sRd72HOaQOzfwrkLtxQX8/Iv5v0He1xU+X08"
	tEAAB         = "EAABzC" + "hRcSthsK1yCCSSYbJjVkHypCdhOT0ArPsGI5XEvtOmYB5z1nfYl1NiJHEQYBl5KjEBPuV4uRViW7VtL0Rih7ypO9faxN4hdH9J4hiwtMukhqODQ1abq4oaMaT9uhXtNZuwR96bpf8HRkvlj8oKNTOP0apURkIh"
	tFo1          = "fo1_nm" + "mrAXi0Lm9kOMVil68pZ_oRpuICRBDs7ZqBSqIcwH7"
	tFm2          = "fm2_KH" + "vCTheOMPBKtLZykWPvQ8HrHnPqcYGMuYYFnYR5W5JIsm68s6giHLHt2166N0X3xr9vwyJs9Vco6HDQ"
	tAtlas        = "nyPxUe" + "uq2qmwxQ.atlasv1.nqtgFGTiOvPg8csYukf1mMBBeHH36NbXKjItVaoxopNXxixBk52iw2QDn0gN1Z92nto"
	tRubygems     = "rubyge" + "ms_baf2abac2cddbc0ceafba0037bb109e2b0f73eb30cd18935"
	tMapbox       = "sk.eyJ" + "1IjoiQo_ZVabusWC9BLMXfN2_28CFhH-2HijfRT2L0cjI.DpGnqZrUSTpZRZLuynOC46"
	tHrku         = "HRKU-A" + "AQv196RIoWY0PIhU6z5aw2fX2mbmDPT73Zz7qGBpWtqj1tz2_EzbDPjR7Ik"
	tGldt         = "gldt-G" + "6PVZcUEYp01uj1HRr4_"
	tGlrt         = "glrt-Y" + "tYSmo8xOJWbk53--8OWIzkD"
	tGlptt        = "glptt-" + "zEqREl7BGJLC4NQheP83MH7P53vijbcSI0dFAFdI"
	tGR           = "GR1348" + "941sygLRXm8u9KCV1nr9VLq"
)

var issue13Cases = []testCase{
	pos("google_oauth_token", tYa29, r("google_oauth_token")),
	pos("google_oauth_token", "Authorization: Bearer "+tYa29, "Authorization: Bearer "+r("google_oauth_token")),
	pos("google_oauth_token", `{"refresh_token":"`+tG1+`"}`, `{"refresh_token":"`+r("google_oauth_token")+`"}`),
	neg("google_oauth_token", "ya29.short"),
	neg("google_oauth_token", "1//0abc"),

	pos("google_client_secret", tGocspx, r("google_client_secret")),
	pos("google_client_secret", `{"client_secret":"`+tGocspx+`"}`, `{"client_secret":"`+r("google_client_secret")+`"}`),
	pos("google_client_secret", "secret "+tGocspx+" rotated", "secret "+r("google_client_secret")+" rotated"),
	neg("google_client_secret", "GOCSPX-short"),
	near("google_client_secret", tGocspx+"x", r("high_entropy")),

	pos("gitlab_token", "deploy token "+tGldt, "deploy token "+r("gitlab_token")),
	pos("gitlab_token", "runner "+tGlrt+" registered", "runner "+r("gitlab_token")+" registered"),
	pos("gitlab_token", "TRIGGER="+tGlptt, "TRIGGER="+r("gitlab_token")),
	pos("gitlab_token", "--registration-token "+tGR, "--registration-token "+r("gitlab_token")),
	neg("gitlab_token", "gldt-short"),
	neg("gitlab_token", "glrt-runner-docs"),

	pos("vault_token", tHvs, r("vault_token")),
	pos("vault_token", "X-Vault-Token: "+tHvs, "X-Vault-Token: "+r("vault_token")),
	pos("vault_token", "batch "+tHvb+".", "batch "+r("vault_token")+"."),
	neg("vault_token", "hvs.short"),
	// (Not a Vault token, but a long random run after a dotted prefix.)
	near("vault_token", "hvx."+tHvs[4:], r("high_entropy")),

	pos("grafana_token", tGlsa, r("grafana_token")),
	pos("grafana_token", "GRAFANA_TOKEN="+tGlc, "GRAFANA_TOKEN="+r("grafana_token")),
	pos("grafana_token", "using "+tGlsa+" now", "using "+r("grafana_token")+" now"),
	neg("grafana_token", "glsa_short"),
	neg("grafana_token", "glc_abc"),

	pos("sentry_token", tSntryu, r("sentry_token")),
	pos("sentry_token", "SENTRY_AUTH_TOKEN="+tSntrys, "SENTRY_AUTH_TOKEN="+r("sentry_token")),
	pos("sentry_token", "("+tSntryu+")", "("+r("sentry_token")+")"),
	neg("sentry_token", tSntryu[:70]),
	neg("sentry_token", "sntrys_abc"),

	pos("linear_key", tLin, r("linear_key")),
	pos("linear_key", "LINEAR_API_KEY="+tLin, "LINEAR_API_KEY="+r("linear_key")),
	pos("linear_key", "key "+tLin+" revoked", "key "+r("linear_key")+" revoked"),
	neg("linear_key", "lin_api_short"),
	near("linear_key", tLin+"x", r("high_entropy")),

	pos("notion_token", tNtn, r("notion_token")),
	pos("notion_token", "NOTION_KEY="+tSecretNotion, "NOTION_KEY="+r("notion_token")),
	pos("notion_token", "integration "+tSecretNotion+" ok", "integration "+r("notion_token")+" ok"),
	neg("notion_token", "ntn_short"),
	neg("notion_token", "secret_"+"abcdefghijklmnopqrstuvwxyzabcdefghijklmnopq"),

	pos("postman_key", tPmak, r("postman_key")),
	pos("postman_key", "x-api-key: "+tPmak, "x-api-key: "+r("postman_key")),
	pos("postman_key", "postman "+tPmak+" expired", "postman "+r("postman_key")+" expired"),
	neg("postman_key", "PMAK-short"),
	neg("postman_key", tPmak[:50]),

	pos("newrelic_key", tNrak, r("newrelic_key")),
	pos("newrelic_key", "NEW_RELIC_API_KEY="+tNrak, "NEW_RELIC_API_KEY="+r("newrelic_key")),
	pos("newrelic_key", "browser "+tNrjs+" loaded", "browser "+r("newrelic_key")+" loaded"),
	neg("newrelic_key", "NRAK-SHORT"),
	near("newrelic_key", tNrak+"X", r("high_entropy")),

	pos("doppler_token", tDpSt, r("doppler_token")),
	pos("doppler_token", "DOPPLER_TOKEN="+tDpPt, "DOPPLER_TOKEN="+r("doppler_token")),
	pos("doppler_token", "token "+tDpSt+" revoked", "token "+r("doppler_token")+" revoked"),
	neg("doppler_token", "dp.st.short"),
	near("doppler_token", "dp.xx."+tDpPt[6:], r("high_entropy")),

	pos("atlassian_token", tAtatt, r("atlassian_token")),
	pos("atlassian_token", "JIRA_API_TOKEN="+tAtatt, "JIRA_API_TOKEN="+r("atlassian_token")),
	pos("atlassian_token", "app password "+tAtbb+" denied", "app password "+r("atlassian_token")+" denied"),
	neg("atlassian_token", "ATATT3short"),
	neg("atlassian_token", "ATBB"+"abcdefghijklmnopqrstuvwxyzabcdef"),

	pos("supabase_token", tSbp, r("supabase_token")),
	pos("supabase_token", "SUPABASE_SECRET_KEY="+tSbSecret, "SUPABASE_SECRET_KEY="+r("supabase_token")),
	pos("supabase_token", "login --token "+tSbp, "login --token "+r("supabase_token")),
	neg("supabase_token", tSbp[:40]),
	neg("supabase_token", "sbp_xyz"),

	pos("age_secret_key", tAge, r("age_secret_key")),
	pos("age_secret_key", "# key\n"+tAge+"\n", "# key\n"+r("age_secret_key")+"\n"),
	pos("age_secret_key", "SOPS_AGE_KEY="+tAge, "SOPS_AGE_KEY="+r("age_secret_key")),
	neg("age_secret_key", tAge[:60]),
	neg("age_secret_key", "AGE-SECRET-KEY-"),

	pos("square_token", tSq0atp, r("square_token")),
	pos("square_token", "SQUARE_SECRET="+tSq0csp, "SQUARE_SECRET="+r("square_token")),
	pos("square_token", "token "+tEAAA+" ok", "token "+r("square_token")+" ok"),
	neg("square_token", "sq0atp-short"),
	near("square_token", tSq0atp[:len(tSq0atp)-1], r("high_entropy")),

	pos("pulumi_token", tPul, r("pulumi_token")),
	pos("pulumi_token", "PULUMI_ACCESS_TOKEN="+tPul, "PULUMI_ACCESS_TOKEN="+r("pulumi_token")),
	pos("pulumi_token", "login "+tPul+".", "login "+r("pulumi_token")+"."),
	neg("pulumi_token", "pul-short"),
	neg("pulumi_token", "pull-request-template"),

	pos("dockerhub_token", tDckr, r("dockerhub_token")),
	pos("dockerhub_token", "docker login -p "+tDckr, "docker login -p "+r("dockerhub_token")),
	pos("dockerhub_token", "DOCKERHUB_TOKEN="+tDckr, "DOCKERHUB_TOKEN="+r("dockerhub_token")),
	neg("dockerhub_token", "dckr_pat_short"),
	neg("dockerhub_token", "dckr_xyz_"+tDckr[9:]),

	pos("planetscale_token", tPscale, r("planetscale_token")),
	pos("planetscale_token", "password="+tPscalePw, "password="+r("planetscale_token")),
	pos("planetscale_token", "token "+tPscale+" denied", "token "+r("planetscale_token")+" denied"),
	neg("planetscale_token", "pscale_tkn_short"),
	neg("planetscale_token", "pscale_xyz_"+tPscale[11:]),

	pos("replicate_key", tR8, r("replicate_key")),
	pos("replicate_key", "REPLICATE_API_TOKEN="+tR8, "REPLICATE_API_TOKEN="+r("replicate_key")),
	pos("replicate_key", "key "+tR8+" revoked", "key "+r("replicate_key")+" revoked"),
	neg("replicate_key", "r8_short"),
	neg("replicate_key", "r8_"+"abcdefghijklmnopqrstuvwxyzabcdefghijk"),

	pos("perplexity_key", tPplx, r("perplexity_key")),
	pos("perplexity_key", "PERPLEXITY_API_KEY="+tPplx, "PERPLEXITY_API_KEY="+r("perplexity_key")),
	pos("perplexity_key", "401 for "+tPplx+".", "401 for "+r("perplexity_key")+"."),
	neg("perplexity_key", "pplx-short"),
	neg("perplexity_key", "pplx-api-documentation"),

	pos("langsmith_key", tLsv2, r("langsmith_key")),
	pos("langsmith_key", "LANGSMITH_API_KEY="+tLsv2sk, "LANGSMITH_API_KEY="+r("langsmith_key")),
	pos("langsmith_key", "tracing with "+tLsv2+" failed", "tracing with "+r("langsmith_key")+" failed"),
	neg("langsmith_key", "lsv2_pt_short"),
	neg("langsmith_key", tLsv2[:40]),

	pos("pinecone_key", tPcsk, r("pinecone_key")),
	pos("pinecone_key", "PINECONE_API_KEY="+tPcsk, "PINECONE_API_KEY="+r("pinecone_key")),
	pos("pinecone_key", "key "+tPcsk+" invalid", "key "+r("pinecone_key")+" invalid"),
	neg("pinecone_key", "pcsk_short"),
	neg("pinecone_key", "pcsk_"),

	pos("tavily_key", tTvly, r("tavily_key")),
	pos("tavily_key", "TAVILY_API_KEY="+tTvlyDev, "TAVILY_API_KEY="+r("tavily_key")),
	pos("tavily_key", "search with "+tTvly+" failed", "search with "+r("tavily_key")+" failed"),
	neg("tavily_key", "tvly-short"),
	neg("tavily_key", "tvly-"),

	pos("nvidia_key", tNvapi, r("nvidia_key")),
	pos("nvidia_key", "NVIDIA_API_KEY="+tNvapi, "NVIDIA_API_KEY="+r("nvidia_key")),
	pos("nvidia_key", "calling with "+tNvapi+" failed", "calling with "+r("nvidia_key")+" failed"),
	neg("nvidia_key", "nvapi-short"),
	neg("nvidia_key", tNvapi[:40]),

	pos("langfuse_key", tLangfuse, r("langfuse_key")),
	pos("langfuse_key", "LANGFUSE_SECRET_KEY="+tLangfuse, "LANGFUSE_SECRET_KEY="+r("langfuse_key")),
	pos("langfuse_key", "auth failed for "+tLangfuse+": 401", "auth failed for "+r("langfuse_key")+": 401"),
	neg("langfuse_key", "sk-lf-short"),
	// (A public key's UUID is a UUID.)
	near("langfuse_key", "pk-lf-8c1d5e2a-4b3f-4e9a-9d7c-2f6b8a1e3c5d", "pk-lf-"+r("uuid")),

	pos("posthog_key", tPostHog, r("posthog_key")),
	pos("posthog_key", "POSTHOG_PERSONAL_API_KEY="+tPostHog, "POSTHOG_PERSONAL_API_KEY="+r("posthog_key")),
	pos("posthog_key", "posthog rejected "+tPostHog, "posthog rejected "+r("posthog_key")),
	neg("posthog_key", "phx_short"),
	neg("posthog_key", "phx_"),

	pos("elevenlabs_key", tEleven, r("elevenlabs_key")),
	pos("elevenlabs_key", "XI_API_KEY="+tEleven, "XI_API_KEY="+r("elevenlabs_key")),
	pos("elevenlabs_key", "tts: 401 for "+tEleven, "tts: 401 for "+r("elevenlabs_key")),
	neg("elevenlabs_key", "sk_"+"000000000000000000000000000000000000000000000000"),
	neg("elevenlabs_key", tEleven[:40]),

	pos("salesforce_token", tSalesforce, r("salesforce_token")),
	pos("salesforce_token", "sid="+tSalesforce, "sid="+r("salesforce_token")),
	pos("salesforce_token", "session "+tSalesforce+" expired", "session "+r("salesforce_token")+" expired"),
	pos("salesforce_token", "00Dxx0000001gPLEAS!"+tSalesforce[16:], r("salesforce_token")),
	neg("salesforce_token", "case 00D123456789012!hello"),
	near("salesforce_token", "00Dxx0000001gP!"+tSalesforce[16:], "00Dxx0000001gP!"+r("high_entropy")),

	// OpenAI-compatible APIs' keys of 32 hexadecimal digits.
	pos("openai_key", "deepseek: 401 for "+tDeepSeek, "deepseek: 401 for "+r("openai_key")),
	neg("openai_key", "sk-0123456789abcdef0123456789abcdef"),

	pos("mailchimp_key", tMailchimp, r("mailchimp_key")),
	pos("mailchimp_key", "MAILCHIMP_API_KEY="+tMailchimp, "MAILCHIMP_API_KEY="+r("mailchimp_key")),
	pos("mailchimp_key", "key "+tMailchimp+" disabled", "key "+r("mailchimp_key")+" disabled"),
	neg("mailchimp_key", tMailchimp[:32]+"-us123"),
	neg("mailchimp_key", tMailchimp[1:]),

	pos("alibaba_key", tLtai, r("alibaba_key")),
	pos("alibaba_key", "ALIBABA_CLOUD_ACCESS_KEY_ID="+tLtai, "ALIBABA_CLOUD_ACCESS_KEY_ID="+r("alibaba_key")),
	pos("alibaba_key", "AccessKeyId "+tLtai+" not found", "AccessKeyId "+r("alibaba_key")+" not found"),
	neg("alibaba_key", "LTAI short"),
	neg("alibaba_key", "LTAIABCDEFGHIJKLMNOPQRST"),

	pos("azure_client_secret", tAzureSecret, r("azure_client_secret")),
	pos("azure_client_secret", "AZURE_CLIENT_SECRET="+tAzureSecret, "AZURE_CLIENT_SECRET="+r("azure_client_secret")),
	pos("azure_client_secret", "secret "+tAzureSecret+" expired", "secret "+r("azure_client_secret")+" expired"),
	neg("azure_client_secret", "abc8Q~short"),
	near("azure_client_secret", "abcXQ~"+tAzureSecret[6:], "abcXQ~"+r("high_entropy")+tAzureSecret[28:]),

	pos("aws_session_token", tIQoJ, r("aws_session_token")),
	pos("aws_session_token", "AWS_SESSION_TOKEN="+tFwoG, "AWS_SESSION_TOKEN="+r("aws_session_token")),
	pos("aws_session_token", "token "+tIQoJ+" expired", "token "+r("aws_session_token")+" expired"),
	near("aws_session_token", tIQoJ[:40], r("high_entropy")),
	neg("aws_session_token", "FwoGZXIvYXdzE"),

	pos("facebook_token", tEAAB, r("facebook_token")),
	pos("facebook_token", "access_token="+tEAAB, "access_token="+r("facebook_token")),
	pos("facebook_token", "graph: "+tEAAB+" expired", "graph: "+r("facebook_token")+" expired"),
	near("facebook_token", tEAAB[:60], r("high_entropy")),
	neg("facebook_token", "EAAB"),

	pos("flyio_token", tFo1, r("flyio_token")),
	pos("flyio_token", "FLY_API_TOKEN="+tFo1, "FLY_API_TOKEN="+r("flyio_token")),
	pos("flyio_token", "Authorization: FlyV1 "+tFm2, "Authorization: FlyV1 "+r("flyio_token")),
	neg("flyio_token", "fo1_short"),
	near("flyio_token", "fo2_"+tFo1[4:], r("high_entropy")),

	pos("terraform_token", tAtlas, r("terraform_token")),
	pos("terraform_token", "TFE_TOKEN="+tAtlas, "TFE_TOKEN="+r("terraform_token")),
	pos("terraform_token", "token "+tAtlas+" denied", "token "+r("terraform_token")+" denied"),
	neg("terraform_token", tAtlas[1:14]+".atlasv1.short"),
	neg("terraform_token", "app.atlasv1.config"),

	pos("rubygems_token", tRubygems, r("rubygems_token")),
	pos("rubygems_token", "GEM_HOST_API_KEY="+tRubygems, "GEM_HOST_API_KEY="+r("rubygems_token")),
	pos("rubygems_token", "push with "+tRubygems+" failed", "push with "+r("rubygems_token")+" failed"),
	neg("rubygems_token", "rubygems_short"),
	neg("rubygems_token", tRubygems[:50]),

	pos("mapbox_token", tMapbox, r("mapbox_token")),
	pos("mapbox_token", "MAPBOX_SECRET="+tMapbox, "MAPBOX_SECRET="+r("mapbox_token")),
	pos("mapbox_token", "token "+tMapbox+" scope", "token "+r("mapbox_token")+" scope"),
	neg("mapbox_token", "pk.eyJ1Ijoi"+tMapbox[11:20]),
	neg("mapbox_token", "sk.eyJshort"),

	pos("heroku_key", tHrku, r("heroku_key")),
	pos("heroku_key", "HEROKU_API_KEY="+tHrku, "HEROKU_API_KEY="+r("heroku_key")),
	pos("heroku_key", "key "+tHrku+" invalid", "key "+r("heroku_key")+" invalid"),
	neg("heroku_key", "HRKU-short"),
	neg("heroku_key", "HRKU"),

	pos("ssn", "applicant 219-09-9999 rejected", "applicant "+r("ssn")+" rejected"),
	pos("ssn", `{"ssn":"536904412"}`, `{"ssn":"`+r("ssn")+`"}`),
	pos("ssn", "SSN: 536 90 4412", "SSN: "+r("ssn")),
	pos("ssn", "social_security_number=536-90-4412;", "social_security_number="+r("ssn")+";"),
	neg("ssn", "id 000-45-6789"),
	neg("ssn", "code 666-12-3456"),
	neg("ssn", "ref 912-45-6789"),
	neg("ssn", "range 123-45-67890"),
	neg("ssn", "ssn: unknown"),

	pos("mac_address", "lease for 3c:22:fb:9a:10:e4 expired", "lease for "+r("mac_address")+" expired"),
	pos("mac_address", "device 3C-22-FB-9A-10-E4 joined", "device "+r("mac_address")+" joined"),
	pos("mac_address", "cisco 3c22.fb9a.10e4 up", "cisco "+r("mac_address")+" up"),
	pos("mac_address", "mac 00:1a:2b:3c:4d:5e", "mac "+r("mac_address")),
	neg("mac_address", "null mac 00:00:00:00:00:00"),
	neg("mac_address", "broadcast ff:ff:ff:ff:ff:ff"),
	neg("mac_address", "at 10:30:45 and 12:00"),
	neg("mac_address", "dead.beef.cafe"),

	pos("iban", "iban=fr1420041010050500013m02606", "iban="+r("iban")),
	pos("iban", "to nl91 abna 0417 1643 00 today", "to "+r("iban")+" today"),
	pos("iban", "IBAN ES91-2100-0418-4502-0005-1332", "IBAN "+r("iban")),
	neg("iban", "gb82west12345698765433"),
	neg("iban", "xx82 west 1234 5698 7654 32"),

	pos("home_user", "stat /home/jdoe/.ssh/id_ed25519", "stat /home/"+r("home_user")+"/.ssh/id_ed25519"),
	neg("home_user", "GET /home/dashboard 200"),
	neg("home_user", "POST /api/Users/42/roles"),
	neg("home_user", "https://example.com/home/feed"),

	pos("mailgun_key", "private key 1a2b3c4d5e6f708192a3b4c5d6e7f809-1a2b3c4d-5e6f7081", "private key "+r("mailgun_key")),
	neg("mailgun_key", "cache key-5d41402abc4b2a76b9719d911017c59"),

	pos("password", "curl -u ops:Tr0ub4dor3 https://api", "curl -u ops:"+r("password")+" https://api"),
	pos("password", "login with password w7SgvecVCd-f9fx failed", "login with password "+r("password")+" failed"),
	pos("password", `{:password => "mu4t4GIxpzlq8j"}`, `{:password => "`+r("password")+`"}`),
	pos("password", "form: map[password:[Eq7DREH48bjLYr] username:[ops]]", "form: map[password:["+r("password")+"] username:[ops]]"),
	pos("password", "postgres password hunter2#1@db", "postgres password "+r("password")),
	neg("password", "const password = req.body.password;"),
	neg("password", "password=$DB_PASSWORD psql"),
	neg("password", "password: PASSWORD"),
	neg("password", "passwords: 3"),

	pos("secret", `{"api_keys":["k1aB2cD3eF4g","k5hI6jK7lM8n"]}`, `{"api_keys":["`+r("secret")+`"]}`),
	pos("secret", `http.Header{"X-Api-Key":[]string{"8f3k2j5h6g7d"}}`, `http.Header{"X-Api-Key":[]string{"`+r("secret")+`"}}`),
	pos("secret", "the token is z2xuohp9rzcuathyzq6nckki now", "the token is "+r("secret")+" now"),
	pos("secret", "Your API key is InmQsLZ4A8mE2LHpSaZ1.", "Your API key is "+r("secret")+"."),
	pos("secret", "--api-key y7xWqJVnIS2d0o6n", "--api-key "+r("secret")),
	pos("secret", "'api_key' => 'MQFlCRY65JyZ0AXa'", "'api_key' => '"+r("secret")+"'"),
	pos("secret", "api_key=sXD6Cv3e1Ru9kris\nyINYzmIpM5JRNIFg\n", "api_key="+r("secret")+"\n"),
	pos("secret", `{"token":"abc\ndef-first-line\nsecond"}`, `{"token":"`+r("secret")+`"}`),
	pos("secret", `{"api_key":"\u0073k3cr3t-v4lue"}`, `{"api_key":"`+r("secret")+`"}`),
	neg("secret", "auth=oauth2 scope=openid"),
	neg("secret", "token = self.token or config.token"),
	neg("secret", "c.token = token"),
	neg("secret", `{"total_tokens":1290}`),
	neg("secret", "api_key=os.getenv(\"OPENAI_API_KEY\")"),
	neg("secret", "private_key=/etc/ssl/private/server.key"),
	neg("secret", "the token expired at 2025-06-01T10:00:00Z"),
	neg("secret", "commit 3f2c1a9b8e7d6c5b4a392817f6e5d4c3b2a19087"),

	pos("db_credentials", "dial postgres://app:p#ss/w?rd@db:5432/app", "dial postgres://"+r("db_credentials")+"@db:5432/app"),
	pos("url_password", `{"url":"https:\/\/svc:Qm9xyz123@api.example.com\/v1"}`, `{"url":"https:\/\/svc:`+r("url_password")+`@api.example.com\/v1"}`),
	pos("url_password", "https://admin:a@b/c?d#e@intranet.example.com/x", "https://admin:"+r("url_password")+"@intranet.example.com/x"),
	neg("url_password", "https://example.com:8443/a?email=x"),

	pos("github_token", "token "+tGHP[:20]+"\n"+tGHP[20:]+"\nnext", "token "+r("github_token")+"\nnext"),
	pos("github_token", "t="+tGHP[:3]+"%5F"+tGHP[4:], "t="+r("github_token")),
	pos("github_token", "t="+tGHP[:3]+`\u005f`+tGHP[4:], "t="+r("github_token")),
	pos("github_token", "tok "+tGHP[:10]+"\u200b"+tGHP[10:]+" x", "tok "+r("github_token")+" x"),

	pos("email", `{"to":"bob\u0040example.com"}`, `{"to":"`+r("email")+`"}`),
	pos("email", "email=bob%40example.com", "email="+r("email")),
	pos("email", "bob&#64;example.com wrote", r("email")+" wrote"),
	neg("email", "50% off at 10% rate"),

	pos("cookie", "map[Cookie:[session=abc123def] Accept:[*/*]]", "map[Cookie:["+r("cookie")+"] Accept:[*/*]]"),
	pos("bearer_token", "map[Authorization:[Bearer abc123def456ghi]]", "map[Authorization:[Bearer "+r("bearer_token")+"]]"),
	pos("bearer_token", "Authorization: Bearer abcdefgh12345678abcd\r\nEFGH5678ijkl9012mnop\r\n", "Authorization: Bearer "+r("bearer_token")+"\r\n"),
	neg("bearer_token", "token_type=bearer expires_in=3600"),
	pos("bearer_token", "headers map[Authorization:[Bearer jane.doe@example.com] Accept:[*/*]]", "headers map[Authorization:[Bearer "+r("bearer_token")+"] Accept:[*/*]]"),
	pos("bearer_token", "headers map[Authorization:[Bearer 4556 7375 8689 9855]]", "headers map[Authorization:[Bearer "+r("bearer_token")+"]]"),
	pos("bearer_token", `{"Authorization":"Bearer abc123 def456"}`, `{"Authorization":"Bearer `+r("bearer_token")+`"}`),
	pos("basic_auth", "Authorization: Basic admin:hunter2", "Authorization: Basic "+r("basic_auth")),
	// An e-mail address as the user name: the password goes with the
	// host, as an address.
	pos("email", "https://bob%40corp.example:pw123456@intranet.example.com/", "https://"+r("email")+":"+r("email")+"/"),

	pos("secret", "API KEY: 8f3k2j5h6g7dQ1", "API KEY: "+r("secret")),
	pos("password", "db:\n  password: |\n    s3cr3t-line\n  user: app", "db:\n  password: |\n    "+r("password")+"\n  user: app"),
	pos("password", "machine api.example.com login ops password s3cr3t", "machine api.example.com login ops password "+r("password")),
	pos("secret", "token: `abc123def456`", "token: `"+r("secret")+"`"),
	pos("password", "<server><password>Tr0ub4dor3</password></server>", "<server><password>"+r("password")+"</password></server>"),
	pos("password", "<ns:Password attr=\"1\"> hunter2 </ns:Password>", "<ns:Password attr=\"1\"> "+r("password")+" </ns:Password>"),
	pos("card", "card 4111.1111.1111.1111 declined", "card "+r("card")+" declined"),
	pos("github_token", "t="+tGHP[:3]+"%255F"+tGHP[4:], "t="+r("github_token")),
	pos("github_token", "t='"+tGHP[:3]+`\x5f`+tGHP[4:]+"'", "t='"+r("github_token")+"'"),
	pos("password", "Passwort: geheim123", "Passwort: "+r("password")),
	neg("password", "<passwordPolicy>strict</passwordPolicy>"),
	neg("password", "db:\n  password: |\n    ${DB_PASSWORD}\n"),
	neg("card", "build 2025.0601.1234.5678"),
}
