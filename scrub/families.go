package scrub

// family identifies one kind of finding. The built-in families come first;
// a Scrubber appends the families of its extra patterns after them.
type family = int

// The built-in families. The identifier families (famEmail and later) are
// the ones WithKeyedHash turns into stable pseudonyms.
const (
	famAWSAccessKey family = iota
	famAWSSecretKey
	famGitHubToken
	famGitLabToken
	famSlackToken
	famSlackWebhook
	famStripeKey
	famOpenAIKey
	famAnthropicKey
	famGoogleAPIKey
	famJWT
	famBearerToken
	famBasicAuth
	famPrivateKey
	famURLPassword
	famDBCredentials
	famQuerySecret
	famPassword
	famSecret
	famHuggingFaceToken
	famNPMToken
	famPyPIToken
	famSendGridKey
	famTwilioKey
	famDigitalOceanToken
	famShopifyToken
	famMailgunKey
	famAzureKey
	famDiscordToken
	famDiscordWebhook
	famTelegramToken
	famDatabricksToken
	famGroqKey
	famXAIKey
	famOpenRouterKey
	famCookie
	famGoogleOAuthToken
	famGoogleClientSecret
	famVaultToken
	famGrafanaToken
	famSentryToken
	famLinearKey
	famNotionToken
	famPostmanKey
	famNewRelicKey
	famDopplerToken
	famAtlassianToken
	famSupabaseToken
	famAgeSecretKey
	famSquareToken
	famPulumiToken
	famDockerHubToken
	famPlanetScaleToken
	famReplicateKey
	famPerplexityKey
	famLangSmithKey
	famPineconeKey
	famTavilyKey
	famMailchimpKey
	famAlibabaKey
	famAzureClientSecret
	famAWSSessionToken
	famFacebookToken
	famFlyioToken
	famTerraformToken
	famRubyGemsToken
	famMapboxToken
	famHerokuKey
	// Vendor tokens added for issue 31 (gitleaks' rules).
	famTeamsWebhook
	famOnePasswordToken
	famAdobeKey
	famAirtableToken
	famArtifactoryToken
	famAuthressKey
	famBedrockKey
	famClickHouseKey
	famClojarsToken
	famCloudflareKey
	famDuffelToken
	famDynatraceToken
	famEasyPostKey
	famFlutterwaveKey
	famFrameioToken
	famHarnessKey
	famInfracostKey
	famIntra42Secret
	famMaxMindKey
	famOctopusKey
	famOpenShiftToken
	famPrefectKey
	famReadmeKey
	famScalingoToken
	famBrevoKey
	famSettleMintToken
	famShippoToken
	famSourcegraphToken
	famYandexKey
	famSonarToken
	famTypeformToken
	famDefinedNetworkingToken
	famPlaidToken
	famDropboxToken
	famBeamerToken
	famTwitterToken
	famLobKey
	famGoCardlessToken
	famFigmaToken
	famVercelToken
	famTailscaleKey
	famPackagistToken
	famZapierWebhook
	famNvidiaKey
	famLangfuseKey
	famPostHogKey
	famElevenLabsKey
	famSalesforceToken
	famBuildkiteToken
	famFlexportKey
	famFleetbaseKey
	famHubSpotToken
	famHighEntropy

	famEmail
	famCard
	famIBAN
	famPhone
	famIP
	famUUID
	famHomeUser
	famSSN
	famMAC

	numFamilies
)

// familyNames holds the name of every built-in family, indexed by family.
var familyNames = [numFamilies]string{
	famAWSAccessKey:      "aws_access_key",
	famAWSSecretKey:      "aws_secret_key",
	famGitHubToken:       "github_token",
	famGitLabToken:       "gitlab_token",
	famSlackToken:        "slack_token",
	famSlackWebhook:      "slack_webhook",
	famStripeKey:         "stripe_key",
	famOpenAIKey:         "openai_key",
	famAnthropicKey:      "anthropic_key",
	famGoogleAPIKey:      "google_api_key",
	famJWT:               "jwt",
	famBearerToken:       "bearer_token",
	famBasicAuth:         "basic_auth",
	famPrivateKey:        "private_key",
	famURLPassword:       "url_password",
	famDBCredentials:     "db_credentials",
	famQuerySecret:       "query_secret",
	famPassword:          "password",
	famSecret:            "secret",
	famHuggingFaceToken:  "huggingface_token",
	famNPMToken:          "npm_token",
	famPyPIToken:         "pypi_token",
	famSendGridKey:       "sendgrid_key",
	famTwilioKey:         "twilio_key",
	famDigitalOceanToken: "digitalocean_token",
	famShopifyToken:      "shopify_token",
	famMailgunKey:        "mailgun_key",
	famAzureKey:          "azure_key",
	famDiscordToken:      "discord_token",
	famDiscordWebhook:    "discord_webhook",
	famTelegramToken:     "telegram_token",
	famDatabricksToken:   "databricks_token",
	famGroqKey:           "groq_key",
	famXAIKey:            "xai_key",
	famOpenRouterKey:     "openrouter_key",
	famCookie:            "cookie",

	famGoogleOAuthToken:   "google_oauth_token",
	famGoogleClientSecret: "google_client_secret",
	famVaultToken:         "vault_token",
	famGrafanaToken:       "grafana_token",
	famSentryToken:        "sentry_token",
	famLinearKey:          "linear_key",
	famNotionToken:        "notion_token",
	famPostmanKey:         "postman_key",
	famNewRelicKey:        "newrelic_key",
	famDopplerToken:       "doppler_token",
	famAtlassianToken:     "atlassian_token",
	famSupabaseToken:      "supabase_token",
	famAgeSecretKey:       "age_secret_key",
	famSquareToken:        "square_token",
	famPulumiToken:        "pulumi_token",
	famDockerHubToken:     "dockerhub_token",
	famPlanetScaleToken:   "planetscale_token",
	famReplicateKey:       "replicate_key",
	famPerplexityKey:      "perplexity_key",
	famLangSmithKey:       "langsmith_key",
	famPineconeKey:        "pinecone_key",
	famTavilyKey:          "tavily_key",
	famMailchimpKey:       "mailchimp_key",
	famAlibabaKey:         "alibaba_key",
	famAzureClientSecret:  "azure_client_secret",
	famAWSSessionToken:    "aws_session_token",
	famFacebookToken:      "facebook_token",
	famFlyioToken:         "flyio_token",
	famTerraformToken:     "terraform_token",
	famRubyGemsToken:      "rubygems_token",
	famMapboxToken:        "mapbox_token",
	famHerokuKey:          "heroku_key",

	// Vendor tokens added for issue 31 (gitleaks' rules).
	famTeamsWebhook:           "teams_webhook",
	famOnePasswordToken:       "onepassword_token",
	famAdobeKey:               "adobe_key",
	famAirtableToken:          "airtable_token",
	famArtifactoryToken:       "artifactory_token",
	famAuthressKey:            "authress_key",
	famBedrockKey:             "bedrock_key",
	famClickHouseKey:          "clickhouse_key",
	famClojarsToken:           "clojars_token",
	famCloudflareKey:          "cloudflare_key",
	famDuffelToken:            "duffel_token",
	famDynatraceToken:         "dynatrace_token",
	famEasyPostKey:            "easypost_key",
	famFlutterwaveKey:         "flutterwave_key",
	famFrameioToken:           "frameio_token",
	famHarnessKey:             "harness_key",
	famInfracostKey:           "infracost_key",
	famIntra42Secret:          "intra42_secret",
	famMaxMindKey:             "maxmind_key",
	famOctopusKey:             "octopus_key",
	famOpenShiftToken:         "openshift_token",
	famPrefectKey:             "prefect_key",
	famReadmeKey:              "readme_key",
	famScalingoToken:          "scalingo_token",
	famBrevoKey:               "brevo_key",
	famSettleMintToken:        "settlemint_token",
	famShippoToken:            "shippo_token",
	famSourcegraphToken:       "sourcegraph_token",
	famYandexKey:              "yandex_key",
	famSonarToken:             "sonar_token",
	famTypeformToken:          "typeform_token",
	famDefinedNetworkingToken: "definednetworking_token",
	famPlaidToken:             "plaid_token",
	famDropboxToken:           "dropbox_token",
	famBeamerToken:            "beamer_token",
	famTwitterToken:           "twitter_token",
	famLobKey:                 "lob_key",
	famGoCardlessToken:        "gocardless_token",
	famFigmaToken:             "figma_token",
	famVercelToken:            "vercel_token",
	famTailscaleKey:           "tailscale_key",
	famPackagistToken:         "packagist_token",
	famZapierWebhook:          "zapier_webhook",
	famNvidiaKey:              "nvidia_key",
	famLangfuseKey:            "langfuse_key",
	famPostHogKey:             "posthog_key",
	famElevenLabsKey:          "elevenlabs_key",
	famSalesforceToken:        "salesforce_token",
	famBuildkiteToken:         "buildkite_token",
	famFlexportKey:            "flexport_key",
	famFleetbaseKey:           "fleetbase_key",
	famHubSpotToken:           "hubspot_token",
	famHighEntropy:            "high_entropy",

	famEmail:    "email",
	famCard:     "card",
	famIBAN:     "iban",
	famPhone:    "phone",
	famIP:       "ip",
	famUUID:     "uuid",
	famHomeUser: "home_user",
	famSSN:      "ssn",
	famMAC:      "mac_address",
}

// isIdentifier reports whether a built-in family names a person or a
// machine rather than a credential.
func isIdentifier(f family) bool {
	return f >= famEmail && f < numFamilies
}
