package timeout

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/synctest"
	"time"
)

// TestAttemptContextIsADeadlineContext: the attempt's context answers as a
// context.WithDeadline's would, whichever of Err, Done, Cause and derived
// contexts is asked first.
func TestAttemptContextIsADeadlineContext(t *testing.T) {
	cases := []struct {
		name  string
		probe func(t *testing.T, ctx context.Context) // after the deadline passed
	}{
		{"err first", func(t *testing.T, ctx context.Context) {
			if err := ctx.Err(); err != context.DeadlineExceeded {
				t.Errorf("Err = %v", err)
			}
			select {
			case <-ctx.Done():
			default:
				t.Error("Err reports the deadline, Done is open")
			}
		}},
		{"done first", func(t *testing.T, ctx context.Context) {
			<-ctx.Done()
			if err := ctx.Err(); err != context.DeadlineExceeded {
				t.Errorf("Err = %v", err)
			}
		}},
		{"cause", func(t *testing.T, ctx context.Context) {
			if err := context.Cause(ctx); err != context.DeadlineExceeded {
				t.Errorf("Cause = %v", err)
			}
		}},
		{"child", func(t *testing.T, ctx context.Context) {
			child, cancel := context.WithCancel(ctx)
			defer cancel()
			<-child.Done()
			if err := child.Err(); err != context.DeadlineExceeded {
				t.Errorf("child Err = %v", err)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				parent, cancel := context.WithCancel(context.Background())
				defer cancel()
				a := newAttempt(parent, time.Now().Add(time.Second), nil)
				defer a.release()
				if dl, ok := a.Deadline(); !ok || !dl.Equal(time.Now().Add(time.Second)) {
					t.Errorf("Deadline = %v, %v", dl, ok)
				}
				if err := a.Err(); err != nil {
					t.Fatalf("Err before the deadline = %v", err)
				}
				if err := context.Cause(a); err != nil {
					t.Fatalf("Cause before the deadline = %v", err)
				}
				time.Sleep(time.Second)
				c.probe(t, a)
			})
		})
	}
}

// TestAttemptContextFollowsItsParent: a cancelled parent cancels the
// attempt, with the parent's cause, whether or not Done was asked before.
func TestAttemptContextFollowsItsParent(t *testing.T) {
	cause := errors.New("the loop stopped")
	for _, watched := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			parent, cancel := context.WithCancelCause(context.Background())
			a := newAttempt(parent, time.Now().Add(time.Hour), nil)
			defer a.release()
			var done <-chan struct{}
			if watched {
				done = a.Done()
			}
			child, stop := context.WithCancel(a)
			defer stop()
			cancel(cause)
			synctest.Wait()
			if !watched {
				done = a.Done()
			}
			select {
			case <-done:
			default:
				t.Fatalf("watched=%v: parent cancelled, Done open", watched)
			}
			if err := a.Err(); err != context.Canceled {
				t.Errorf("watched=%v: Err = %v", watched, err)
			}
			if err := context.Cause(a); err != cause {
				t.Errorf("watched=%v: Cause = %v, want the parent's", watched, err)
			}
			<-child.Done()
		})
	}
}

// TestAttemptContextEndsWithTheAttempt: after release the context is
// cancelled, funcs registered with AfterFunc run once, a stopped one not.
func TestAttemptContextEndsWithTheAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := newAttempt(context.Background(), time.Now().Add(time.Hour), nil)
		ran := make(chan string, 3)
		context.AfterFunc(a, func() { ran <- "kept" })
		stop := context.AfterFunc(a, func() { ran <- "stopped" })
		if !stop() {
			t.Error("stop before the end returned false")
		}
		a.release()
		synctest.Wait()
		if err := a.Err(); err != context.Canceled {
			t.Errorf("Err after release = %v", err)
		}
		<-a.Done()
		close(ran)
		var got []string
		for s := range ran {
			got = append(got, s)
		}
		if len(got) != 1 || got[0] != "kept" {
			t.Errorf("ran %v, want [kept]", got)
		}
		late := make(chan struct{})
		context.AfterFunc(a, func() { close(late) })
		<-late // registered after the end: runs at once
	})
}

// TestAttemptContextWithRealHTTP: a real http.Client request under the
// attempt's context ends at the deadline with DeadlineExceeded.
func TestAttemptContextWithRealHTTP(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	a := newAttempt(context.Background(), time.Now().Add(50*time.Millisecond), nil)
	defer a.release()
	req, _ := http.NewRequestWithContext(a, http.MethodGet, srv.URL, nil)
	resp, err := srv.Client().Do(req)
	if err == nil {
		resp.Body.Close()
		t.Fatal("a hanging server answered")
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want DeadlineExceeded", err)
	}
}
