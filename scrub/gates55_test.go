package scrub

import (
	"encoding/base64"
	"encoding/hex"
	"strings"
	"testing"
)

// Session 55 (issue 31): the shortcuts that made the scan faster without
// changing what it finds, at their edges. Each rules a value out by a
// condition every finding of its matcher meets, and the cases are the
// findings that meet it barely:
//   - mayBeIPv6: an address holds "::" or six colons at least (six
//     groups and a dotted tail), within the run of hexadecimal digits,
//     colons and dots it begins (the longest form is 45 bytes);
//   - matchMAC's separators: six groups of two, three of four;
//   - mayBeIPv4: the third dot within 15 bytes (255.255.255.255);
//   - matchRandomRun: a short run is found only if it holds letters and
//     digits alone;
//   - decodeRun, in one pass: hexadecimal in pairs from each line's start,
//     base64 across lines, both wrapped;
//   - matchVendor, by the first two bytes of the prefix;
//   - endsWithTerm, by the byte before the key's tail (TestEndsWithTerm
//     checks it against its definition).
func TestGates55(t *testing.T) {
	secret := "password=Xk9vQ2mLp7Rt4wZs then more text here and more text after it"
	hx := hex.EncodeToString([]byte(secret))
	b64 := base64.StdEncoding.EncodeToString([]byte(secret + " and padding to wrap the encoded run past one line"))
	wrap := func(s string, w int, br string) string {
		var b strings.Builder
		for len(s) > w {
			b.WriteString(s[:w] + br)
			s = s[w:]
		}
		return b.String() + s
	}
	cases := []struct{ in, want string }{
		{"peer 1:2:3:4:5:6:7:8 down", "peer " + r("ip") + " down"},
		{"peer 2001:db8:1:2:3:4:10.1.2.3 down", "peer " + r("ip") + " down"},
		{"peer fe80::1ff:fe23:4567:890a down", "peer " + r("ip") + " down"},
		{"peer 2001:db8::1 down", "peer " + r("ip") + " down"},
		{"peer 2001:0db8:85a3:0000:0000:8a2e:192.168.100.200 down", "peer " + r("ip") + " down"},
		{"at 10:20:30 and 1:2:3:4:5:6 x", "at 10:20:30 and 1:2:3:4:5:6 x"},
		{"mac 00:1a:2b:3c:4d:5e up", "mac " + r("mac_address") + " up"},
		{"mac 00-1A-2B-3C-4D-5E up", "mac " + r("mac_address") + " up"},
		{"mac 001a.2b3c.4d5e up", "mac " + r("mac_address") + " up"},
		{"mac 00:1a:2b:3c:4d up", "mac 00:1a:2b:3c:4d up"},
		{"from 192.168.100.200 ok", "from " + r("ip") + " ok"},
		{"from 10.1.2.3 ok", "from " + r("ip") + " ok"},
		{"v 1.2.3 and 10.7.7.1.2", "v 1.2.3 and 10.7.7.1.2"},
		{"id k3J9xQ2mZ7pL4 end", "id " + r("high_entropy") + " end"},
		{"id i7nz3oy4x5j69u5 end", "id " + r("high_entropy") + " end"},
		{"id ab3-Kx9mQ2pL end", "id ab3-Kx9mQ2pL end"},
		{"at 2025-05-01T10:20:30Z; shipments-76 back", "at 2025-05-01T10:20:30Z; shipments-76 back"},
		{"blob " + hx + " end", "blob " + r("password") + " end"},
		{"blob " + strings.ToUpper(hx) + " end", "blob " + r("password") + " end"},
		{"blob " + wrap(hx, 64, "\n") + " end", "blob " + r("password") + " end"},
		{"blob " + wrap(b64, 76, "\r\n") + " end", "blob " + r("password") + " end"},
		// Lines of an odd width: each line's last digit is dropped.
		{"blob " + hx[:60] + "0\n" + hx[60:120] + "0 end", "blob " + r("password") + " end"},
		{"shippo_live_" + strings.Repeat("0a1b2c3d4e", 4) + " sent", r("shippo_token") + " sent"},
		{"shipments-76 shippo sent", "shipments-76 shippo sent"},
	}
	for _, c := range cases {
		if got := String(c.in); got != c.want {
			t.Errorf("String(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}
