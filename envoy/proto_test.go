// Tests of the deployment artifacts under envoy/ and docker-compose.yaml,
// against the real schemas: Envoy's API (go-control-plane), Istio's API
// (istio.io/api), the Compose specification (compose-go) and the plugin's
// own configuration parser. Nothing here needs Envoy, Istio or Docker.
package envoy_test

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/anypb"
	"sigs.k8s.io/yaml"
)

// strictJSON converts YAML to JSON, refusing duplicate keys.
func strictJSON(yamlText []byte) ([]byte, error) {
	js, err := yaml.YAMLToJSONStrict(yamlText)
	if err != nil {
		return nil, fmt.Errorf("YAML: %w", err)
	}
	return js, nil
}

// unmarshalStrict decodes JSON into m, failing on unknown fields, bad enum
// names and Any type URLs not linked into the test binary.
func unmarshalStrict(js []byte, m proto.Message) error {
	return protojson.UnmarshalOptions{DiscardUnknown: false}.Unmarshal(js, m)
}

// validator is what protoc-gen-validate generates for Envoy's messages.
type validator interface{ ValidateAll() error }

// validateTree runs the protoc-gen-validate rules of m and of every message
// packed in an Any anywhere below it (ValidateAll does not look inside Any:
// the HTTP connection manager, the filters and the per-route configs are all
// packed that way).
func validateTree(m proto.Message) error {
	var errs []error
	if v, ok := m.(validator); ok {
		if err := v.ValidateAll(); err != nil {
			errs = append(errs, err)
		}
	}
	walkAny(m.ProtoReflect(), func(inner proto.Message, typeURL string) {
		if v, ok := inner.(validator); ok {
			if err := v.ValidateAll(); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", typeURL, err))
			}
		}
	}, func(err error) { errs = append(errs, err) })
	return errors.Join(errs...)
}

// walkAny calls visit for the unpacked content of every Any below m,
// recursively.
func walkAny(m protoreflect.Message, visit func(proto.Message, string), fail func(error)) {
	if a, ok := m.Interface().(*anypb.Any); ok {
		if a.GetTypeUrl() == "" && len(a.GetValue()) == 0 {
			return // an empty Any: FilterConfig's "config: {}"
		}
		inner, err := a.UnmarshalNew()
		if err != nil {
			fail(fmt.Errorf("unpacking %s: %w", a.GetTypeUrl(), err))
			return
		}
		visit(inner, a.GetTypeUrl())
		walkAny(inner.ProtoReflect(), visit, fail)
		return
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList() && fd.Message() != nil:
			l := v.List()
			for i := 0; i < l.Len(); i++ {
				walkAny(l.Get(i).Message(), visit, fail)
			}
		case fd.IsMap() && fd.MapValue().Message() != nil:
			v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
				walkAny(mv.Message(), visit, fail)
				return true
			})
		case !fd.IsList() && !fd.IsMap() && fd.Message() != nil:
			walkAny(v.Message(), visit, fail)
		}
		return true
	})
}
