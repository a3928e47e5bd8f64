package local

import (
	"context"
	"fmt"
	"io/fs"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// InstallCRDs creates (or updates) the CRDs of every .yaml file in crds on the API server
// of cfg and waits until each is Established, so the caller may create its objects at once.
func InstallCRDs(ctx context.Context, cfg *rest.Config, crds fs.FS) error {
	scheme := runtime.NewScheme()
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		return err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	var files []string
	err = fs.WalkDir(crds, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".yaml") {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return fmt.Errorf("no CRD files")
	}
	var names []string
	for _, f := range files {
		b, err := fs.ReadFile(crds, f)
		if err != nil {
			return err
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(b, crd); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		err = c.Create(ctx, crd)
		if apierrors.IsAlreadyExists(err) {
			cur := &apiextensionsv1.CustomResourceDefinition{}
			if err = c.Get(ctx, client.ObjectKey{Name: crd.Name}, cur); err == nil {
				crd.ResourceVersion = cur.ResourceVersion
				err = c.Update(ctx, crd)
			}
		}
		if err != nil {
			return fmt.Errorf("install %s: %w", f, err)
		}
		names = append(names, crd.Name)
	}
	for _, n := range names {
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := c.Get(ctx, client.ObjectKey{Name: n}, crd); err != nil {
				return false, nil
			}
			for _, cond := range crd.Status.Conditions {
				if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil {
			return fmt.Errorf("CRD %s not established: %w", n, err)
		}
	}
	return nil
}
