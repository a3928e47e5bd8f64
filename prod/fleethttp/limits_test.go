package fleethttp_test

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/fleetsim/fleetsim/prod/fleethttp"
)

// limitedAPI serves srv over TLS on 127.0.0.1 with limits l, as `fleet hub` does, and
// returns its address and the TLS configuration of its clients.
type limitedAPI struct {
	addr string
	tls  *tls.Config // for clients
}

func serveLimited(t *testing.T, srv *fleethttp.Server, l fleethttp.Limits) *limitedAPI {
	t.Helper()
	ca := newCA(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := srv.HTTPServer(l)
	hs.TLSConfig = &tls.Config{Certificates: []tls.Certificate{ca.issue(t, "fleet-api", nil, net.ParseIP("127.0.0.1"))}}
	hs.ErrorLog = log.New(io.Discard, "", 0) // refused handshakes are expected here
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = hs.ServeTLS(fleethttp.Listener(ln, l), "", "")
	}()
	t.Cleanup(func() {
		_ = hs.Close()
		<-done
	})
	return &limitedAPI{addr: ln.Addr().String(), tls: &tls.Config{RootCAs: ca.pool, ServerName: "127.0.0.1", NextProtos: []string{"http/1.1"}}}
}

// dial opens a TCP connection from the loopback address from (127.0.0.x).
func (a *limitedAPI) dial(t *testing.T, from string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", a.addr)
	if err != nil {
		t.Fatalf("dial from %s: %v", from, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// dialTLS opens a connection from from and completes the TLS handshake within wait.
func (a *limitedAPI) dialTLS(t *testing.T, from string, wait time.Duration) (*tls.Conn, error) {
	t.Helper()
	tc := tls.Client(a.dial(t, from), a.tls)
	_ = tc.SetDeadline(time.Now().Add(wait))
	if err := tc.Handshake(); err != nil {
		return nil, err
	}
	_ = tc.SetDeadline(time.Time{})
	return tc, nil
}

// closedWithin waits for the server to close c (EOF, or a reset), reading from r, and
// returns how long that took, or an error if c is still open after most.
func closedWithin(c net.Conn, r io.Reader, most time.Duration) (time.Duration, error) {
	start := time.Now()
	_ = c.SetReadDeadline(start.Add(most))
	_, err := io.Copy(io.Discard, r)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return 0, fmt.Errorf("connection still open after %s", most)
	}
	return time.Since(start), nil
}

// TestConnectionTimeouts: idle connections, whether their request was refused (401) or
// served, slow headers, slow bodies (anonymous or not) and connections that never start
// TLS are all closed within the configured bounds (short here; `fleet hub` defaults to
// fleethttp.DefaultLimits).
func TestConnectionTimeouts(t *testing.T) {
	l := fleethttp.Limits{ReadHeaderTimeout: 300 * time.Millisecond, ReadTimeout: 600 * time.Millisecond,
		WriteTimeout: 5 * time.Second, IdleTimeout: 400 * time.Millisecond, MaxConns: 100, MaxConnsPerClient: 100}
	const slack = 2 * time.Second                                  // a loaded machine may be slow to close; never early
	authed := serveLimited(t, &fleethttp.Server{}, l)              // no credentials: 401
	anon := serveLimited(t, &fleethttp.Server{Anonymous: true}, l) // as an authenticated caller

	request := func(t *testing.T, api *limitedAPI, req string) (*tls.Conn, *bufio.Reader) {
		c, err := api.dialTLS(t, "127.0.0.1", 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(c, req); err != nil {
			t.Fatal(err)
		}
		return c, bufio.NewReader(c)
	}
	status := func(t *testing.T, c net.Conn, br *bufio.Reader) int {
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("reading the response: %v", err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		return resp.StatusCode
	}

	t.Run("idle after a request", func(t *testing.T) {
		var wg sync.WaitGroup
		for i, tc := range []struct {
			api  *limitedAPI
			path string
			want int
		}{
			{authed, "/fleet/v1/units", http.StatusUnauthorized},
			{authed, "/fleet/v1/units", http.StatusUnauthorized},
			{anon, "/fleet/v1/discovery", http.StatusOK},
		} {
			c, br := request(t, tc.api, "GET "+tc.path+" HTTP/1.1\r\nHost: fleet\r\n\r\n")
			if got := status(t, c, br); got != tc.want {
				t.Fatalf("connection %d: status %d, want %d", i, got, tc.want)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				d, err := closedWithin(c, br, l.IdleTimeout+slack)
				switch {
				case err != nil:
					t.Errorf("connection %d: %v", i, err)
				case d < l.IdleTimeout-50*time.Millisecond:
					t.Errorf("connection %d: closed after %s idle, before the idle timeout %s", i, d, l.IdleTimeout)
				}
			}()
		}
		wg.Wait()
	})

	t.Run("idle HTTP/2", func(t *testing.T) {
		cfg := authed.tls.Clone()
		cfg.NextProtos = []string{"h2"}
		c := tls.Client(authed.dial(t, "127.0.0.1"), cfg)
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		if err := c.Handshake(); err != nil || c.ConnectionState().NegotiatedProtocol != "h2" {
			t.Fatalf("handshake: %v, protocol %q", err, c.ConnectionState().NegotiatedProtocol)
		}
		// The client preface and an empty SETTINGS frame, then nothing: after the idle
		// timeout the server sends GOAWAY and closes a second later.
		if _, err := io.WriteString(c, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00"); err != nil {
			t.Fatal(err)
		}
		if _, err := closedWithin(c, c, l.IdleTimeout+slack); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("slow body", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			api  *limitedAPI
			want int
		}{
			{"authenticated: the handler reads the body until the read timeout", anon, http.StatusRequestTimeout},
			{"no credentials: 401 once the body is drained, or at the read timeout", authed, http.StatusUnauthorized},
		} {
			t.Run(tc.name, func(t *testing.T) {
				start := time.Now()
				c, br := request(t, tc.api, "PUT /fleet/v1/units/slow.service HTTP/1.1\r\nHost: fleet\r\n"+
					"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
				stop := make(chan struct{})
				defer close(stop)
				go func() { // a byte every 50ms, for ever
					for {
						select {
						case <-stop:
							return
						case <-time.After(50 * time.Millisecond):
							if _, err := c.Write([]byte(" ")); err != nil {
								return
							}
						}
					}
				}()
				if got := status(t, c, br); got != tc.want {
					t.Fatalf("status %d, want %d", got, tc.want)
				}
				if _, err := closedWithin(c, br, l.ReadTimeout+slack); err != nil {
					t.Fatal(err)
				}
				if d := time.Since(start); d > l.ReadTimeout+slack {
					t.Errorf("a slow body held the connection for %s, read timeout %s", d, l.ReadTimeout)
				}
			})
		}
	})

	t.Run("slow headers", func(t *testing.T) {
		c, br := request(t, authed, "GET /fleet/v1/units HTTP/1.1\r\nHost: fl")
		d, err := closedWithin(c, br, l.ReadHeaderTimeout+slack)
		switch {
		case err != nil:
			t.Fatal(err)
		case d < l.ReadHeaderTimeout-100*time.Millisecond:
			t.Errorf("closed after %s, before the header timeout %s", d, l.ReadHeaderTimeout)
		}
	})

	t.Run("no TLS handshake", func(t *testing.T) {
		c := authed.dial(t, "127.0.0.1")
		if _, err := closedWithin(c, c, l.ReadHeaderTimeout+slack); err != nil {
			t.Fatal(err)
		}
	})
}

// TestConnectionCaps: one client (one loopback address) holds at most MaxConnsPerClient
// connections, further ones closed at once, while another client still connects; the
// server holds at most MaxConns, further ones waiting until one closes.
func TestConnectionCaps(t *testing.T) {
	l := fleethttp.Limits{ReadHeaderTimeout: time.Minute, ReadTimeout: time.Minute, WriteTimeout: time.Minute,
		IdleTimeout: time.Minute, MaxConns: 5, MaxConnsPerClient: 3}
	api := serveLimited(t, &fleethttp.Server{}, l)
	// held reports whether the server keeps c: a closed connection ends within a moment.
	held := func(c *tls.Conn) bool {
		_ = c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		_, err := c.Read(make([]byte, 1))
		var ne net.Error
		return errors.As(err, &ne) && ne.Timeout()
	}
	open := func(from string) (*tls.Conn, error) {
		c, err := api.dialTLS(t, from, 2*time.Second)
		if err == nil && !held(c) {
			return nil, fmt.Errorf("closed by the server")
		}
		return c, err
	}

	var first []*tls.Conn
	for i := range l.MaxConnsPerClient {
		c, err := open("127.0.0.1")
		if err != nil {
			t.Fatalf("connection %d of 127.0.0.1: %v", i+1, err)
		}
		first = append(first, c)
	}
	for range 3 {
		if _, err := open("127.0.0.1"); err == nil {
			t.Fatalf("a connection over the per-client limit %d was kept", l.MaxConnsPerClient)
		}
	}
	second, err := open("127.0.0.2")
	if err != nil {
		t.Fatalf("another client is refused: %v", err)
	}
	// Closing one frees its slot (the server notices the close within a moment).
	_ = first[0].Close()
	var again *tls.Conn
	for deadline := time.Now().Add(5 * time.Second); ; {
		if again, err = open("127.0.0.1"); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no new connection after one was closed: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}

	// Five held in all (three of 127.0.0.1, two of 127.0.0.2): a sixth, from a third client,
	// waits in the listen queue (no handshake) until one closes.
	if _, err := open("127.0.0.2"); err != nil {
		t.Fatal(err)
	}
	c := tls.Client(api.dial(t, "127.0.0.3"), api.tls)
	_ = c.SetDeadline(time.Now().Add(300 * time.Millisecond))
	if err := c.Handshake(); err == nil {
		t.Fatalf("a connection over MaxConns %d completed its handshake", l.MaxConns)
	}
	_ = second.Close()
	_ = again.Close()
	if _, err := api.dialTLS(t, "127.0.0.3", 5*time.Second); err != nil {
		t.Fatalf("no connection after others closed: %v", err)
	}
}
