// The sandbox bridge, as a small static program: the same bridge as activities/sandbox-bridge.ts
// (read that file's comment for what it does and why), without a Node process per sandboxed call.
// It runs inside the sandbox, in its network namespace (loopback only), in front of the sandboxed
// command: it listens on 127.0.0.1:<proxy-port> and passes every connection to the proxy's unix
// socket as is, and on each of the given loopback ports (127.0.0.1 and ::1), whose connections it
// tunnels through the proxy with CONNECT 127.0.0.1:<port>; a tunnel the proxy refuses is closed.
// The bridge has no policy of its own. Then it runs the command, passes SIGTERM, SIGINT and SIGHUP
// on, and exits as it exits (by the same signal when the command was killed by one).
//
// Usage: sandbox-bridge <socket> <proxy-port> <port,port,...> -- <file> [args...]
//
//	sandbox-bridge --version   prints "vigil-sandbox-bridge <protocol>" (activities/sandbox.ts checks it)
//
// Go's standard library only; built by scripts/build-sandbox-bridge.sh into .tools/.
package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// protocol is the command line and behaviour this program implements; activities/sandbox.ts uses
// the binary only when it answers --version with the protocol it expects (BRIDGE_PROTOCOL).
const protocol = "1"

var okStatus = regexp.MustCompile(`^HTTP/1\.[01] 200`)

func main() {
	if len(os.Args) == 2 && os.Args[1] == "--version" {
		fmt.Printf("vigil-sandbox-bridge %s\n", protocol)
		return
	}
	a := os.Args[1:]
	if len(a) < 5 || a[0] == "" || a[1] == "" || a[3] != "--" || a[4] == "" {
		fmt.Fprintln(os.Stderr, "usage: sandbox-bridge <socket> <proxy-port> <port,port,...> -- <file> [args...]")
		os.Exit(64)
	}
	socket, file, args := a[0], a[4], a[5:]
	proxyPort, _ := strconv.Atoi(a[1])
	var ports []int
	for _, p := range strings.Split(a[2], ",") {
		if n, err := strconv.Atoi(strings.TrimSpace(p)); err == nil && n > 0 && n < 65536 {
			ports = append(ports, n)
		}
	}

	if l, err := net.Listen("tcp4", net.JoinHostPort("127.0.0.1", strconv.Itoa(proxyPort))); err != nil {
		fmt.Fprintf(os.Stderr, "vigil sandbox: cannot listen on 127.0.0.1:%d; the command has no network\n", proxyPort)
	} else {
		go serve(l, func(c net.Conn) { passThrough(socket, c) })
	}
	for _, port := range ports {
		port := port
		for _, host := range []string{"127.0.0.1", "::1"} { // ::1 where the namespace has IPv6
			if l, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port))); err == nil {
				go serve(l, func(c net.Conn) { tunnel(socket, c, port) })
			}
		}
	}
	os.Exit(run(file, args))
}

func serve(l net.Listener, handle func(net.Conn)) {
	for {
		c, err := l.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			if errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(10 * time.Millisecond) // out of descriptors, say: try again shortly
			continue
		}
		go handle(c)
	}
}

// toProxy connects to the proxy; the supervisor starts it as the sandbox starts, so a first
// attempt may come early (60 more tries, 50 ms apart, while the socket is missing or refuses).
func toProxy(socket string) net.Conn {
	for tries := 60; ; tries-- {
		c, err := net.Dial("unix", socket)
		if err == nil {
			return c
		}
		if tries == 0 || !(errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ECONNREFUSED)) {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// pipeBoth copies both ways; when either side ends or fails, both are closed.
func pipeBoth(a, b net.Conn, aPending []byte) {
	var once sync.Once
	closeBoth := func() { once.Do(func() { a.Close(); b.Close() }) }
	go func() {
		io.Copy(a, b)
		closeBoth()
	}()
	if len(aPending) > 0 {
		if _, err := a.Write(aPending); err != nil {
			closeBoth()
			return
		}
	}
	io.Copy(b, a)
	closeBoth()
}

// passThrough: a connection to the proxy port, passed to the proxy unchanged.
func passThrough(socket string, client net.Conn) {
	up := toProxy(socket)
	if up == nil {
		client.Close()
		return
	}
	pipeBoth(client, up, nil)
}

// tunnel: a connection to a loopback port, tunnelled as CONNECT 127.0.0.1:<port>; refused, it is closed.
func tunnel(socket string, client net.Conn, port int) {
	up := toProxy(socket)
	if up == nil {
		client.Close()
		return
	}
	target := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	if _, err := fmt.Fprintf(up, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target); err != nil {
		up.Close()
		client.Close()
		return
	}
	var got []byte
	buf := make([]byte, 4096)
	for {
		n, err := up.Read(buf)
		got = append(got, buf[:n]...)
		if end := bytes.Index(got, []byte("\r\n\r\n")); end >= 0 {
			if !okStatus.Match(got[:end]) {
				break
			}
			pipeBoth(client, up, got[end+4:])
			return
		}
		if err != nil || len(got) > 8192 {
			break
		}
	}
	up.Close()
	client.Close()
}

// run starts the command with the bridge's own stdio and environment, passes signals on and
// answers the exit status the bridge should exit with (-1: it re-raised the command's signal).
func run(file string, args []string) int {
	cmd := exec.Command(file, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	if err := cmd.Start(); err != nil {
		switch {
		case errors.Is(err, exec.ErrNotFound), errors.Is(err, os.ErrNotExist):
			fmt.Fprintf(os.Stderr, "%s: command not found\n", file)
			return 127
		case errors.Is(err, os.ErrPermission):
			fmt.Fprintf(os.Stderr, "%s: permission denied\n", file)
			return 126
		default:
			fmt.Fprintf(os.Stderr, "%s: %s\n", file, strings.TrimPrefix(err.Error(), "exec: "))
			return 126
		}
	}
	go func() {
		for s := range sigs {
			_ = cmd.Process.Signal(s)
		}
	}()
	err := cmd.Wait()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		fmt.Fprintf(os.Stderr, "%s: %s\n", file, err)
		return 1
	}
	ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if ws.Signaled() {
		sig := ws.Signal()
		signal.Reset(sig)
		_ = syscall.Kill(os.Getpid(), sig)
		time.Sleep(time.Second) // the default action ends the bridge
		return 128 + int(sig)
	}
	return cmd.ProcessState.ExitCode()
}
