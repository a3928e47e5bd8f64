package difftest

import (
	"context"
	"fmt"
	"strings"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetsim/fleetsim/prod/testenv"
	"github.com/fleetsim/fleetsim/scenarios"
)

// refusePolicy names the ValidatingAdmissionPolicy (and its binding) by which a member's
// API server refuses what the scenario's applyFails workload steps say it refuses.
const refusePolicy = "difftest-workload-apply-fails"

// refuseApplies makes member name's API server refuse, with a ValidatingAdmissionPolicy,
// every create or update the scenario's workload steps so far make fail there: a real
// agent's apply then fails as the simulated member's does. The policy's expression is the
// steps' rule (the last matching step decides), written in CEL.
func (f *fleet) refuseApplies(name string, env *testenv.Env) {
	f.t.Helper()
	expr := "false"
	any := false
	for _, w := range f.workloadSteps {
		if w.Member != "*" && w.Member != name {
			continue
		}
		any = true
		expr = fmt.Sprintf("(%s) ? %t : (%s)", celMatch(w), w.Behavior == scenarios.ApplyFails, expr)
	}
	if !any {
		return
	}
	c := testenv.Client(f.t, env.Config)
	ctx := context.Background()
	fail := admissionv1.Fail
	policy := &admissionv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: refusePolicy},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: &fail,
			MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionv1.RuleWithOperations{
					Operations: []admissionv1.OperationType{admissionv1.Create, admissionv1.Update},
					Rule:       admissionv1.Rule{APIGroups: []string{"*"}, APIVersions: []string{"*"}, Resources: []string{"*"}},
				},
			}}},
			Validations: []admissionv1.Validation{{Expression: "!(" + expr + ")",
				Message: "refused by the scenario's workload step (applyFails)"}},
		}}
	binding := &admissionv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: refusePolicy},
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: refusePolicy,
			ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny}}}
	for _, o := range []client.Object{policy, binding} {
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			err := c.Create(ctx, o.DeepCopyObject().(client.Object))
			if !apierrors.IsAlreadyExists(err) {
				return err
			}
			cur := o.DeepCopyObject().(client.Object)
			if err := c.Get(ctx, client.ObjectKeyFromObject(o), cur); err != nil {
				return err
			}
			upd := o.DeepCopyObject().(client.Object)
			upd.SetResourceVersion(cur.GetResourceVersion())
			return c.Update(ctx, upd)
		})
		if err != nil {
			f.t.Fatalf("member %s: %T %s: %v", name, o, refusePolicy, err)
		}
	}
}

// celMatch is a workload step's match in CEL over the admitted object: kind, and name,
// namespace and container image when the step names them (as the simulator matches).
func celMatch(w *scenarios.WorkloadStep) string {
	terms := []string{"object.kind == " + celString(w.Kind)}
	if w.Name != "" {
		terms = append(terms, "object.metadata.name == "+celString(w.Name))
	}
	if w.Namespace != "" {
		terms = append(terms, "has(object.metadata.namespace) && object.metadata.namespace == "+celString(w.Namespace))
	}
	if w.Image != "" {
		img := celString(w.Image)
		var runs []string
		for _, spec := range []string{"object.spec.template.spec", "object.spec"} {
			for _, field := range []string{"containers", "initContainers"} {
				runs = append(runs, fmt.Sprintf("(%s && has(%s.%s) && %s.%s.exists(c, has(c.image) && c.image == %s))",
					hasPath(spec), spec, field, spec, field, img))
			}
		}
		terms = append(terms, "("+strings.Join(runs, " || ")+")")
	}
	return strings.Join(terms, " && ")
}

// hasPath tests every step of a dotted path below object.
func hasPath(path string) string {
	parts := strings.Split(path, ".")
	var out []string
	for i := 2; i <= len(parts); i++ {
		out = append(out, "has("+strings.Join(parts[:i], ".")+")")
	}
	return strings.Join(out, " && ")
}

func celString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}
