// One client of `zklab client-check --library go`: go-zookeeper's own zk.Lock (Debian
// golang-github-samuel-go-zookeeper-dev), unchanged, taking the lock ROUNDS times and saying
// what it does on stdout in the line protocol of kazoo_lock.py (docs/your-lock.md): each line
// stamped first with CLOCK_MONOTONIC in nanoseconds.
//
//	go_lock HOSTS LOCK_PATH SESSION_TIMEOUT_MS ROUNDS HOLD_MS
//
// HOLD_MS -1 holds for one round trip to the server (an exists of the holder's node). It
// starts once a line comes on stdin (every client is connected). After `done` it waits for a
// line: `reset` closes the session and starts over in a new one; anything else ends it.
package main

import (
	"bufio"
	"fmt"
	"os"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/samuel/go-zookeeper/zk"
)

var out sync.Mutex

// now is CLOCK_MONOTONIC in nanoseconds, the clock zklab and every other client read.
func now() int64 {
	var ts syscall.Timespec
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 1, uintptr(unsafe.Pointer(&ts)), 0)
	return ts.Nano()
}

func say(words ...interface{}) {
	out.Lock()
	defer out.Unlock()
	fmt.Fprintln(os.Stdout, append([]interface{}{now()}, words...)...)
}

// name is an error as one word: "zk: connection closed" is "connection-closed".
func name(err error) string {
	return strings.ReplaceAll(strings.TrimPrefix(err.Error(), "zk: "), " ", "-")
}

type quiet struct{}

func (quiet) Printf(string, ...interface{}) {}

// held reads the lock's own record of its node (zk.Lock keeps it private): the token is its
// sequence number, and a hold is an exists of it.
func held(lock *zk.Lock) (int64, string) {
	v := reflect.ValueOf(lock).Elem()
	return v.FieldByName("seq").Int(), v.FieldByName("lockPath").String()
}

func main() {
	stdin := bufio.NewReader(os.Stdin)
	for life(stdin) == "reset" {
		// a new session, a new lock: the run before is over
	}
}

// life is one session's rounds; it returns the line that came after `done`.
func life(stdin *bufio.Reader) string {
	hosts, path := os.Args[1], os.Args[2]
	timeoutMs, _ := strconv.Atoi(os.Args[3])
	rounds, _ := strconv.Atoi(os.Args[4])
	holdMs, _ := strconv.Atoi(os.Args[5])
	conn, events, err := zk.Connect([]string{hosts}, time.Duration(timeoutMs)*time.Millisecond, zk.WithLogger(quiet{}))
	if err != nil {
		say("error", name(err))
		os.Exit(1)
	}
	connected := make(chan struct{}, 1)
	go func() {
		var seen int64
		for ev := range events {
			if ev.State == zk.StateHasSession {
				if id := conn.SessionID(); id != seen {
					seen = id
					say("session", fmt.Sprintf("%x", id))
				}
				select {
				case connected <- struct{}{}:
				default:
				}
			}
		}
	}()
	<-connected
	stdin.ReadString('\n') // every client is connected: go
	lock := zk.NewLock(conn, path, zk.WorldACL(zk.PermAll))
	hold := func(node string) {
		if holdMs >= 0 {
			time.Sleep(time.Duration(holdMs) * time.Millisecond / 2)
			return
		}
		if _, _, err := conn.Exists(node); err != nil {
			say("error", name(err))
		}
	}
	for r := 0; r < rounds; r++ {
		for {
			say("acquiring")
			if err := lock.Lock(); err != nil {
				// zk.Lock leaves a failed attempt to its caller, who tries again.
				say("error", name(err))
				time.Sleep(50 * time.Millisecond)
				continue
			}
			break
		}
		token, node := held(lock)
		say("acquired", token)
		hold(node)
		say("write", token)
		hold(node)
		say("releasing")
		for {
			err := lock.Unlock()
			if err == zk.ErrNoNode {
				// The node is gone with its session: nothing is held. zk.Lock keeps its
				// node's path after a failed Unlock, so the caller starts a new Lock.
				lock = zk.NewLock(conn, path, zk.WorldACL(zk.PermAll))
				break
			}
			if err != nil {
				say("error", name(err))
				time.Sleep(50 * time.Millisecond)
				continue
			}
			break
		}
		say("released")
	}
	say("done")
	line, _ := stdin.ReadString('\n')
	conn.Close()
	return strings.TrimSpace(line)
}
