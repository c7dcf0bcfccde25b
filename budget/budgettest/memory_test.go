package budgettest_test

import (
	"testing"

	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/budget/budgettest"
)

func TestMemTokenStore(t *testing.T) {
	budgettest.TestTokenStore(t, func(*testing.T) budget.TokenStore { return &budgettest.MemTokenStore{} })
}

func TestMemRunStore(t *testing.T) {
	budgettest.TestRunStore(t, func(*testing.T) budget.RunStore { return &budgettest.MemRunStore{} })
}
