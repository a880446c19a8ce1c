package wasmhost

import (
	"bytes"
	"encoding/binary"
	"strings"

	"github.com/tetratelabs/wazero/api"
)

// proxy_get_property. Paths arrive as segments separated (and often
// terminated) by NUL. Strings are returned raw, integers as 8-byte
// little-endian, maps in the header-map serialization (Envoy's attribute
// vocabulary, envoy docs "Attributes"; source/extensions/filters/common/expr).
func proxyGetProperty(vm *VM, mem api.Memory, st []uint64) {
	path, ok := mem.Read(u32(st, 0), u32(st, 1))
	if !ok {
		ret(st, StatusInvalidMemoryAccess)
		return
	}
	path = bytes.TrimSuffix(path, []byte{0})
	val, str, s := vm.property(path, vm.num[:0])
	if s != StatusOK {
		ret(st, s)
		return
	}
	if val == nil {
		ret(st, vm.copyOutString(mem, str, u32(st, 2), u32(st, 3)))
		return
	}
	ret(st, vm.copyOut(mem, val, u32(st, 2), u32(st, 3)))
}

func int64LE(dst []byte, v int64) []byte {
	return binary.LittleEndian.AppendUint64(dst, uint64(v))
}

// property answers either bytes (val) or a string (str).
func (vm *VM) property(path []byte, scratch []byte) (val []byte, str string, st Status) {
	h := vm.host
	s := vm.cur
	switch string(path) {
	case "plugin_root_id":
		return nil, h.opts.RootID, StatusOK
	case "plugin_name":
		return nil, h.opts.PluginName, StatusOK
	case "plugin_vm_id":
		return nil, h.opts.VMID, StatusOK
	case "route_name":
		// The top-level route_name attribute was removed in Envoy 1.33;
		// xds.route_name replaces it.
		return nil, "", StatusNotFound
	}
	if s != nil {
		switch string(path) {
		case "xds\x00route_name":
			if s.info.RouteName == "" {
				return nil, "", StatusNotFound
			}
			return nil, s.info.RouteName, StatusOK
		case "request\x00path":
			return s.reqHeaderProp(":path")
		case "request\x00url_path":
			_, p, st := s.reqHeaderProp(":path")
			if st != StatusOK {
				return nil, "", st
			}
			if i := strings.IndexByte(p, '?'); i >= 0 {
				p = p[:i]
			}
			return nil, p, StatusOK
		case "request\x00query":
			_, p, st := s.reqHeaderProp(":path")
			if st != StatusOK {
				return nil, "", st
			}
			if i := strings.IndexByte(p, '?'); i >= 0 {
				return nil, p[i+1:], StatusOK
			}
			return nil, "", StatusOK
		case "request\x00method":
			return s.reqHeaderProp(":method")
		case "request\x00host":
			return s.reqHeaderProp(":authority")
		case "request\x00scheme":
			return s.reqHeaderProp(":scheme")
		case "request\x00id":
			return s.reqHeaderProp("x-request-id")
		case "request\x00protocol":
			return nil, "HTTP/1.1", StatusOK
		case "request\x00headers":
			return s.reqHeaders.AppendSerialized(vm.scratch[:0]), "", StatusOK
		}
		switch string(path) {
		case "response\x00headers":
			if s.respHeaders == nil {
				return nil, "", StatusNotFound
			}
			return s.respHeaders.AppendSerialized(vm.scratch[:0]), "", StatusOK
		case "response\x00code":
			// Unset until a response exists (StreamInfo::responseCode is
			// an optional).
			if s.code == 0 {
				return nil, "", StatusNotFound
			}
			return int64LE(scratch, int64(s.code)), "", StatusOK
		case "response\x00code_details":
			if s.codeDetails == "" {
				return nil, "", StatusNotFound
			}
			return nil, s.codeDetails, StatusOK
		case "response\x00flags":
			return int64LE(scratch, int64(s.flags)), "", StatusOK
		case "connection\x00termination_details":
			if s.termination == "" {
				return nil, "", StatusNotFound
			}
			return nil, s.termination, StatusOK
		case "source\x00address":
			return nonEmpty(s.info.SourceAddress)
		case "destination\x00address":
			return nonEmpty(s.info.DestinationAddress)
		case "upstream\x00address":
			return nonEmpty(s.info.UpstreamAddress)
		}
	}
	if len(h.opts.Properties) > 0 {
		dotted := strings.ReplaceAll(string(path), "\x00", ".")
		if v, ok := h.opts.Properties[dotted]; ok {
			return v, "", StatusOK
		}
	}
	return nil, "", StatusNotFound
}

func nonEmpty(v string) ([]byte, string, Status) {
	if v == "" {
		return nil, "", StatusNotFound
	}
	return nil, v, StatusOK
}

func (s *Stream) reqHeaderProp(key string) ([]byte, string, Status) {
	v, ok := s.reqHeaders.Get(key)
	if !ok {
		return nil, "", StatusNotFound
	}
	return nil, v, StatusOK
}

// proxy_set_property: Envoy stores the value in the stream's filter state;
// this host has no consumer for it and accepts it.
func proxySetProperty(_ *VM, mem api.Memory, st []uint64) {
	if _, ok := mem.Read(u32(st, 0), u32(st, 1)); !ok {
		ret(st, StatusInvalidMemoryAccess)
		return
	}
	if _, ok := mem.Read(u32(st, 2), u32(st, 3)); !ok {
		ret(st, StatusInvalidMemoryAccess)
		return
	}
	ret(st, StatusOK)
}
