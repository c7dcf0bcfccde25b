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
	fmt.Println("ran:", ran)
	// Output:
	// noted <nil>
	// guardrail-blocked guardrail_args no_card_numbers
	// the guardrail no_card_numbers blocked the call's arguments; nothing ran
	// ran: 1
}
