package scrub_test

import (
	"fmt"
	"log"
	"regexp"

	"github.com/toolmw/toolmw/scrub"
)

func Example() {
	fmt.Println(scrub.String("auth failed for bob@example.com from 10.0.0.12: password=hunter2"))
	fmt.Println(scrub.String(`{"user": "bob", "api_key": "9f8e7d6c5b4a", "retry_after": "1.5s"}`))
	fmt.Println(scrub.String("dial postgres://app:s3cret@db.internal:5432/app: connection refused"))
	fmt.Println(scrub.String("upstream returned 503 after 3 attempts; version v1.2.3"))
	// Output:
	// auth failed for [REDACTED:email] from [REDACTED:ip]: password=[REDACTED:password]
	// {"user": "bob", "api_key": "[REDACTED:secret]", "retry_after": "1.5s"}
	// dial postgres://[REDACTED:db_credentials]@db.internal:5432/app: connection refused
	// upstream returned 503 after 3 attempts; version v1.2.3
}

func ExampleNew() {
	s, err := scrub.New(
		scrub.WithoutFamilies("ip"),
		scrub.WithAllow("test@example.com"),
		scrub.WithPattern("ticket", regexp.MustCompile(`\bTCK-[0-9]{6}\b`)),
	)
	if err != nil {
		log.Fatal(err) // an unknown family or a bad pattern
	}
	fmt.Println(s.String("TCK-004217: test@example.com and bob@example.com at 10.0.0.12"))
	// Output:
	// [REDACTED:ticket]: test@example.com and [REDACTED:email] at 10.0.0.12
}

func ExampleWithKeyedHash() {
	s, err := scrub.New(scrub.WithKeyedHash([]byte("per-run key")))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(s.String("bob@example.com wrote to alice@example.com; bob@example.com again"))
	// Output:
	// [REDACTED:email:f23ef106] wrote to [REDACTED:email:dd9f2cc8]; [REDACTED:email:f23ef106] again
}

func ExampleScrubber_Find() {
	in := "mail bob@example.com, token=ghp_" + "u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d"
	for _, m := range scrub.Default().Find(in) {
		fmt.Println(m.Start, m.End, m.Family)
	}
	// Output:
	// 5 20 email
	// 28 68 github_token
}
