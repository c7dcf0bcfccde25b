package tracing

import (
	"strings"
	"testing"

	"github.com/toolmw/toolmw/state"
)

// TestEveryStateInstrumentNamed: each instrument of package state has an
// OpenTelemetry name with the toolmw. prefix, a unit and a description,
// and no two share a name.
func TestEveryStateInstrumentNamed(t *testing.T) {
	seen := map[string]bool{}
	for _, i := range state.Instruments() {
		d, ok := stateInstruments[i]
		switch {
		case !ok:
			t.Errorf("state instrument %d has no name", i)
		case !strings.HasPrefix(d.name, "toolmw.") || d.unit == "" || d.desc == "" || d.nameKey == "":
			t.Errorf("%+v: want a toolmw. name, a unit, a description and a name attribute", d)
		case seen[d.name]:
			t.Errorf("%s named twice", d.name)
		}
		seen[d.name] = true
	}
	if len(stateInstruments) != len(state.Instruments()) {
		t.Errorf("%d names for %d instruments", len(stateInstruments), len(state.Instruments()))
	}
}
