package wasmhost

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Route maps a path prefix to the route name the plugin reads as
// xds.route_name.
type Route struct {
	PathPrefix string
	RouteName  string
	// Bypass forwards the route's requests without running the plugin,
	// like an Envoy route on which the Wasm filter is disabled.
	Bypass bool
	// Timeout bounds the whole upstream exchange, like an Envoy route's
	// timeout: 504 "upstream request timeout" before response headers, a
	// reset after, flag UT. 0 disables it.
	Timeout time.Duration
}

// ProxyOptions configure a Proxy.
type ProxyOptions struct {
	// Routes are matched by longest path prefix; a request matching none
	// has no route name.
	Routes []Route
	// Router, when set, picks the route of each request instead of Routes
	// (e.g. Envoy's first-match route table).
	Router func(*http.Request) Route
	// ConnectTimeout bounds connecting to the upstream, like an Envoy
	// cluster's connect_timeout (default 5s, Envoy's default). Unused when
	// Transport is set.
	ConnectTimeout time.Duration
	// StreamIdleTimeout cuts a stream with no activity in either direction
	// for this long, like Envoy's stream_idle_timeout: 408 before the
	// response started, a reset after. 0 disables it.
	StreamIdleTimeout time.Duration
	// VMHeader names a response header, added after the plugin ran, that
	// tells the client which VM handled the request (default "x-guard-vm";
	// "-" disables it).
	VMHeader string
	// Transport reaches the upstream (default: a clone of
	// http.DefaultTransport without transparent compression).
	Transport http.RoundTripper
	// Logger receives one line per request (default: the host's logger).
	Logger *slog.Logger
	// OnDone, when set, is called after each stream ended (after
	// proxy_on_delete) with what happened.
	OnDone func(StreamRecord)
	// Fault, when set, is asked once per request for a fault to inject
	// into its response stream.
	Fault func(*http.Request) Fault
}

// Fault cuts a response stream the way an idle timeout severs it (the
// seed's incident): once the client received CutAfterEvents complete SSE
// events (blank-line terminated), CutAfterBytes body bytes, or, with
// CutAfterResult, the first complete event whose data is a JSON-RPC result
// (a top-level "result" key), the stream is reset with response flag SI and
// details stream_idle_timeout. Zero values inject nothing.
type Fault struct {
	CutAfterEvents int
	CutAfterBytes  int64
	CutAfterResult bool
}

func (f Fault) active() bool { return f.CutAfterEvents > 0 || f.CutAfterBytes > 0 || f.CutAfterResult }

// StreamRecord describes one proxied stream.
type StreamRecord struct {
	Method, Path string
	Route        string
	Status       int
	VM           int
	StreamID     uint32
	Duration     time.Duration
	Bytes        int64 // response body bytes sent to the client
	End          EndReason
	Flags        uint64
	Local        bool // the response was a local reply
	Err          error
	// Header holds the client's request headers (not a copy).
	Header http.Header
	// Reply is the local reply the response was, if Local.
	Reply *LocalReply
	// UpstreamErr is the error that failed the upstream round trip, if any.
	UpstreamErr error
	// Cut is set when a Fault cut the stream. End is then
	// EndStreamIdleTimeout, which is what the plugin saw (flag SI).
	Cut bool
}

// EndName names how the stream ended in a request line: "cut" when a
// Fault cut it (an idle timeout to the plugin, but none to the reader of
// the log), else End's name.
func (r StreamRecord) EndName() string {
	if r.Cut {
		return "cut"
	}
	return r.End.String()
}

// Proxy is an HTTP/1.1 reverse proxy that runs every request through the
// plugin, streaming response bodies chunk by chunk (each chunk is flushed to
// the client as soon as the plugin forwarded it).
type Proxy struct {
	host      *Host
	upstream  *url.URL
	opts      ProxyOptions
	transport http.RoundTripper
	log       *slog.Logger
	bufs      sync.Pool
}

// NewProxy returns a Proxy in front of upstream (scheme and host are used;
// the request path is kept).
func NewProxy(h *Host, upstream *url.URL, opts ProxyOptions) *Proxy {
	if opts.VMHeader == "" {
		opts.VMHeader = "x-guard-vm"
	}
	p := &Proxy{host: h, upstream: upstream, opts: opts, transport: opts.Transport, log: opts.Logger}
	if p.transport == nil {
		p.transport = UpstreamTransport(opts.ConnectTimeout)
	}
	if p.log == nil {
		p.log = h.log
	}
	p.bufs.New = func() any { b := make([]byte, 32<<10); return &b }
	return p
}

func (p *Proxy) route(r *http.Request) Route { return p.opts.RouteFor(r) }

// RouteFor is the route the proxy picks for r: Router's answer when set,
// else the entry of Routes with the longest PathPrefix of r's path.
func (o *ProxyOptions) RouteFor(r *http.Request) Route {
	if o.Router != nil {
		return o.Router(r)
	}
	best, route := -1, Route{}
	for _, rt := range o.Routes {
		if strings.HasPrefix(r.URL.Path, rt.PathPrefix) && len(rt.PathPrefix) > best {
			best, route = len(rt.PathPrefix), rt
		}
	}
	return route
}

// UpstreamTransport is the proxy's default transport to the upstream: no
// transparent compression (the plugin sees the bytes the upstream sent), and
// connectTimeout (default 5s) as Envoy's cluster connect_timeout.
func UpstreamTransport(connectTimeout time.Duration) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DisableCompression = true
	t.MaxIdleConnsPerHost = 64
	if connectTimeout <= 0 {
		connectTimeout = 5 * time.Second
	}
	t.DialContext = (&net.Dialer{Timeout: connectTimeout, KeepAlive: 30 * time.Second}).DialContext
	return t
}

// exchange is the state of one proxied request.
type exchange struct {
	p       *Proxy
	w       http.ResponseWriter
	r       *http.Request
	rc      *http.ResponseController
	s       *Stream
	started bool // response headers sent
	status  int
	bytes   int64
	local   bool
	abort   bool // cut the client connection instead of ending cleanly

	fault  Fault
	cut    bool // the fault cut the stream
	events int  // complete SSE events sent
	prev   byte
	prev2  byte
	result resultScan // Fault.CutAfterResult: the event being sent

	idle     *time.Timer
	idleHit  atomic.Bool
	rtimer   *time.Timer // the route's timeout
	rtHit    atomic.Bool
	cancel   context.CancelFunc
	upstream context.Context
	upErr    error // the upstream round trip's error
}

// ServeHTTP implements http.Handler.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rt := p.route(r)
	if rt.Bypass {
		p.bypass(w, r, rt, start)
		return
	}
	route := rt.RouteName
	info := StreamInfo{RouteName: route, SourceAddress: r.RemoteAddr, UpstreamAddress: p.upstream.Host}
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		info.DestinationAddress = a.String()
	}
	s, err := p.host.NewStream(info)
	if err != nil {
		// No VM could take the stream, or proxy_on_context_create trapped.
		http.Error(w, "wasm plugin failed", http.StatusInternalServerError)
		rec := StreamRecord{Method: r.Method, Path: r.URL.RequestURI(), Route: route, Status: http.StatusInternalServerError,
			VM: -1, Duration: time.Since(start), End: EndHostFailure, Err: err}
		if s != nil {
			rec.VM, rec.StreamID = s.VM(), s.ID()
		}
		p.logRecord(rec)
		if p.opts.OnDone != nil {
			p.opts.OnDone(rec)
		}
		return
	}
	x := &exchange{p: p, w: w, r: r, rc: http.NewResponseController(w), s: s}
	if p.opts.Fault != nil {
		x.fault = p.opts.Fault(r)
	}
	x.upstream, x.cancel = context.WithCancel(r.Context())
	if d := p.opts.StreamIdleTimeout; d > 0 {
		x.idle = time.AfterFunc(d, func() { x.idleHit.Store(true); x.cancel() })
	}
	if rt.Timeout > 0 {
		x.rtimer = time.AfterFunc(rt.Timeout, func() { x.rtHit.Store(true); x.cancel() })
	}
	end, err := x.run()
	if x.idle != nil {
		x.idle.Stop()
	}
	if x.rtimer != nil {
		x.rtimer.Stop()
	}
	x.cancel()
	if ferr := s.Finish(end); err == nil && ferr != nil && !errors.Is(ferr, ErrVMRestarted) {
		err = ferr
	}
	rec := StreamRecord{
		Method: r.Method, Path: r.URL.RequestURI(), Route: route, Status: x.status, VM: s.VM(), StreamID: s.ID(),
		Duration: time.Since(start), Bytes: x.bytes, End: end, Flags: s.Flags(), Local: x.local, Err: err,
		Header: r.Header, UpstreamErr: x.upErr, Cut: x.cut,
	}
	if x.local {
		rec.Reply = s.LocalReply()
	}
	s.Release()
	p.logRecord(rec)
	if p.opts.OnDone != nil {
		p.opts.OnDone(rec)
	}
	if x.abort {
		panic(http.ErrAbortHandler) // reset: no terminating chunk, the connection closes
	}
}

func (p *Proxy) logRecord(rec StreamRecord) {
	attrs := []any{"method", rec.Method, "path", rec.Path, "status", rec.Status, "vm", rec.VM,
		"duration", rec.Duration.Round(time.Microsecond), "bytes", rec.Bytes, "route", rec.Route, "end", rec.EndName()}
	if rec.Err != nil {
		attrs = append(attrs, "err", rec.Err)
		p.log.Error("request", attrs...)
		return
	}
	p.log.Info("request", attrs...)
}

// String names the end reason.
func (e EndReason) String() string {
	switch e {
	case EndComplete:
		return "complete"
	case EndDownstreamDisconnect:
		return "downstream_disconnect"
	case EndStreamIdleTimeout:
		return "stream_idle_timeout"
	case EndUpstreamFailure:
		return "upstream_failure"
	case EndHostFailure:
		return "host_failure"
	}
	return "end(" + strconv.Itoa(int(e)) + ")"
}

func (x *exchange) touch() {
	if x.idle != nil {
		x.idle.Reset(x.p.opts.StreamIdleTimeout)
	}
}

// clientGone reports whether the downstream went away.
func (x *exchange) clientGone() bool { return x.r.Context().Err() != nil }

// failed answers a host failure (a trap): 500 if nothing was sent yet,
// otherwise a reset.
func (x *exchange) failed(err error) (EndReason, error) {
	if !x.started {
		x.status = http.StatusInternalServerError
		x.writeHeaders(Headers{{":status", "500"}, {"content-type", "text/plain"}}, false)
		n, _ := io.WriteString(x.w, "wasm plugin failed\n")
		x.bytes += int64(n)
	} else {
		x.abort = true
	}
	return EndHostFailure, err
}

func (x *exchange) ended() (EndReason, error) {
	switch {
	case x.clientGone():
		x.abort = true
		return EndDownstreamDisconnect, nil
	case x.idleHit.Load():
		return x.idleTimeout()
	case x.rtHit.Load():
		return x.routeTimeout()
	}
	return EndComplete, nil
}

// timedOut reports whether the idle or the route timeout ended the
// exchange.
func (x *exchange) timedOut() bool { return x.idleHit.Load() || x.rtHit.Load() }

// routeTimeout answers Envoy's route timeout: a local reply 504 "upstream
// request timeout" (through the plugin) before the response started, a
// reset after; flag UT (envoy source/common/router/router.cc
// onResponseTimeout).
func (x *exchange) routeTimeout() (EndReason, error) {
	x.s.AddFlags(FlagUpstreamRequestTimeout)
	x.p.log.Warn("upstream request timeout", "upstream", x.p.upstream.Host, "method", x.r.Method, "path", x.r.URL.Path)
	if x.started {
		x.abort = true
		return EndUpstreamFailure, nil
	}
	if err := x.hostReply(http.StatusGatewayTimeout, "upstream_response_timeout", "upstream request timeout"); err != nil {
		return x.failed(err)
	}
	return EndUpstreamFailure, nil
}

// idleTimeout answers Envoy's stream idle timeout: a local reply 408
// "stream timeout" (through the plugin) before the response started, a reset
// after (envoy source/common/http/conn_manager_impl.cc onIdleTimeout).
func (x *exchange) idleTimeout() (EndReason, error) {
	x.s.AddFlags(FlagStreamIdleTimeout)
	if x.started {
		x.abort = true
		return EndStreamIdleTimeout, nil
	}
	if err := x.hostReply(http.StatusRequestTimeout, "stream_idle_timeout", "stream timeout"); err != nil {
		return x.failed(err)
	}
	return EndStreamIdleTimeout, nil
}

func (x *exchange) run() (EndReason, error) {
	s, r := x.s, x.r
	reqH := RequestHeaders(r)
	hasBody := r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0
	a, err := s.OnRequestHeaders(reqH, !hasBody)
	if err != nil {
		return x.failed(err)
	}
	if a == ActionPause && s.LocalReply() == nil {
		if end, stop, err := x.waitResume(); stop {
			return end, err
		}
	}
	var body []byte
	if hasBody && s.LocalReply() == nil {
		body, err = x.requestBody()
		if err != nil {
			if errors.Is(err, errClientGone) {
				return x.ended()
			}
			return x.failed(err)
		}
	}
	if s.LocalReply() != nil {
		return x.sendLocal()
	}
	if s.ResetRequested() {
		x.abort = true
		return EndHostFailure, nil
	}
	return x.forward(body, hasBody)
}

var errClientGone = errors.New("client went away")

// waitResume holds a paused stream until the plugin calls
// proxy_continue_stream, the client leaves or the idle timeout fires.
func (x *exchange) waitResume() (EndReason, bool, error) {
	select {
	case <-x.s.Resumed():
		return 0, false, nil
	case <-x.upstream.Done():
		end, err := x.ended()
		return end, true, err
	}
}

// requestBody runs the request body through the plugin chunk by chunk and
// returns what it forwarded. The whole body is read before the upstream is
// contacted (Envoy streams it; see doc.go).
func (x *exchange) requestBody() ([]byte, error) {
	bp := x.p.bufs.Get().(*[]byte)
	defer x.p.bufs.Put(bp)
	buf := *bp
	var out []byte
	for {
		n, rerr := x.r.Body.Read(buf)
		x.touch()
		eos := errors.Is(rerr, io.EOF)
		if rerr != nil && !eos {
			return nil, errClientGone
		}
		if n > 0 || eos {
			fwd, a, err := x.s.OnRequestBody(buf[:n], eos)
			if err != nil {
				return nil, err
			}
			if a == ActionContinue {
				out = append(out, fwd...)
			}
			if x.s.LocalReply() != nil {
				return out, nil
			}
		}
		if eos {
			return out, nil
		}
	}
}

// hostReply sends a reply the host decided (Envoy's own local replies also
// pass through the encoder filters, so the plugin sees them).
func (x *exchange) hostReply(status int, details, body string) error {
	x.s.setLocal(&LocalReply{Status: status, Details: details, Body: []byte(body)})
	_, err := x.sendLocal()
	return err
}

func (x *exchange) sendLocal() (EndReason, error) {
	x.local = true
	hdrs, body, err := x.s.RunLocalReply()
	if err != nil {
		return x.failed(err)
	}
	x.writeHeaders(hdrs, len(body) == 0)
	if len(body) > 0 {
		n, _ := x.w.Write(body)
		x.bytes += int64(n)
		_ = x.rc.Flush()
	}
	if x.clientGone() {
		x.abort = true
		return EndDownstreamDisconnect, nil
	}
	return EndComplete, nil
}

// writeHeaders sends the response headers to the client.
func (x *exchange) writeHeaders(h Headers, flush bool) {
	status, err := strconv.Atoi(h.Value(":status"))
	if err != nil || status < 100 || status > 999 {
		status = http.StatusBadGateway
	}
	dst := x.w.Header()
	h.ToHTTP(dst)
	if x.p.opts.VMHeader != "-" {
		dst.Set(x.p.opts.VMHeader, strconv.Itoa(x.s.VM()))
	}
	x.status = status
	x.started = true
	x.s.MarkResponseStarted()
	x.w.WriteHeader(status)
	if flush {
		_ = x.rc.Flush()
	}
}

func (x *exchange) upstreamRequest(body []byte, hasBody bool) (*http.Request, error) {
	h := x.s.RequestHeaders()
	path := h.Value(":path")
	if path == "" {
		path = "/"
	}
	u, err := url.Parse(x.p.upstream.Scheme + "://" + x.p.upstream.Host + path)
	if err != nil {
		return nil, err
	}
	method := h.Value(":method")
	if method == "" {
		method = http.MethodGet
	}
	var rd io.Reader
	if hasBody {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(x.upstream, method, u.String(), rd)
	if err != nil {
		return nil, err
	}
	h.ToHTTP(req.Header)
	req.Header.Del("Content-Length")
	if auth := h.Value(":authority"); auth != "" {
		req.Host = auth
	}
	if !hasBody {
		req.ContentLength = 0
	}
	return req, nil
}

func (x *exchange) forward(body []byte, hasBody bool) (EndReason, error) {
	s := x.s
	req, err := x.upstreamRequest(body, hasBody)
	if err != nil {
		return x.failed(err)
	}
	resp, err := x.p.transport.RoundTrip(req)
	x.touch()
	if err != nil {
		if x.clientGone() || x.timedOut() {
			return x.ended()
		}
		// Envoy's router answers 503 through the encoder filters (the
		// plugin sees the reply) and sets UF, UC or UH.
		x.upErr = err
		f := upstreamFailure(err)
		x.p.log.Warn(f.LogMessage(), "upstream", x.p.upstream.Host, "method", req.Method, "path", req.URL.Path, "err", err, "reply", f.Body)
		s.AddFlags(f.Flag)
		if err := x.hostReply(f.Status, f.Details, f.Body); err != nil {
			return x.failed(err)
		}
		return EndUpstreamFailure, nil
	}
	defer resp.Body.Close()

	noBody := resp.ContentLength == 0 || req.Method == http.MethodHead ||
		resp.StatusCode == http.StatusNoContent || resp.StatusCode == http.StatusNotModified
	a, err := s.OnResponseHeaders(ResponseHeaders(resp.StatusCode, resp.Header), noBody)
	if err != nil {
		return x.failed(err)
	}
	if lr := s.LocalReply(); lr != nil {
		// A local reply from the response path replaces the upstream
		// response; it is sent as is, without running the callbacks again.
		x.local = true
		h := localHeaders(lr)
		if len(lr.Body) > 0 {
			h.Set("content-length", strconv.Itoa(len(lr.Body)))
		}
		x.writeHeaders(h, false)
		n, _ := x.w.Write(lr.Body)
		x.bytes += int64(n)
		return x.ended()
	}
	if s.ResetRequested() {
		x.abort = true
		return EndHostFailure, nil
	}
	if a == ActionPause {
		if end, stop, err := x.waitResume(); stop {
			return end, err
		}
	}
	x.writeHeaders(s.ResponseHeaders(), true)
	if noBody {
		return x.ended()
	}
	return x.streamBody(resp.Body)
}

// streamBody passes each upstream chunk through proxy_on_response_body and
// flushes what the plugin forwards at once.
func (x *exchange) streamBody(body io.Reader) (EndReason, error) {
	s := x.s
	bp := x.p.bufs.Get().(*[]byte)
	defer x.p.bufs.Put(bp)
	buf := *bp
	for {
		n, rerr := body.Read(buf)
		x.touch()
		eos := errors.Is(rerr, io.EOF)
		if rerr != nil && !eos {
			if x.clientGone() || x.timedOut() {
				return x.ended()
			}
			// The upstream reset mid-stream: Envoy resets the downstream
			// and sets UR.
			s.AddFlags(FlagUpstreamRemoteReset)
			x.abort = true
			return EndUpstreamFailure, nil
		}
		if n == 0 && !eos {
			continue
		}
		out, a, err := s.OnResponseBody(buf[:n], eos)
		if err != nil {
			return x.failed(err)
		}
		if s.ResetRequested() {
			x.abort = true
			return EndHostFailure, nil
		}
		if a == ActionContinue && len(out) > 0 {
			cut := false
			if x.fault.active() {
				out, cut = x.cutPoint(out)
			}
			w, werr := x.w.Write(out)
			x.bytes += int64(w)
			if werr == nil {
				werr = x.rc.Flush()
			}
			x.touch()
			if werr != nil {
				if x.clientGone() {
					return x.ended()
				}
				x.abort = true
				return EndHostFailure, werr
			}
			if cut {
				s.AddFlags(FlagStreamIdleTimeout)
				x.abort, x.cut = true, true
				return EndStreamIdleTimeout, nil
			}
		}
		if eos {
			return x.ended()
		}
	}
}

// cutPoint returns the part of out to send before the fault cuts the
// stream, and whether it cuts.
func (x *exchange) cutPoint(out []byte) ([]byte, bool) {
	f := x.fault
	if f.CutAfterBytes > 0 && x.bytes+int64(len(out)) >= f.CutAfterBytes {
		return out[:f.CutAfterBytes-x.bytes], true
	}
	if f.CutAfterResult {
		if n := x.result.scan(out); n >= 0 {
			return out[:n], true
		}
	}
	if f.CutAfterEvents > 0 {
		for i, c := range out {
			// An event ends at a blank line: "\n\n" or "\r\n\r\n"
			// (a lone "\r" line ending is not counted).
			if c == '\n' && (x.prev == '\n' || (x.prev == '\r' && x.prev2 == '\n')) {
				x.events++
				if x.events >= f.CutAfterEvents {
					return out[:i+1], true
				}
			}
			x.prev2, x.prev = x.prev, c
		}
	}
	return out, false
}
