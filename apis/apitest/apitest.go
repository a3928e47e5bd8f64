package apitest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	crdvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	crvalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"sigs.k8s.io/yaml"
)

// CRDDir is the repository's config/crd/bases.
func CRDDir() string {
	_, file, _, _ := goruntime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "config", "crd", "bases")
}

// LoadCRDs decodes every CRD of dir strictly, keyed by kind.
func LoadCRDs(dir string) (map[string]*apiextensionsv1.CustomResourceDefinition, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no CRDs in %s: run hack/generate.sh", dir)
	}
	out := map[string]*apiextensionsv1.CustomResourceDefinition{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(b, crd); err != nil {
			return nil, fmt.Errorf("%s does not decode as a v1 CustomResourceDefinition: %v", f, err)
		}
		if _, dup := out[crd.Spec.Names.Kind]; dup {
			return nil, fmt.Errorf("kind %s is defined twice", crd.Spec.Names.Kind)
		}
		out[crd.Spec.Names.Kind] = crd
	}
	return out, nil
}

// Internal defaults a v1 CRD and converts it to the internal version, as the API server does
// before validating it.
func Internal(crd *apiextensionsv1.CustomResourceDefinition) (*apiextensions.CustomResourceDefinition, error) {
	in := crd.DeepCopy()
	apiextensionsv1.SetObjectDefaults_CustomResourceDefinition(in)
	out := &apiextensions.CustomResourceDefinition{}
	if err := apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(in, out, nil); err != nil {
		return nil, err
	}
	return out, nil
}

// ValidateCRD is the API server's validation of a CRD.
func ValidateCRD(crd *apiextensionsv1.CustomResourceDefinition) (field.ErrorList, error) {
	in, err := Internal(crd)
	if err != nil {
		return nil, err
	}
	return crdvalidation.ValidateCustomResourceDefinition(context.Background(), in), nil
}

// Server validates objects of one kind as kube-apiserver would.
type Server struct {
	Kind       string
	structural *structuralschema.Structural
	schema     crvalidation.SchemaValidator
	cel        *cel.Validator
}

// NewServer builds the validator of a CRD's stored version (every served version has its
// schema).
func NewServer(crd *apiextensionsv1.CustomResourceDefinition) (*Server, error) {
	in, err := Internal(crd)
	if err != nil {
		return nil, err
	}
	var props *apiextensions.JSONSchemaProps
	switch {
	case in.Spec.Validation != nil:
		props = in.Spec.Validation.OpenAPIV3Schema
	default:
		for _, v := range in.Spec.Versions {
			if v.Storage && v.Schema != nil {
				props = v.Schema.OpenAPIV3Schema
			}
		}
	}
	if props == nil {
		return nil, fmt.Errorf("%s: want a stored version with a schema", crd.Name)
	}
	s, err := structuralschema.NewStructural(props)
	if err != nil {
		return nil, fmt.Errorf("%s: structural schema: %v", crd.Name, err)
	}
	v, _, err := crvalidation.NewSchemaValidator(props)
	if err != nil {
		return nil, fmt.Errorf("%s: schema validator: %v", crd.Name, err)
	}
	return &Server{Kind: crd.Spec.Names.Kind, structural: s, schema: v, cel: cel.NewValidator(s, true, celconfig.PerCallLimit)}, nil
}

// Servers builds a Server per kind of the CRDs in dir.
func Servers(dir string) (map[string]*Server, error) {
	crds, err := LoadCRDs(dir)
	if err != nil {
		return nil, err
	}
	out := map[string]*Server{}
	for kind, crd := range crds {
		if out[kind], err = NewServer(crd); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Admit defaults, prunes and validates obj, an update of old when old is not nil (both are
// modified). It returns the paths pruned as unknown fields and the validation errors.
func (s *Server) Admit(obj, old map[string]any) (pruned []string, errs field.ErrorList) {
	structuraldefaulting.Default(obj, s.structural)
	pruned = structuralpruning.PruneWithOptions(obj, s.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})
	if old == nil {
		errs = crvalidation.ValidateCustomResource(nil, obj, s.schema)
	} else {
		structuraldefaulting.Default(old, s.structural)
		structuralpruning.Prune(old, s.structural, true)
		errs = crvalidation.ValidateCustomResourceUpdate(nil, obj, old, s.schema)
	}
	celErrs, _ := s.cel.Validate(context.Background(), nil, s.structural, obj, old, celconfig.RuntimeCELCostBudget)
	return pruned, append(errs, celErrs...)
}

// AdmitObject admits a typed object (and the object it updates, when old is not nil) as its
// JSON form reaches the API server.
func (s *Server) AdmitObject(obj, old runtime.Object) (pruned []string, errs field.ErrorList, err error) {
	o, err := ToUnstructured(obj)
	if err != nil {
		return nil, nil, err
	}
	var p map[string]any
	if old != nil {
		if p, err = ToUnstructured(old); err != nil {
			return nil, nil, err
		}
	}
	pruned, errs = s.Admit(o, p)
	return pruned, errs, nil
}

// ToUnstructured encodes a typed object to JSON and decodes it as the API server does
// (integers stay integers).
func ToUnstructured(obj runtime.Object) (map[string]any, error) {
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	return DecodeJSON(b)
}

// DecodeYAML decodes a YAML or JSON manifest as the API server does.
func DecodeYAML(text []byte) (map[string]any, error) {
	j, err := yaml.YAMLToJSON(text)
	if err != nil {
		return nil, err
	}
	return DecodeJSON(j)
}

// DecodeJSON decodes JSON as the API server does: integers become int64.
func DecodeJSON(b []byte) (map[string]any, error) {
	var obj map[string]any
	if err := utiljson.Unmarshal(b, &obj); err != nil {
		return nil, err
	}
	return runtime.DeepCopyJSON(obj), nil
}
