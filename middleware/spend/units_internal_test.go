package spend

import (
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"
	"testing"
)

// TestUnitsExact: for amounts spread over every scale the layer takes, a
// cost in units is the smallest whole number of billionths at or above the
// amount's shortest decimal form, and a limit the largest at or below it,
// computed exactly with big.Rat; neither allocates.
func TestUnitsExact(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	amounts := []float64{0, 5e-324, 1e-10, 4e-10, 1e-9, 1.5e-9, 0.1, 0.3, 1.1, 123456.789, 1.0000000004, MaxAmount,
		math.Nextafter(1e-9, 0), math.Nextafter(1e-9, 1), math.Nextafter(MaxAmount, 0)}
	for range 20000 {
		amounts = append(amounts, math.Pow(10, r.Float64()*20-11)) // 1e-11 to 1e9
	}
	billion := big.NewRat(1_000_000_000, 1)
	for _, a := range amounts {
		if a > MaxAmount {
			continue
		}
		exact, ok := new(big.Rat).SetString(strconv.FormatFloat(a, 'f', -1, 64))
		if !ok {
			t.Fatal(a)
		}
		exact.Mul(exact, billion)
		up, _ := units(a)
		down, _ := limitUnits(a)
		upR, downR := new(big.Rat).SetInt64(up), new(big.Rat).SetInt64(down)
		if upR.Cmp(exact) < 0 || new(big.Rat).Sub(upR, big.NewRat(1, 1)).Cmp(exact) >= 0 {
			t.Fatalf("units(%v) = %d, exact %s", a, up, exact.FloatString(3))
		}
		if downR.Cmp(exact) > 0 || new(big.Rat).Add(downR, big.NewRat(1, 1)).Cmp(exact) <= 0 {
			t.Fatalf("limitUnits(%v) = %d, exact %s", a, down, exact.FloatString(3))
		}
	}
	for _, bad := range []float64{-1e-12, math.NaN(), math.Inf(1), math.Inf(-1), math.Nextafter(MaxAmount, 2*MaxAmount)} {
		if _, ok := units(bad); ok {
			t.Errorf("units(%v) took it", bad)
		}
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = units(123456.789123) }); n != 0 {
		t.Errorf("units allocates %v times", n)
	}
}
