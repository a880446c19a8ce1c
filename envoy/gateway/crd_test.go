package gateway_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	envoygateway "github.com/envoyproxy/gateway"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"sigs.k8s.io/yaml"
)

// crdVersion is one served version of a CRD, ready to validate objects the
// way the Kubernetes API server does on create.
type crdVersion struct {
	structural *structuralschema.Structural
	schema     apiservervalidation.SchemaValidator
	cel        *cel.Validator // nil when the schema has no CEL rules
}

// servedSchemas indexes the OpenAPI schemas of the CRDs Envoy Gateway ships
// (its own and Gateway API's, github.com/envoyproxy/gateway.GatewayCRDs) by
// group, version and kind, for every served version.
var servedSchemas = sync.OnceValues(func() (map[schema.GroupVersionKind]*apiextensionsv1.JSONSchemaProps, error) {
	out := map[schema.GroupVersionKind]*apiextensionsv1.JSONSchemaProps{}
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(envoygateway.GatewayCRDs)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("Envoy Gateway's CRDs: %w", err)
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.Unmarshal(doc, &crd); err != nil {
			return nil, fmt.Errorf("Envoy Gateway's CRDs: %w", err)
		}
		if crd.Kind != "CustomResourceDefinition" {
			continue
		}
		for _, v := range crd.Spec.Versions {
			if v.Served && v.Schema != nil && v.Schema.OpenAPIV3Schema != nil {
				out[schema.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: crd.Spec.Names.Kind}] = v.Schema.OpenAPIV3Schema
			}
		}
	}
})

var crdCache struct {
	sync.Mutex
	byGVK map[schema.GroupVersionKind]*crdVersion
}

// servedCRD returns the validators of a served CRD version, built once
// (compiling a CRD's CEL rules takes a while).
func servedCRD(gvk schema.GroupVersionKind) (*crdVersion, error) {
	schemas, err := servedSchemas()
	if err != nil {
		return nil, err
	}
	crdCache.Lock()
	defer crdCache.Unlock()
	if v, ok := crdCache.byGVK[gvk]; ok {
		return v, nil
	}
	props, ok := schemas[gvk]
	if !ok {
		return nil, fmt.Errorf("no served CRD for %s in Envoy Gateway's CRDs", gvk)
	}
	var internal apiextensions.JSONSchemaProps
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(props, &internal, nil); err != nil {
		return nil, fmt.Errorf("CRD %s: %w", gvk, err)
	}
	sv, _, err := apiservervalidation.NewSchemaValidator(&internal)
	if err != nil {
		return nil, fmt.Errorf("CRD %s: %w", gvk, err)
	}
	s, err := structuralschema.NewStructural(&internal)
	if err != nil {
		return nil, fmt.Errorf("CRD %s: %w", gvk, err)
	}
	v := &crdVersion{structural: s, schema: sv, cel: cel.NewValidator(s, true, celconfig.PerCallLimit)}
	if crdCache.byGVK == nil {
		crdCache.byGVK = map[schema.GroupVersionKind]*crdVersion{}
	}
	crdCache.byGVK[gvk] = v
	return v, nil
}

// validateAgainstCRD validates a manifest as the API server would on
// create with strict field validation: unknown fields (kubectl
// --validate=strict), the CRD's structural schema after defaulting, and its
// CEL rules (x-kubernetes-validations).
func validateAgainstCRD(yamlText []byte) error {
	js, err := yaml.YAMLToJSONStrict(yamlText)
	if err != nil {
		return fmt.Errorf("YAML: %w", err)
	}
	// As the API server decodes: whole numbers become int64, not float64.
	var obj map[string]any
	if err := utiljson.Unmarshal(js, &obj); err != nil {
		return fmt.Errorf("JSON: %w", err)
	}
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return fmt.Errorf("apiVersion %q: %w", apiVersion, err)
	}
	crd, err := servedCRD(gv.WithKind(kind))
	if err != nil {
		return err
	}
	var errs []error
	for _, path := range pruning.PruneWithOptions(obj, crd.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true}) {
		errs = append(errs, fmt.Errorf("unknown field %q", path))
	}
	structuraldefaulting.Default(obj, crd.structural)
	for _, e := range apiservervalidation.ValidateCustomResource(nil, obj, crd.schema) {
		errs = append(errs, fmt.Errorf("CRD schema: %v", e))
	}
	if crd.cel != nil {
		celErrs, _ := crd.cel.Validate(context.Background(), nil, crd.structural, obj, nil, celconfig.RuntimeCELCostBudget)
		for _, e := range celErrs {
			errs = append(errs, fmt.Errorf("CRD rule: %v", e))
		}
	}
	return errors.Join(errs...)
}
