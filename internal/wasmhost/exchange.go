package wasmhost

import "strconv"

// Exchange is one request/response pair to drive through the plugin without
// HTTP (tests and benchmarks). The upstream answer is given in advance.
type Exchange struct {
	Info StreamInfo
	// Request headers, pseudo-headers included. A nil RequestBody means
	// end_of_stream on the headers.
	Request     Headers
	RequestBody [][]byte
	// Response is the upstream's answer (":status" included); a nil
	// ResponseBody means end_of_stream on the headers.
	Response     Headers
	ResponseBody [][]byte
	// End is how the stream ends (default EndComplete).
	End EndReason
}

// Result is what the plugin made of an Exchange.
type Result struct {
	VM       int
	StreamID uint32
	// Upstream reports whether the request reached the upstream; Request and
	// RequestBody are what it received.
	Upstream    bool
	Request     Headers
	RequestBody []byte
	// Response and ResponseBody are what the client received, body chunk
	// by chunk as forwarded.
	Response     Headers
	ResponseBody [][]byte
	// Local is the plugin's local reply, if any.
	Local *LocalReply
}

// Simulate runs x through the next VM the way the proxy would: request
// headers, request body chunks, then either the local reply (through the
// response callbacks) or the given upstream response, then the end of the
// stream (log, done, delete).
func (h *Host) Simulate(x Exchange) (Result, error) {
	s, err := h.NewStream(x.Info)
	if err != nil {
		return Result{}, err
	}
	res := Result{VM: s.VM(), StreamID: s.ID()}
	err = s.simulate(&x, &res)
	if ferr := s.Finish(x.End); err == nil {
		err = ferr
	}
	if err == nil {
		s.Release()
	}
	return res, err
}

func (s *Stream) simulate(x *Exchange, res *Result) error {
	if _, err := s.OnRequestHeaders(x.Request, x.RequestBody == nil); err != nil {
		return err
	}
	for i, chunk := range x.RequestBody {
		if s.local != nil {
			break
		}
		out, a, err := s.OnRequestBody(chunk, i == len(x.RequestBody)-1)
		if err != nil {
			return err
		}
		if a == ActionContinue {
			res.RequestBody = append(res.RequestBody, out...)
		}
	}
	if s.local != nil {
		res.Local = s.local
		hdrs, body, err := s.RunLocalReply()
		if err != nil {
			return err
		}
		res.Response = hdrs
		if len(body) > 0 {
			res.ResponseBody = append(res.ResponseBody, body)
		}
		return nil
	}
	res.Upstream = true
	res.Request = s.RequestHeaders()
	if x.Response == nil {
		return nil
	}
	if _, err := s.OnResponseHeaders(x.Response, x.ResponseBody == nil); err != nil {
		return err
	}
	if s.local != nil {
		res.Local = s.local
		res.Response = localHeaders(s.local)
		res.ResponseBody = [][]byte{s.local.Body}
		return nil
	}
	res.Response = s.ResponseHeaders()
	s.MarkResponseStarted()
	for i, chunk := range x.ResponseBody {
		out, a, err := s.OnResponseBody(chunk, i == len(x.ResponseBody)-1)
		if err != nil {
			return err
		}
		if a == ActionContinue && len(out) > 0 {
			res.ResponseBody = append(res.ResponseBody, out)
		}
	}
	return nil
}

// localHeaders builds the headers of a local reply sent without running
// the response callbacks again (a local reply from the response path).
func localHeaders(lr *LocalReply) Headers {
	h := Headers{{":status", strconv.Itoa(lr.Status)}}
	h = append(h, lr.Headers...)
	return h
}
