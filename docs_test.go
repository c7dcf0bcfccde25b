package toolmw_test

import (
	"os"
	"strings"
	"testing"

	"github.com/toolmw/toolmw/taxonomy"
)

// TestDocsListEveryKindAndCode keeps docs/errors.md in step with the
// taxonomy's catalogue.
func TestDocsListEveryKindAndCode(t *testing.T) {
	doc, err := os.ReadFile("docs/errors.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range taxonomy.Kinds() {
		if !strings.Contains(string(doc), "| `"+string(k.Kind)+"` |") {
			t.Errorf("docs/errors.md does not list kind %s", k.Kind)
		}
	}
	for _, c := range taxonomy.Codes() {
		if !strings.Contains(string(doc), "| `"+c.Code+"` |") {
			t.Errorf("docs/errors.md does not list code %s", c.Code)
		}
	}
}
