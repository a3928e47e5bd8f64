package fleethttp

import (
	"net"
	"testing"
)

func TestClientKey(t *testing.T) {
	for _, tc := range []struct {
		addr net.Addr
		want string
	}{
		{&net.TCPAddr{IP: net.ParseIP("192.0.2.7"), Port: 1}, "192.0.2.7"},
		{&net.TCPAddr{IP: net.ParseIP("::ffff:192.0.2.7"), Port: 2}, "192.0.2.7"},
		// one IPv6 host commonly holds a whole /64: its addresses are one client
		{&net.TCPAddr{IP: net.ParseIP("2001:db8:1:2:aaaa::1"), Port: 3}, "2001:db8:1:2::/64"},
		{&net.TCPAddr{IP: net.ParseIP("2001:db8:1:2:bbbb::9"), Port: 4}, "2001:db8:1:2::/64"},
		{&net.TCPAddr{IP: net.ParseIP("2001:db8:1:3::1"), Port: 5}, "2001:db8:1:3::/64"},
		{&net.UnixAddr{Name: "/run/x.sock", Net: "unix"}, "/run/x.sock"},
	} {
		if got := clientKey(tc.addr); got != tc.want {
			t.Errorf("clientKey(%v) = %q, want %q", tc.addr, got, tc.want)
		}
	}
}
