package scrub

import "testing"

// Session 59 (issue 31), from ripsecrets' test data
// (github.com/sirwart/ripsecrets, test/one_per_line).

// TestOpaqueJOSE59: a compact JWS whose payload is not JSON and a compact
// JWE (five parts; the encrypted key empty for direct encryption) are
// JWTs; dotted words that begin so but have the wrong parts are not (a
// long random part is still high_entropy).
func TestOpaqueJOSE59(t *testing.T) {
	jwe := "eyJhbGciOiJSU0EtT0FFUCIsImVuYyI6IkEyNTZHQ00ifQ." +
		"OKOawDo13gRp2ojaHV7LFpZcgV7T6DVZKTyKOMTYUmKoTCVJRgckCL9kiMT03JGeipsEdY3mx_etLbbWSrFr05kLzcSr4qKAq7YN7e9jwQRb23nfa6c9d-StnImGyFDbSv04uVuxIp5Zms1gNxKKK2Da14B8S4rzVRltdYwam_lDp5XnZAYpQdb76FdIKLaVmqgfwX7XWRxv2322i-vDxRfqNzo_tETKzpVLzfiwQyeyPGLBIO56YJ7eObdv0je81860ppamavo35UgoRdbYaBcoh9QcfylQr66oc6vFWXRcZ_ZT2LawVCWTIy3brGPi6UklfCpIMfIjf7iGdXKHzg." +
		"48V1_ALb6US04U3b.5eym8TW_c8SuK0ltJ3rpYIzOeDQz7TALvtu6UG9oMo4vpzs9tX_EFShS8iB7j6jiSdiwkIr3ajwQzaBtQD_A.XFBoMYUZodetZdvTiFvSkQ"
	dir := "eyJhbGciOiJkaXIiLCJlbmMiOiJBMTI4R0NNIn0..Zk1lZnF0QmF2NUl6b3dn.c2VjcmV0IG1lc3NhZ2U.Qm9ndXNUYWdGb3JUZXN0MDE"
	check57(t, []case57{
		{"token " + jwe + " sent", "token " + r("jwt") + " sent"},
		{jwe + ".", r("jwt") + "."},
		{"cookie=" + dir + ";", "cookie=" + r("jwt") + ";"},
		{"x eyJhbGciOiJIUzI1NiJ9.SGVsbG8sIHdvcmxkIQ.pcY7lTRb9P3nFm4DvRW9ZvWkqKV2N8xW3dl0-hQ5vGE y", "x " + r("jwt") + " y"},
		// A signature or a tag too short, a sixth part, another header.
		{"x eyJhbGciOiJIUzI1NiJ9.SGVsbG8sIHdvcmxkIQ.pcY7lTRb y", ""},
		{"x eyJhbGciOiJkaXIiLCJlbmMiOiJBMTI4R0NNIn0..Zk1lZnF0QmF2NUl6b3dn.c2Vj.Qm9n y", ""},
		{"x eyJmb28iOiJiYXIiLCJiYXoiOjF9.SGVsbG8sIHdvcmxkIQ.pcY7lTRb9P3nFm4DvRW9ZvWkqKV2N8xW3dl0-hQ5vGE y", "x " + r("high_entropy") + " y"},
	})
}

// TestGitHubPAT59: github_pat_ and a body of 22 bytes or more (the first
// part of a fine-grained token, or a token cut short in a log) is a token;
// a placeholder body is not. An installation token of the longer format is
// one token.
func TestGitHubPAT59(t *testing.T) {
	check57(t, []case57{
		{"github_pat_wWPw5k4aXcaT4fNP0UcnZwJUVFk6LO0pINUx", r("github_token")},
		{"GH=github_pat_NqVwYS81VP7Hb1DX8pPd5k", "GH=" + r("github_token")},
		{"github_pat_NqVwYS81VP7Hb1DX8pP", ""},
		{"github_pat_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", ""},
		// An installation token of the longer format (secretlint's rule):
		// ghs_, the app id, '_' and a JWT, one token.
		{"auth ghs_12345_eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJpYXQiOjE3NDU1NjgwMDAsImV4cCI6MTc0NTU2ODM2MCwiaXNzIjoiMTIzNDUiLCJzdWIiOiJnaXRodWJ8MTIzNDUifQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c ok",
			"auth " + r("github_token") + " ok"},
		{"ghs_12345_abc", ""},
	})
}

// TestGluedTail59: a base64url token's body that a '+' or a '=' stopped
// goes on to the end of its run, within the vendor's longest body; a '='
// before a value of its own (key=value, padding) or a run too long ends
// it where it was.
func TestGluedTail59(t *testing.T) {
	check57(t, []case57{
		{"EAAA3bckPLm8nKzXY9vB4QjR7wF2hGtN5sVdM6pJuE1iZxW+CqH-yA4gTf=aDl0U", r("square_token")},
		{"sq=EAAA3bckPLm8nKzXY9vB4QjR7wF2hGtN5sVdM6pJuE1iZxW&x=1", "sq=" + r("square_token") + "&x=1"},
		{"EAAA3bckPLm8nKzXY9vB4QjR7wF2hGtN5sVdM6pJuE1iZxW== next", r("square_token") + "== next"},
	})
}

// TestBackslashEnd59: a random run that a '\' ends before a blank, a
// closing brace or the end stands alone (Maven's encrypted master
// password, {…\}; a line continuation); one before a name or an escape is
// joined to it (a Windows path, \n).
func TestBackslashEnd59(t *testing.T) {
	const v = "vki9JTFmEYlTlCZixjz0jr5QxEXlZfWga65QZhsA9yV0uRfo2iNyfgZDnWpuYqNi"
	check57(t, []case57{
		{`<master>{` + v + `\}</master>`, `<master>{` + r("high_entropy") + `\}</master>`},
		{"run " + v + "\\", "run " + r("high_entropy") + "\\"},
		{"run " + v + "\\ \n  --flag", "run " + r("high_entropy") + "\\ \n  --flag"},
		{`C:\build\` + v[:30] + `\out.txt`, ""},
		{`C:\build\` + v[:30] + `\.cache`, ""},
	})
}

// TestTelegram59: a bot id and 35 random base64url bytes are a Telegram
// bot token whatever byte the secret begins with (Kingfisher's and
// trufflehog's rules; gitleaks' asks for an 'A').
func TestTelegram59(t *testing.T) {
	check57(t, []case57{
		{"telegram: 1234567890:h3YLlUHP8-STgTic38bCZXDJ_6s05ERgsaM", "telegram: " + r("telegram_token")},
		{"tgram://12345678:ulTK_HG7-Sb3_zcz5CV2VjFyoNH0cZoGM1r", "tgram://" + r("telegram_token")},
		{"at 12345678:abcdefghijklmnopqrstuvwxyzabcdefghi", ""},
		{"id 12345678:ulTK_HG7-Sb3_zcz5CV2VjFyoNH0cZoGM1rX", ""},
	})
}
