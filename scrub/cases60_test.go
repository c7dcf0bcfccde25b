package scrub

// Cases for the families added in session 60: Buildkite, Flexport,
// Fleetbase and HubSpot tokens, whose shapes trufflehog's and Kingfisher's
// rules give. Fake values, random, each assembled from two pieces so that
// secret scanners do not flag this file.
var (
	tBuildkite = "bkua_" + "z1x2c3v4b5n6m7q8w9e0r1t2y3u4i5o6p7l8k9j0"
	tFlexport  = "shltm_" + "k2Jd9_xQ-8vL3mNp7RtY4wZa1Bc6De0Fg5Hi2JkL"
	tFleetbase = "flb_live_" + "Zk8QwR2mXp9LtV4nBy7C"
	tHubSpot   = "pat-na1-" + "3f9a2b7c-1d4e-4a6b-9c8d-7e5f3a2b1c0d"
)

func init() {
	cases = append(cases,
		pos("buildkite_token", tBuildkite, r("buildkite_token")),
		pos("buildkite_token", "BUILDKITE_API_TOKEN="+tBuildkite, "BUILDKITE_API_TOKEN="+r("buildkite_token")),
		pos("buildkite_token", "buildkite: 401 for "+tBuildkite+".", "buildkite: 401 for "+r("buildkite_token")+"."),
		// (Hexadecimal in one case after a word: the token's shape, with
		// its prefix, is what says so.)
		pos("buildkite_token", "BUILDKITE=bkua_"+"9f3a1c2e4b5d6a7f8e9d0c1b2a3f4e5d6c7b8a9f", "BUILDKITE="+r("buildkite_token")),
		neg("buildkite_token", "bkua_"+"1234567890abcdef1234567890abcdef12345678"), // a placeholder
		neg("buildkite_token", tBuildkite[:44]),
		neg("buildkite_token", "bkua_"+"Z1X2C3V4B5N6M7Q8W9E0R1T2Y3U4I5O6P7L8K9J0"),

		pos("flexport_key", tFlexport, r("flexport_key")),
		pos("flexport_key", "FLEXPORT_API_KEY="+tFlexport, "FLEXPORT_API_KEY="+r("flexport_key")),
		pos("flexport_key", "flexport rejected "+tFlexport+": 401", "flexport rejected "+r("flexport_key")+": 401"),
		neg("flexport_key", "shltm_"+"ABCDEFGHIJKLMNOabcdefghijklmno1234567890"), // a placeholder
		neg("flexport_key", tFlexport[:40]),

		pos("fleetbase_key", tFleetbase, r("fleetbase_key")),
		pos("fleetbase_key", "Authorization: Bearer "+tFleetbase, "Authorization: Bearer "+r("fleetbase_key")),
		pos("fleetbase_key", "fleetbase: key "+tFleetbase+" revoked", "fleetbase: key "+r("fleetbase_key")+" revoked"),
		neg("fleetbase_key", "flb_live_"+"1234567890abcdefGHIJ"), // a placeholder
		neg("fleetbase_key", tFleetbase[:25]),

		pos("hubspot_token", tHubSpot, r("hubspot_token")),
		pos("hubspot_token", "Authorization: Bearer "+tHubSpot, "Authorization: Bearer "+r("hubspot_token")),
		pos("hubspot_token", "hubspot: token pat-eu1-"+tHubSpot[8:]+" expired", "hubspot: token "+r("hubspot_token")+" expired"),
		neg("hubspot_token", "pat-na1-"),
		// (A region HubSpot does not write: the UUID alone is found.)
		near("hubspot_token", "pat-xx1-"+tHubSpot[8:], "pat-xx1-"+r("uuid")),
	)
}
