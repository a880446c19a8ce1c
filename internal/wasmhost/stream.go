package wasmhost

import (
	"errors"
	"strconv"
	"strings"
	"sync"
)

// StreamInfo describes a new HTTP stream.
type StreamInfo struct {
	// RouteName answers the xds.route_name property ("" = no route name:
	// NOT_FOUND).
	RouteName string
	// SourceAddress and DestinationAddress answer source.address and
	// destination.address ("ip:port").
	SourceAddress, DestinationAddress string
	// UpstreamAddress answers upstream.address.
	UpstreamAddress string
}

// LocalReply is a response the plugin asked for with
// proxy_send_local_response.
type LocalReply struct {
	Status  int
	Details string // status code details, spaces replaced by '_'
	Body    []byte
	Headers Headers // the plugin's additional headers
	GRPC    int32
}

// Stream is one HTTP request/response pair running through one VM: one
// proxy-wasm stream context. Its methods run the guest's callbacks, each
// under the VM's mutex. A Stream is used by one goroutine at a time.
type Stream struct {
	vm   *VM
	gen  uint32
	id   uint32
	info StreamInfo

	reqHeaders, respHeaders   Headers
	reqTrailers, respTrailers Headers
	reqOpen, respOpen         bool // header map readable/writable now
	respTrailersOpen          bool // the response-trailers callback runs
	logPhase                  bool

	body       []byte // body buffer of the running body callback
	bodyActive int    // -1: none; bufferRequestBody or bufferResponseBody
	reqBuf     []byte // request bytes buffered by Pause
	respBuf    []byte // response bytes buffered by Pause

	local        *LocalReply
	inLocalReply bool // running the response callbacks of a local reply
	respStarted  bool // response headers went downstream
	resetAsked   bool // the plugin asked for a reset (close_stream or late local reply)
	resumed      chan struct{}

	code        int
	codeDetails string
	flags       uint64
	termination string

	failed   error
	finished bool
}

// NewStream creates a stream context on the next VM (round-robin):
// proxy_on_context_create(id, root).
func (h *Host) NewStream(info StreamInfo) (*Stream, error) {
	vm := h.pick()
	vm.mu.Lock()
	defer vm.mu.Unlock()
	if err := vm.ensure(); err != nil {
		return nil, err
	}
	s := streamPool.Get().(*Stream)
	reqBuf, respBuf := s.reqBuf[:0], s.respBuf[:0]
	*s = Stream{vm: vm, gen: vm.gen, id: vm.nextID, info: info, bodyActive: -1, reqBuf: reqBuf, respBuf: respBuf}
	vm.nextID++
	vm.streams[s.id] = s
	vm.requests.Add(1)
	h.stats.streams.Add(1)
	vm.cur = s
	vm.trace(s.id, "proxy_on_context_create")
	err := vm.call2(vm.fn.contextCreate, uint64(s.id), uint64(vm.rootID))
	vm.cur = nil
	if err != nil {
		s.failed = vm.trapped("proxy_on_context_create", err)
		return s, s.failed
	}
	return s, nil
}

var streamPool = sync.Pool{New: func() any { return new(Stream) }}

// Release returns a finished stream to a pool for reuse. The caller must
// not use s afterwards. Calling it is optional.
func (s *Stream) Release() {
	if !s.finished {
		return
	}
	s.vm = nil
	streamPool.Put(s)
}

// VM is the index of the VM running this stream.
func (s *Stream) VM() int { return s.vm.index }

// ID is the stream's context id.
func (s *Stream) ID() uint32 { return s.id }

// Err is the error that failed the stream (a trap), or nil.
func (s *Stream) Err() error { return s.failed }

// enter locks the VM for a callback on s; it fails if the stream failed or
// its VM was restarted since.
func (s *Stream) enter() error {
	s.vm.mu.Lock()
	if s.failed == nil && s.gen != s.vm.gen {
		s.failed = ErrVMRestarted
	}
	if s.failed != nil {
		s.vm.mu.Unlock()
		return s.failed
	}
	s.vm.cur = s
	return nil
}

func (s *Stream) leave() {
	s.vm.cur = nil
	s.vm.mu.Unlock()
}

// fail records a trap in callback; vm.mu is held.
func (s *Stream) fail(callback string, err error) error {
	s.failed = s.vm.trapped(callback, err)
	delete(s.vm.streams, s.id)
	return s.failed
}

// OnRequestHeaders runs proxy_on_request_headers with h (which the plugin
// may modify; read the result with RequestHeaders). After Continue the map
// is no longer readable by the plugin (Envoy clears request_headers_ in
// Context::decodeHeaders), until the log phase.
func (s *Stream) OnRequestHeaders(h Headers, endOfStream bool) (Action, error) {
	if err := s.enter(); err != nil {
		return ActionContinue, err
	}
	defer s.leave()
	s.reqHeaders = h
	s.reqOpen = true
	s.vm.trace(s.id, "proxy_on_request_headers")
	a, err := s.vm.callAction(s.vm.fn.requestHeaders, s.id, len(h), endOfStream)
	if err != nil {
		return ActionContinue, s.fail("proxy_on_request_headers", err)
	}
	if a == ActionContinue || s.local != nil {
		s.reqOpen = false
	}
	return a, nil
}

// RequestHeaders returns the request header map as the plugin left it.
func (s *Stream) RequestHeaders() Headers { return s.reqHeaders }

// RemoveRequestHeader removes every entry of key from the request header
// map after the plugin's request-headers callback, as a filter later in
// Envoy's chain does (a header mutation, jwt_authn, a route's
// request_headers_to_remove): what the plugin reads of the map in the log
// phase is then the map without it.
func (s *Stream) RemoveRequestHeader(key string) { s.reqHeaders.Del(key) }

// ResponseHeaders returns the response header map as the plugin left it.
func (s *Stream) ResponseHeaders() Headers { return s.respHeaders }

// OnRequestBody runs proxy_on_request_body for chunk. With Continue it
// returns the bytes to forward (the buffered body as the plugin left it);
// with Pause the bytes stay buffered and the next call's body_size covers
// the whole accumulated body (Envoy's StopIterationAndBuffer).
func (s *Stream) OnRequestBody(chunk []byte, endOfStream bool) ([]byte, Action, error) {
	return s.onBody(bufferRequestBody, chunk, endOfStream)
}

// OnResponseBody is OnRequestBody for the response.
func (s *Stream) OnResponseBody(chunk []byte, endOfStream bool) ([]byte, Action, error) {
	return s.onBody(bufferResponseBody, chunk, endOfStream)
}

func (s *Stream) onBody(which int, chunk []byte, eos bool) ([]byte, Action, error) {
	if err := s.enter(); err != nil {
		return nil, ActionContinue, err
	}
	defer s.leave()
	buf := &s.reqBuf
	fn, name := s.vm.fn.requestBody, "proxy_on_request_body"
	if which == bufferResponseBody {
		buf, fn, name = &s.respBuf, s.vm.fn.responseBody, "proxy_on_response_body"
	}
	*buf = append(*buf, chunk...)
	s.body, s.bodyActive = *buf, which
	s.vm.trace(s.id, name)
	a, err := s.vm.callAction(fn, s.id, len(s.body), eos)
	out := s.body
	s.body, s.bodyActive = nil, -1
	if err != nil {
		*buf = nil
		return nil, ActionContinue, s.fail(name, err)
	}
	if a == ActionPause && !eos && s.local == nil {
		*buf = out[:len(out):len(out)]
		return nil, ActionPause, nil
	}
	if a == ActionPause && eos {
		// Envoy would hold the stream until proxy_continue_stream; a test
		// host must not hang, so the body goes on and the fact is logged.
		s.vm.host.log.Warn("plugin paused at end of stream; forwarding the buffered body", "vm", s.vm.index, "context", s.id, "callback", name)
	}
	*buf = nil
	return out, a, nil
}

// OnResponseHeaders runs proxy_on_response_headers with h.
func (s *Stream) OnResponseHeaders(h Headers, endOfStream bool) (Action, error) {
	if err := s.enter(); err != nil {
		return ActionContinue, err
	}
	defer s.leave()
	s.respHeaders = h
	s.respOpen = true
	status := h.Value(":status")
	if st, err := strconv.Atoi(status); err == nil && s.code == 0 {
		s.code = st
	}
	if s.codeDetails == "" && !s.inLocalReply {
		s.codeDetails = "via_upstream"
	}
	s.vm.trace(s.id, "proxy_on_response_headers")
	a, err := s.vm.callAction(s.vm.fn.responseHeaders, s.id, len(h), endOfStream)
	if err != nil {
		return ActionContinue, s.fail("proxy_on_response_headers", err)
	}
	if a == ActionContinue {
		s.respOpen = false
	}
	if v := s.respHeaders.Value(":status"); v != status {
		if st, err := strconv.Atoi(v); err == nil {
			s.code = st // the plugin changed the status
		}
	}
	return a, nil
}

// OnResponseTrailers runs proxy_on_response_trailers with h: the response
// ended with trailers instead of end_of_stream on its last body chunk. As in
// Envoy, the trailer map is readable and writable during the callback, and
// no response body buffer is offered (the last chunk has passed on).
func (s *Stream) OnResponseTrailers(h Headers) (Action, error) {
	if err := s.enter(); err != nil {
		return ActionContinue, err
	}
	defer s.leave()
	s.respTrailers = h
	s.respTrailersOpen = true
	defer func() { s.respTrailersOpen = false }()
	s.vm.trace(s.id, "proxy_on_response_trailers")
	a, err := s.vm.callAction2(s.vm.fn.responseTrailers, s.id, len(h))
	if err != nil {
		return ActionContinue, s.fail("proxy_on_response_trailers", err)
	}
	return a, nil
}

// ResponseTrailers returns the response trailers as the plugin left them.
func (s *Stream) ResponseTrailers() Headers { return s.respTrailers }

// setLocal records a reply the host itself decided.
func (s *Stream) setLocal(lr *LocalReply) { s.local = lr }

// LocalReply returns the local reply the plugin asked for, or nil.
func (s *Stream) LocalReply() *LocalReply { return s.local }

// ResetRequested reports whether the plugin asked to reset the stream
// (proxy_close_stream, or a local reply after the response started).
func (s *Stream) ResetRequested() bool { return s.resetAsked }

// MarkResponseStarted records that response headers went downstream: a
// local reply is no longer possible.
func (s *Stream) MarkResponseStarted() { s.respStarted = true }

// RunLocalReply builds the local reply's response the way Envoy does
// (:status, the plugin's headers, then content-length and content-type
// text/plain when the body is not empty and no content-type was given —
// envoy source/common/http/utility.cc sendLocalReply) and passes it through
// this plugin's response callbacks, as Envoy's encoder chain does. It
// returns the headers and body to send.
func (s *Stream) RunLocalReply() (Headers, []byte, error) {
	lr := s.local
	if lr == nil {
		return nil, nil, errors.New("wasmhost: no local reply")
	}
	h := Headers{{":status", strconv.Itoa(lr.Status)}}
	for _, e := range lr.Headers {
		h.Add(e.Key, e.Value)
	}
	if len(lr.Body) > 0 {
		h.Set("content-length", strconv.Itoa(len(lr.Body)))
		if _, ok := h.Get("content-type"); !ok {
			h.Add("content-type", "text/plain")
		}
	}
	s.code = lr.Status
	s.codeDetails = lr.Details
	s.inLocalReply = true
	defer func() { s.inLocalReply = false }()
	if _, err := s.OnResponseHeaders(h, len(lr.Body) == 0); err != nil {
		return nil, nil, err
	}
	body := lr.Body
	if len(body) > 0 {
		out, _, err := s.OnResponseBody(body, true)
		if err != nil {
			return nil, nil, err
		}
		body = out
	}
	return s.respHeaders, body, nil
}

// Resumed is signalled when the plugin calls proxy_continue_stream for
// this stream.
func (s *Stream) Resumed() <-chan struct{} {
	s.vm.mu.Lock()
	defer s.vm.mu.Unlock()
	if s.resumed == nil {
		s.resumed = make(chan struct{}, 1)
	}
	return s.resumed
}

// SetResponse records the response code and its details (Envoy's
// response.code and response.code_details) when the host, not the
// upstream, decides them.
func (s *Stream) SetResponse(code int, details string) {
	s.vm.mu.Lock()
	s.code, s.codeDetails = code, details
	s.vm.mu.Unlock()
}

// End reasons for Finish.
type EndReason int

// How a stream ended.
const (
	EndComplete             EndReason = iota // both directions completed
	EndDownstreamDisconnect                  // the client went away
	EndStreamIdleTimeout                     // no activity for the stream idle timeout
	EndUpstreamFailure                       // the upstream could not be reached or reset
	EndHostFailure                           // the host failed the stream (trap, local error)
)

// Finish ends the stream, clean or reset, in Envoy's order: proxy_on_log
// (Envoy registers the filter as an access logger), then proxy_on_done,
// then proxy_on_delete. The reason sets response.flags and
// response.code_details before proxy_on_log: a downstream disconnect sets
// DC (0x4000) and downstream_remote_disconnect, an idle timeout SI
// (0x10000) and stream_idle_timeout. Header maps are readable again in the
// log phase.
func (s *Stream) Finish(reason EndReason) error {
	return s.finish(reason, false)
}

// FinishDeferredLog ends the stream the way Envoy does for HTTP/3 with the
// runtime guard envoy.reloadable_features.quic_defer_logging_to_ack_listener
// (on by default in recent Envoy): the filter chain is destroyed first —
// Context::onDestroy calls proxy_on_done then proxy_on_delete — and the
// access loggers, proxy_on_log among them, run only later, when the client
// acknowledged the last byte or the QUIC stream goes away
// (source/common/quic/quic_stats_gatherer.cc QuicStatsGatherer::OnPacketAcked
// and maybeDoDeferredLog, called from the gatherer's destructor too;
// ConnectionManagerImpl::ActiveStream::deferHeadersAndTrailers hands the
// headers and a copy of the stream info over "for logging later (i.e.
// possibly after this stream has been destroyed)"). Context::log does not
// check whether the context was destroyed, so proxy_on_log then reaches the
// guest for a context id it already deleted.
func (s *Stream) FinishDeferredLog(reason EndReason) error {
	return s.finish(reason, true)
}

func (s *Stream) finish(reason EndReason, deferLog bool) error {
	if s.finished {
		return nil
	}
	s.finished = true
	switch reason {
	case EndDownstreamDisconnect:
		s.flags |= FlagDownstreamConnTerminated
		s.codeDetails = "downstream_remote_disconnect"
		s.termination = "downstream_remote_disconnect"
	case EndStreamIdleTimeout:
		s.flags |= FlagStreamIdleTimeout
		s.codeDetails = "stream_idle_timeout"
	case EndUpstreamFailure:
		if s.flags&(FlagUpstreamConnFailure|FlagUpstreamRemoteReset|FlagUpstreamConnTermination|FlagNoHealthyUpstream|FlagUpstreamRequestTimeout) == 0 {
			s.flags |= FlagUpstreamConnFailure
		}
	}
	if err := s.enter(); err != nil {
		return err
	}
	defer s.leave()
	vm := s.vm
	defer delete(vm.streams, s.id)
	s.reqOpen, s.respOpen = false, false
	if !deferLog {
		if err := s.log(); err != nil {
			return err
		}
	}
	// Envoy ignores proxy_on_done's result when the stream is destroyed
	// (Context::onDestroy calls onDone then onDelete).
	vm.trace(s.id, "proxy_on_done")
	if _, err := vm.callBool(vm.fn.done, uint64(s.id), 0); err != nil {
		return s.fail("proxy_on_done", err)
	}
	vm.trace(s.id, "proxy_on_delete")
	if err := vm.call1(vm.fn.delete, uint64(s.id)); err != nil {
		return s.fail("proxy_on_delete", err)
	}
	if deferLog {
		return s.log()
	}
	return nil
}

// log runs proxy_on_log, the access-log phase.
func (s *Stream) log() error {
	s.logPhase = true
	defer func() { s.logPhase = false }()
	s.vm.trace(s.id, "proxy_on_log")
	if err := s.vm.call1(s.vm.fn.log, uint64(s.id)); err != nil {
		return s.fail("proxy_on_log", err)
	}
	return nil
}

// Flags returns the response flags recorded so far.
func (s *Stream) Flags() uint64 { return s.flags }

// AddFlags adds response flags (for example FlagUpstreamRemoteReset).
func (s *Stream) AddFlags(f uint64) { s.flags |= f }

// headerMap returns the map of type t and whether the plugin may read and
// write it now (its headers callback runs, or the stream is paused there);
// nil for a map type this host does not have.
func (s *Stream) headerMap(t uint32) (*Headers, bool) {
	switch t {
	case mapRequestHeaders:
		return &s.reqHeaders, s.reqOpen
	case mapResponseHeaders:
		return &s.respHeaders, s.respOpen
	case mapRequestTrailers:
		return &s.reqTrailers, false
	case mapResponseTrailers:
		return &s.respTrailers, s.respTrailersOpen
	}
	return nil, false
}

// sanitizeDetails replaces whitespace by '_' as Envoy does for response code
// details (StringUtil::replaceAllEmptySpace in Context::sendLocalResponse).
func sanitizeDetails(s string) string {
	if !strings.ContainsAny(s, " \t\f\v\n\r") {
		return s
	}
	return strings.Map(func(r rune) rune {
		switch r {
		case ' ', '\t', '\f', '\v', '\n', '\r':
			return '_'
		}
		return r
	}, s)
}
