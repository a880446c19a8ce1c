package wasmhost

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"syscall"
	"unicode"
	"unicode/utf8"
)

// UpstreamFailure is how Envoy's router answers a request whose upstream
// failed before sending response headers: the status, the body (a
// text/plain local reply), the response code details and the response flag.
type UpstreamFailure struct {
	Status  int
	Body    string
	Details string
	Flag    uint64
}

// LogMessage is the proxy's warning for the failure.
func (f UpstreamFailure) LogMessage() string {
	switch f.Flag {
	case FlagUpstreamConnTermination:
		return "upstream closed the connection before response headers"
	case FlagUpstreamRequestTimeout:
		return "upstream request timeout"
	}
	return "upstream unreachable"
}

// upstreamFailure names err, an error of the upstream round trip before
// response headers, the way Envoy ≥ 1.31 does (envoy
// source/common/router/router.cc onUpstreamReset; reset reasons from
// source/common/http/utility.cc resetReasonToString; the transport failure
// reason "delayed connect error: <strerror>" from
// source/common/network/connection_impl.cc, human-readable since
// envoyproxy/envoy#35154):
//
//	connection refused   503 "upstream connect error or disconnect/reset before headers.
//	                          reset reason: remote connection failure, transport failure
//	                          reason: delayed connect error: Connection refused"  UF
//	connect timeout      503 "… reset reason: connection timeout"               UF
//	closed before reply  503 "… reset reason: connection termination"           UC
//	name not resolved    503 "no healthy upstream"                               UH
func upstreamFailure(err error) UpstreamFailure {
	const prefix = "upstream connect error or disconnect/reset before headers. reset reason: "
	reset := func(reason, transport string, flag uint64) UpstreamFailure {
		body, details := prefix+reason, reason
		if transport != "" {
			body += ", transport failure reason: " + transport
			details += "|" + transport
		}
		return UpstreamFailure{
			Status:  http.StatusServiceUnavailable,
			Body:    body,
			Details: strings.ReplaceAll("upstream_reset_before_response_started{"+details+"}", " ", "_"),
			Flag:    flag,
		}
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		// A STRICT_DNS cluster whose name does not resolve has no hosts.
		return UpstreamFailure{Status: http.StatusServiceUnavailable, Body: "no healthy upstream",
			Details: "no_healthy_upstream", Flag: FlagNoHealthyUpstream}
	}
	var op *net.OpError
	if !errors.As(err, &op) || op.Op != "dial" {
		return reset("connection termination", "", FlagUpstreamConnTermination)
	}
	if errors.Is(err, context.DeadlineExceeded) || op.Timeout() {
		return reset("connection timeout", "", FlagUpstreamConnFailure)
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return reset("remote connection failure", "delayed connect error: "+strerror(errno), FlagUpstreamConnFailure)
	}
	return reset("remote connection failure", "", FlagUpstreamConnFailure)
}

// strerror spells errno as C's strerror does on Linux ("Connection
// refused"); Go spells the same text in lower case.
func strerror(errno syscall.Errno) string {
	s := errno.Error()
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}
