package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/fleetsim/fleetsim/prod/fleethttp"
)

// apiClient calls the fleet API v1.
type apiClient struct {
	base  string
	hc    *http.Client
	token string
}

// apiError is an error the API answered with.
type apiError struct {
	Code    int
	Message string
}

func (e *apiError) Error() string { return fmt.Sprintf("%s (%d)", e.Message, e.Code) }

func isNotFound(err error) bool {
	e, ok := err.(*apiError)
	return ok && e.Code == http.StatusNotFound
}

func newAPIClient(g *globals) (*apiClient, error) {
	u, err := url.Parse(g.endpoint)
	if err != nil {
		return nil, fmt.Errorf("--endpoint %q: %w", g.endpoint, err)
	}
	timeout := time.Duration(g.requestTimeout * float64(time.Second))
	tr := &http.Transport{}
	c := &apiClient{hc: &http.Client{Transport: tr, Timeout: timeout}, token: g.token}
	g.clients = append(g.clients, c)
	switch u.Scheme {
	case "unix":
		path := u.Path
		tr.DialContext = func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", path)
		}
		c.base = "http://fleet"
	case "http", "https":
		c.base = strings.TrimSuffix(u.String(), "/")
	default:
		return nil, fmt.Errorf("--endpoint %q: want unix://, http:// or https://", g.endpoint)
	}
	if u.Scheme == "https" || g.caFile != "" || g.certFile != "" {
		cfg := &tls.Config{MinVersion: tls.VersionTLS12}
		if g.caFile != "" {
			pem, err := os.ReadFile(g.caFile)
			if err != nil {
				return nil, fmt.Errorf("--ca-file: %w", err)
			}
			cfg.RootCAs = x509.NewCertPool()
			if !cfg.RootCAs.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("--ca-file %s: no certificates", g.caFile)
			}
		}
		if g.certFile != "" || g.keyFile != "" {
			cert, err := tls.LoadX509KeyPair(g.certFile, g.keyFile)
			if err != nil {
				return nil, fmt.Errorf("--cert-file/--key-file: %w", err)
			}
			cfg.Certificates = []tls.Certificate{cert}
		}
		tr.TLSClientConfig = cfg
	}
	if !strings.HasSuffix(c.base, "/fleet/v1") {
		c.base += "/fleet/v1"
	}
	return c, nil
}

func (c *apiClient) do(method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.base+path, body)
	if err != nil {
		return err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("fleet API: %w", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("fleet API: %w", err)
	}
	if resp.StatusCode >= 400 {
		var e struct {
			Error fleethttp.Error `json:"error"`
		}
		if json.Unmarshal(b, &e) == nil && e.Error.Message != "" {
			return &apiError{Code: resp.StatusCode, Message: e.Error.Message}
		}
		return &apiError{Code: resp.StatusCode, Message: strings.TrimSpace(string(b))}
	}
	if out != nil && len(bytes.TrimSpace(b)) > 0 && resp.StatusCode != http.StatusNoContent {
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("fleet API: decode %s %s: %w", method, path, err)
		}
	}
	return nil
}

func (c *apiClient) units() ([]*fleethttp.Unit, error) {
	var out []*fleethttp.Unit
	for tok := ""; ; {
		var p fleethttp.UnitPage
		if err := c.do("GET", "/units"+pageQuery(tok), nil, &p); err != nil {
			return nil, err
		}
		out = append(out, p.Units...)
		if tok = p.NextPageToken; tok == "" {
			return out, nil
		}
	}
}

func (c *apiClient) machines() ([]*fleethttp.Machine, error) {
	var out []*fleethttp.Machine
	for tok := ""; ; {
		var p fleethttp.MachinePage
		if err := c.do("GET", "/machines"+pageQuery(tok), nil, &p); err != nil {
			return nil, err
		}
		out = append(out, p.Machines...)
		if tok = p.NextPageToken; tok == "" {
			return out, nil
		}
	}
}

func (c *apiClient) states(unitName string) ([]*fleethttp.UnitState, error) {
	var out []*fleethttp.UnitState
	q := url.Values{}
	if unitName != "" {
		q.Set("unitName", unitName)
	}
	for {
		var p fleethttp.UnitStatePage
		path := "/state"
		if len(q) > 0 {
			path += "?" + q.Encode()
		}
		if err := c.do("GET", path, nil, &p); err != nil {
			return nil, err
		}
		out = append(out, p.States...)
		if p.NextPageToken == "" {
			return out, nil
		}
		q.Set("nextPageToken", p.NextPageToken)
	}
}

func pageQuery(tok string) string {
	if tok == "" {
		return ""
	}
	return "?nextPageToken=" + url.QueryEscape(tok)
}

func (c *apiClient) unit(name string) (*fleethttp.Unit, error) {
	var u fleethttp.Unit
	if err := c.do("GET", "/units/"+url.PathEscape(name), nil, &u); err != nil {
		if isNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	return &u, nil
}

func (c *apiClient) setUnit(u *fleethttp.Unit) error {
	return c.do("PUT", "/units/"+url.PathEscape(u.Name), u, nil)
}

func (c *apiClient) destroy(name string) error {
	return c.do("DELETE", "/units/"+url.PathEscape(name), nil, nil)
}
