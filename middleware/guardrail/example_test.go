package guardrail_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware/guardrail"
	"github.com/toolmw/toolmw/taxonomy"
)

func Example() {
	cardNumber := regexp.MustCompile(`\b\d{4}[ -]?\d{4}[ -]?\d{4}[ -]?\d{4}\b`)
	noCards := func(_ context.Context, _ toolmw.Call, args json.RawMessage) error {
		if cardNumber.Match(args) {
			return errors.New("a card number in the arguments")
		}
		return nil
	}
	ran := 0
	note := func(context.Context, json.RawMessage) (toolmw.Result, error) {
		ran++
		return toolmw.Text("noted"), nil
	}
	tool := toolmw.MustWrap(toolmw.Spec{Name: "add_note"}, note,
		guardrail.New(guardrail.Args("no_card_numbers", noCards)))

	res, err := tool(context.Background(), json.RawMessage(`{"text":"window seat"}`))
	fmt.Println(res.Content, err)

	_, err = tool(context.Background(), json.RawMessage(`{"text":"card 4556 7375 8689 9855"}`))
	info := taxonomy.InfoOf(err)
	fmt.Println(info.Kind, info.Code, info.Guardrail)
	fmt.Println(info.Message)

	// The check reads the arguments with every string decoded: escapes
	// hide nothing from it.
	_, err = tool(context.Background(), json.RawMessage(`{"text":"card \u0034556\u00207375 8689 9855"}`))
	fmt.Println(taxonomy.InfoOf(err).Code)
	fmt.Println("ran:", ran)
	// Output:
	// noted <nil>
	// guardrail-blocked guardrail_args no_card_numbers
	// the guardrail no_card_numbers blocked the call's arguments; nothing ran
	// guardrail_args
	// ran: 1
}

// ExampleArgStrings: a check over each string of the arguments, decoded;
// a separator JSON must escape (a tab here) reaches it as itself.
func ExampleArgStrings() {
	cardNumber := regexp.MustCompile(`\b\d{4}\s?\d{4}\s?\d{4}\s?\d{4}\b`)
	noCards := func(_ context.Context, _ toolmw.Call, s string) error {
		if cardNumber.MatchString(s) {
			return errors.New("a card number in the arguments")
		}
		return nil
	}
	tool := toolmw.MustWrap(toolmw.Spec{Name: "add_note"}, func(context.Context, json.RawMessage) (toolmw.Result, error) {
		return toolmw.Text("noted"), nil
	}, guardrail.New(guardrail.ArgStrings("no_card_numbers", noCards)))

	for _, args := range []string{
		`{"text":"window seat"}`,
		`{"items":[{"text":"card 4556\t7375\n8689 9855"}]}`,
		`{"\u0034556 7375 8689 9855":true}`,
	} {
		res, err := tool(context.Background(), json.RawMessage(args))
		fmt.Println(res.Content + taxonomy.InfoOf(err).Code) // one or the other
	}
	// Output:
	// noted
	// guardrail_args
	// guardrail_args
}
