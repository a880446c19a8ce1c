package logbuf

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

func TestBufferConcurrentWritesAndWait(t *testing.T) {
	var l Buffer
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fmt.Fprintf(&l, "line %d\n", i)
		}()
	}
	go func() {
		time.Sleep(20 * time.Millisecond)
		fmt.Fprintln(&l, "late")
	}()
	if !l.WaitFor("late", 2*time.Second) {
		t.Fatal("WaitFor missed a line written later")
	}
	wg.Wait()
	if n := len(l.Lines("line ")); n != 8 {
		t.Fatalf("%d lines of 8 concurrent writes", n)
	}
	if l.WaitFor("never", 30*time.Millisecond) {
		t.Fatal("WaitFor found what was never written")
	}
}

func TestWaitForLines(t *testing.T) {
	var l Buffer
	fmt.Fprintln(&l, "status=200 a")
	go func() {
		time.Sleep(20 * time.Millisecond)
		fmt.Fprintln(&l, "status=200 b")
	}()
	if !l.WaitForLines("status=200", 2, 2*time.Second) {
		t.Fatal("WaitForLines missed a line written later")
	}
	if l.WaitForLines("status=200", 3, 30*time.Millisecond) {
		t.Fatal("WaitForLines counted a line never written")
	}
}
