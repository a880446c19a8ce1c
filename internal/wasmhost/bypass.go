package wasmhost

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// hopHeaders are the connection-specific headers a proxy does not forward
// (RFC 9110 section 7.6.1).
var hopHeaders = []string{"Connection", "Keep-Alive", "Proxy-Connection", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

// bypass forwards a request on a Route with Bypass set, without the
// plugin: the path Envoy takes on a route that disables the Wasm filter.
// The response streams through, flushed chunk by chunk; an unreachable
// upstream gets the same reply as on a guarded route.
func (p *Proxy) bypass(w http.ResponseWriter, r *http.Request, route Route, start time.Time) {
	rec := StreamRecord{Method: r.Method, Path: r.URL.RequestURI(), Route: route.RouteName, VM: -1, Header: r.Header}
	defer func() {
		rec.Duration = time.Since(start)
		p.logRecord(rec)
		if p.opts.OnDone != nil {
			p.opts.OnDone(rec)
		}
	}()
	u := &url.URL{Scheme: p.upstream.Scheme, Host: p.upstream.Host, Path: r.URL.Path, RawPath: r.URL.RawPath, RawQuery: r.URL.RawQuery}
	body := r.Body
	if r.ContentLength == 0 {
		body = http.NoBody
	}
	ctx := r.Context()
	if route.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, route.Timeout)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(ctx, r.Method, u.String(), body)
	if err != nil {
		rec.Status, rec.End, rec.Err = http.StatusBadRequest, EndComplete, err
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req.Header = r.Header.Clone()
	for _, h := range hopHeaders {
		req.Header.Del(h)
	}
	req.Host = r.Host
	req.ContentLength = r.ContentLength
	resp, err := p.transport.RoundTrip(req)
	if err != nil {
		if r.Context().Err() != nil {
			rec.End = EndDownstreamDisconnect
			return
		}
		f := upstreamFailure(err)
		if ctx.Err() != nil { // the route's timeout
			f = UpstreamFailure{Status: http.StatusGatewayTimeout, Body: "upstream request timeout",
				Details: "upstream_response_timeout", Flag: FlagUpstreamRequestTimeout}
		}
		p.log.Warn(f.LogMessage(), "upstream", p.upstream.Host, "method", r.Method, "path", r.URL.Path, "err", err, "reply", f.Body)
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("Content-Length", strconv.Itoa(len(f.Body)))
		w.WriteHeader(f.Status)
		n, _ := io.WriteString(w, f.Body)
		rec.Status, rec.Bytes, rec.End, rec.Flags, rec.Local, rec.UpstreamErr = f.Status, int64(n), EndUpstreamFailure, f.Flag, true, err
		return
	}
	defer resp.Body.Close()
	for _, h := range hopHeaders {
		resp.Header.Del(h)
	}
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	rec.Status = resp.StatusCode
	rc := http.NewResponseController(w)
	_ = rc.Flush()
	bp := p.bufs.Get().(*[]byte)
	defer p.bufs.Put(bp)
	for {
		n, rerr := resp.Body.Read(*bp)
		if n > 0 {
			wn, werr := w.Write((*bp)[:n])
			rec.Bytes += int64(wn)
			if werr == nil {
				werr = rc.Flush()
			}
			if werr != nil {
				rec.End = EndDownstreamDisconnect
				return
			}
		}
		if errors.Is(rerr, io.EOF) {
			rec.End = EndComplete
			return
		}
		if rerr != nil {
			if r.Context().Err() != nil {
				rec.End = EndDownstreamDisconnect
				return
			}
			rec.End, rec.Flags = EndUpstreamFailure, FlagUpstreamRemoteReset
			if ctx.Err() != nil {
				rec.Flags = FlagUpstreamRequestTimeout
				p.log.Warn("upstream request timeout", "upstream", p.upstream.Host, "method", r.Method, "path", r.URL.Path)
			}
			panic(http.ErrAbortHandler) // reset the client, as Envoy does
		}
	}
}
