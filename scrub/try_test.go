package scrub
import ("testing";"fmt";"strings";"time")
func TestTry(t *testing.T){
 for _, p := range []string{"gldt-", "1.2.3.4.", "gb82 ", "xoxe.xoxp-", "a\\u200b", "token: \""} {
  for _, n := range []int{1<<16, 1<<18, 1<<20} {
   in := strings.Repeat(p, n/len(p)+1)[:n]
   String(in)
   best := time.Hour
   for k := 0; k < 3; k++ { t0 := time.Now(); String(in); best = min(best, time.Since(t0)) }
   fmt.Printf("%-14q %8d %v %.0f ns/B\n", p, n, best, float64(best)/float64(n))
  }
 }
}
