package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/auth/extauth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// given is what a scenario tells the client in MCP_CONFORMANCE_CONTEXT:
// credentials registered ahead of time at the authorization server (the
// pre-registration and client-credentials scenarios), a private key to sign
// the client's assertions with (private_key_jwt), and the enterprise
// identity provider of the cross-app-access flow, with an ID token it
// issued to this client.
type given struct {
	ClientID         string `json:"client_id"`
	ClientSecret     string `json:"client_secret"`
	PrivateKeyPEM    string `json:"private_key_pem"`
	SigningAlgorithm string `json:"signing_algorithm"`
	IdPClientID      string `json:"idp_client_id"`
	IdPIDToken       string `json:"idp_id_token"`
	IdPIssuer        string `json:"idp_issuer"`
	IdPTokenEndpoint string `json:"idp_token_endpoint"`
}

func readContext(s string) (given, error) {
	var g given
	if s == "" {
		return g, nil
	}
	if err := json.Unmarshal([]byte(s), &g); err != nil {
		return g, fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
	}
	return g, nil
}

// The client's redirect URI and its Client ID Metadata Document: the
// suite's authorization server redirects at once, with the code, and the
// document's URL is never resolved (its host does not exist; the scenarios
// that offer CIMD check the client_id's form, and one notes, as
// information only, that it could not fetch it).
const (
	redirectURL = "http://localhost:3000/callback"
	cimdURL     = "https://conformance-test.local/client-metadata.json"
)

// oauthHandler is the OAuth handler the transport uses in an auth/*
// scenario, configured as a go-sdk user configures one: the
// client-credentials grant for a service, SEP-990's enterprise flow given
// an identity provider, and otherwise the authorization-code flow with
// every registration it can do (a Client ID Metadata Document, credentials
// registered ahead of time when it has some, dynamic registration).
func oauthHandler(scenario string, g given) (auth.OAuthHandler, error) {
	switch {
	case strings.HasPrefix(scenario, "auth/client-credentials-") && g.PrivateKeyPEM != "":
		h, err := newJWTClientCredentials(g)
		if err != nil {
			return nil, err
		}
		return h, nil
	case strings.HasPrefix(scenario, "auth/client-credentials-"):
		h, err := extauth.NewClientCredentialsHandler(&extauth.ClientCredentialsHandlerConfig{
			Credentials: secretCredentials(g.ClientID, g.ClientSecret),
		})
		if err != nil {
			return nil, err
		}
		return h, nil
	case g.IdPIssuer != "":
		return &enterprise{given: g}, nil
	}
	cfg := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL:                    redirectURL,
		AuthorizationCodeFetcher:       followRedirect,
		ClientIDMetadataDocumentConfig: &auth.ClientIDMetadataDocumentConfig{URL: cimdURL},
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{
			Metadata: &oauthex.ClientRegistrationMetadata{
				ClientName:   "toolmw-conformance-client",
				RedirectURIs: []string{redirectURL},
				GrantTypes:   []string{"authorization_code", "refresh_token"},
			},
		},
		// The client keeps what it is given in memory, for this one run:
		// it asks for a refresh token where the server offers one.
		RequestRefreshToken: true,
	}
	if g.ClientID != "" && g.ClientSecret != "" {
		cfg.PreregisteredClient = secretCredentials(g.ClientID, g.ClientSecret)
	}
	h, err := auth.NewAuthorizationCodeHandler(cfg)
	if err != nil {
		return nil, err
	}
	return h, nil
}

func secretCredentials(id, secret string) *oauthex.ClientCredentials {
	c := &oauthex.ClientCredentials{ClientID: id}
	if secret != "" {
		c.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: secret}
	}
	return c
}

// followRedirect is the user's side of the authorization-code flow: the
// suite's authorization server asks nothing, and answers the authorization
// request with a redirect to the client's callback carrying the code, the
// state and, where the server sends it, its issuer (RFC 9207).
func followRedirect(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, args.URL, nil)
	if err != nil {
		return nil, err
	}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	loc, err := resp.Location()
	if err != nil {
		return nil, fmt.Errorf("the authorization server did not redirect (%s): %w", resp.Status, err)
	}
	q := loc.Query()
	if e := q.Get("error"); e != "" {
		return nil, fmt.Errorf("authorization refused: %s %s", e, q.Get("error_description"))
	}
	return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
}

// protectedResource discovers the Protected Resource Metadata (RFC 9728) of
// the MCP server that answered resp to req: at the URL its WWW-Authenticate
// challenge names, else at the well-known URL for the endpoint's path.
func protectedResource(ctx context.Context, req *http.Request, resp *http.Response) (*oauthex.ProtectedResourceMetadata, error) {
	challenges, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if err != nil {
		return nil, fmt.Errorf("WWW-Authenticate: %w", err)
	}
	resource := req.URL.String()
	var tried []string
	for _, c := range challenges {
		if u := c.Params["resource_metadata"]; u != "" {
			tried = append(tried, u)
		}
	}
	wellKnown := *req.URL
	wellKnown.RawQuery, wellKnown.Fragment = "", ""
	wellKnown.Path = "/.well-known/oauth-protected-resource/" + strings.TrimLeft(req.URL.Path, "/")
	tried = append(tried, wellKnown.String())
	var errs []error
	for _, u := range tried {
		prm, err := oauthex.GetProtectedResourceMetadata(ctx, u, resource, http.DefaultClient)
		switch {
		case err != nil:
			errs = append(errs, err)
		case prm == nil || len(prm.AuthorizationServers) == 0:
			errs = append(errs, fmt.Errorf("%s names no authorization server", u))
		default:
			return prm, nil
		}
	}
	return nil, fmt.Errorf("no protected resource metadata for %s: %w", resource, errors.Join(errs...))
}

// enterprise is SEP-990's Enterprise-Managed Authorization: the client
// trades the ID token the enterprise identity provider gave it for an
// identity assertion grant (ID-JAG, RFC 8693 token exchange at the
// provider), and that for an access token (RFC 7523 JWT bearer grant at the
// MCP server's authorization server, which it learns from the server's
// 401). The go-sdk's extauth.EnterpriseHandler does the same two steps, but
// it requires the provider's metadata to advertise PKCE, which a provider
// that only exchanges tokens need not (the suite's does not), and it
// authenticates the client in the grant's parameters (client_secret_post)
// whatever the authorization server supports; so the client does the steps
// with oauthex.ExchangeToken and x/oauth2 itself.
type enterprise struct {
	given given

	mu sync.Mutex
	ts oauth2.TokenSource
}

func (e *enterprise) TokenSource(context.Context) (oauth2.TokenSource, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.ts, nil
}

func (e *enterprise) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	prm, err := protectedResource(ctx, req, resp)
	resp.Body.Close()
	if err != nil {
		return err
	}
	issuer := prm.AuthorizationServers[0]
	tokenEndpoint := e.given.IdPTokenEndpoint
	if tokenEndpoint == "" {
		tokenEndpoint = strings.TrimSuffix(e.given.IdPIssuer, "/") + "/token"
	}
	jag, err := oauthex.ExchangeToken(ctx, tokenEndpoint, &oauthex.TokenExchangeRequest{
		RequestedTokenType: oauthex.TokenTypeIDJAG,
		Audience:           issuer,
		Resource:           prm.Resource,
		Scope:              prm.ScopesSupported,
		SubjectToken:       e.given.IdPIDToken,
		SubjectTokenType:   oauthex.TokenTypeIDToken,
	}, secretCredentials(e.given.IdPClientID, ""), http.DefaultClient)
	if err != nil {
		return fmt.Errorf("token exchange at the identity provider: %w", err)
	}
	asm, err := auth.GetAuthServerMetadata(ctx, issuer, http.DefaultClient)
	if err != nil {
		return err
	}
	if asm == nil {
		return fmt.Errorf("no authorization server metadata at %s", issuer)
	}
	// The JWT bearer grant, by x/oauth2's client-credentials Config, which
	// lets a grant_type parameter replace its own.
	cfg := &clientcredentials.Config{
		ClientID:     e.given.ClientID,
		ClientSecret: e.given.ClientSecret,
		TokenURL:     asm.TokenEndpoint,
		Scopes:       prm.ScopesSupported,
		AuthStyle:    authStyle(asm.TokenEndpointAuthMethodsSupported),
		EndpointParams: url.Values{
			"grant_type": {"urn:ietf:params:oauth:grant-type:jwt-bearer"},
			"assertion":  {jag.AccessToken},
		},
	}
	tok, err := cfg.Token(ctx)
	if err != nil {
		return fmt.Errorf("JWT bearer grant: %w", err)
	}
	e.mu.Lock()
	e.ts = oauth2.StaticTokenSource(tok)
	e.mu.Unlock()
	return nil
}

// authStyle is how the client authenticates at a token endpoint that
// supports the given methods: HTTP Basic unless only client_secret_post is.
func authStyle(supported []string) oauth2.AuthStyle {
	if len(supported) > 0 && !slices.Contains(supported, "client_secret_basic") && slices.Contains(supported, "client_secret_post") {
		return oauth2.AuthStyleInParams
	}
	return oauth2.AuthStyleInHeader
}

// jwtClientCredentials is the client-credentials grant with the client
// authenticated by a JWT it signs (private_key_jwt, RFC 7523 section 2.2),
// which the go-sdk's ClientCredentialsHandler does not do: it discovers the
// token endpoint as that handler does, and sends the assertion in the
// token request's parameters.
type jwtClientCredentials struct {
	clientID string
	key      *ecdsa.PrivateKey

	mu sync.Mutex
	ts oauth2.TokenSource
}

func newJWTClientCredentials(g given) (*jwtClientCredentials, error) {
	if g.SigningAlgorithm != "" && g.SigningAlgorithm != "ES256" {
		return nil, fmt.Errorf("private_key_jwt: signing algorithm %q: only ES256 is supported", g.SigningAlgorithm)
	}
	if g.ClientID == "" {
		return nil, errors.New("private_key_jwt: no client_id")
	}
	block, _ := pem.Decode([]byte(g.PrivateKeyPEM))
	if block == nil {
		return nil, errors.New("private_key_jwt: the private key is not PEM")
	}
	var key any
	var err error
	if block.Type == "EC PRIVATE KEY" {
		key, err = x509.ParseECPrivateKey(block.Bytes)
	} else {
		key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	}
	if err != nil {
		return nil, fmt.Errorf("private_key_jwt: %w", err)
	}
	ec, ok := key.(*ecdsa.PrivateKey)
	if !ok || ec.Curve.Params().BitSize != 256 {
		return nil, errors.New("private_key_jwt: ES256 needs a P-256 key")
	}
	return &jwtClientCredentials{clientID: g.ClientID, key: ec}, nil
}

func (h *jwtClientCredentials) TokenSource(context.Context) (oauth2.TokenSource, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.ts, nil
}

func (h *jwtClientCredentials) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	prm, err := protectedResource(ctx, req, resp)
	resp.Body.Close()
	if err != nil {
		return err
	}
	asm, err := auth.GetAuthServerMetadata(ctx, prm.AuthorizationServers[0], http.DefaultClient)
	if err != nil {
		return err
	}
	if asm == nil {
		return fmt.Errorf("no authorization server metadata at %s", prm.AuthorizationServers[0])
	}
	assertion, err := h.assertion(asm.Issuer)
	if err != nil {
		return err
	}
	cfg := &clientcredentials.Config{
		ClientID:  h.clientID,
		TokenURL:  asm.TokenEndpoint,
		Scopes:    prm.ScopesSupported,
		AuthStyle: oauth2.AuthStyleInParams,
		EndpointParams: url.Values{
			"client_assertion_type": {"urn:ietf:params:oauth:client-assertion-type:jwt-bearer"},
			"client_assertion":      {assertion},
			"resource":              {prm.Resource},
		},
	}
	tok, err := cfg.Token(ctx)
	if err != nil {
		return fmt.Errorf("client credentials grant: %w", err)
	}
	h.mu.Lock()
	h.ts = oauth2.StaticTokenSource(tok)
	h.mu.Unlock()
	return nil
}

// assertion is a short-lived JWT naming the client as issuer and subject
// and the authorization server as audience, signed ES256.
func (h *jwtClientCredentials) assertion(audience string) (string, error) {
	jti := make([]byte, 16)
	if _, err := rand.Read(jti); err != nil {
		return "", err
	}
	now := time.Now()
	header, _ := json.Marshal(map[string]string{"alg": "ES256", "typ": "JWT"})
	claims, err := json.Marshal(map[string]any{
		"iss": h.clientID,
		"sub": h.clientID,
		"aud": audience,
		"iat": now.Unix(),
		"exp": now.Add(5 * time.Minute).Unix(),
		"jti": base64.RawURLEncoding.EncodeToString(jti),
	})
	if err != nil {
		return "", err
	}
	signed := base64.RawURLEncoding.EncodeToString(header) + "." + base64.RawURLEncoding.EncodeToString(claims)
	digest := sha256.Sum256([]byte(signed))
	r, s, err := ecdsa.Sign(rand.Reader, h.key, digest[:])
	if err != nil {
		return "", err
	}
	sig := make([]byte, 64) // JWS: R and S, 32 bytes each (RFC 7518 section 3.4)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	return signed + "." + base64.RawURLEncoding.EncodeToString(sig), nil
}
