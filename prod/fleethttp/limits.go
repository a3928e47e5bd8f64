package fleethttp

// Connection limits: how long a connection may idle or dawdle over a request, and how many
// connections the API holds in all and per client, so that clients that open connections
// and then idle, or send a body a byte at a time, cannot exhaust the hub's file descriptors
// (issue 31). Separate from the handlers: this is the transport around them.

import (
	"net"
	"net/http"
	"sync"
	"time"

	"golang.org/x/net/netutil"
)

// Limits bound the connections of the API server. The zero value of a field means its
// default (DefaultLimits).
type Limits struct {
	// ReadHeaderTimeout bounds the TLS handshake and reading a request's headers.
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds reading a whole request, body included; a body still arriving
	// then is answered 408 and the connection closed.
	ReadTimeout time.Duration
	// WriteTimeout bounds a request from the end of its headers to the end of its response,
	// so it must exceed the slowest handler (a few API server calls).
	WriteTimeout time.Duration
	// IdleTimeout closes a kept-alive connection that sends no new request for this long.
	IdleTimeout time.Duration
	// MaxConns is how many connections the API holds at once; further ones wait in the
	// listen queue until one closes.
	MaxConns int
	// MaxConnsPerClient is how many connections one client (one IPv4 address, or one IPv6
	// /64) may hold at once; a further one is closed as soon as it is accepted.
	MaxConnsPerClient int
}

// DefaultLimits are the limits of `fleet hub` unless its flags say otherwise.
var DefaultLimits = Limits{
	ReadHeaderTimeout: 10 * time.Second,
	ReadTimeout:       30 * time.Second,
	WriteTimeout:      time.Minute,
	IdleTimeout:       30 * time.Second,
	MaxConns:          512,
	MaxConnsPerClient: 32,
}

// orDefault fills the zero fields of l from DefaultLimits.
func (l Limits) orDefault() Limits {
	d := DefaultLimits
	for _, f := range []struct{ v, def *time.Duration }{
		{&l.ReadHeaderTimeout, &d.ReadHeaderTimeout}, {&l.ReadTimeout, &d.ReadTimeout},
		{&l.WriteTimeout, &d.WriteTimeout}, {&l.IdleTimeout, &d.IdleTimeout},
	} {
		if *f.v == 0 {
			*f.v = *f.def
		}
	}
	if l.MaxConns == 0 {
		l.MaxConns = d.MaxConns
	}
	if l.MaxConnsPerClient == 0 {
		l.MaxConnsPerClient = d.MaxConnsPerClient
	}
	return l
}

// HTTPServer returns an http.Server for the API's handler with l's timeouts. Serve it on
// Listener(ln, l).
func (s *Server) HTTPServer(l Limits) *http.Server {
	l = l.orDefault()
	return &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: l.ReadHeaderTimeout,
		ReadTimeout:       l.ReadTimeout,
		WriteTimeout:      l.WriteTimeout,
		IdleTimeout:       l.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
	}
}

// Listener wraps ln so that it holds at most l.MaxConns connections in all and
// l.MaxConnsPerClient per client.
func Listener(ln net.Listener, l Limits) net.Listener {
	l = l.orDefault()
	return netutil.LimitListener(&perClient{Listener: ln, max: l.MaxConnsPerClient, open: map[string]int{}}, l.MaxConns)
}

// perClient closes a connection at once when its client already holds max others.
type perClient struct {
	net.Listener
	max  int
	mu   sync.Mutex
	open map[string]int // client → connections open
}

func (p *perClient) Accept() (net.Conn, error) {
	for {
		c, err := p.Listener.Accept()
		if err != nil {
			return nil, err
		}
		key := clientKey(c.RemoteAddr())
		p.mu.Lock()
		if p.open[key] >= p.max {
			p.mu.Unlock()
			_ = c.Close()
			continue
		}
		p.open[key]++
		p.mu.Unlock()
		return &countedConn{Conn: c, release: func() {
			p.mu.Lock()
			defer p.mu.Unlock()
			if p.open[key]--; p.open[key] <= 0 {
				delete(p.open, key)
			}
		}}, nil
	}
}

// clientKey is the client a remote address belongs to: its IPv4 address, or the /64 of
// its IPv6 address (one host commonly holds a whole /64).
func clientKey(a net.Addr) string {
	tcp, ok := a.(*net.TCPAddr)
	if !ok {
		return a.String()
	}
	if v4 := tcp.IP.To4(); v4 != nil {
		return v4.String()
	}
	return tcp.IP.Mask(net.CIDRMask(64, 128)).String() + "/64"
}

// countedConn gives its client's slot back when closed (once, however often it is closed).
type countedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *countedConn) Close() error {
	c.once.Do(c.release)
	return c.Conn.Close()
}
