package member

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fleetsim/fleetsim/agentk8s/member/properties"
)

// collectTimeout bounds one collection: a provider that takes longer is cancelled, and the
// heartbeat reports it as failed (PROP-PROVIDER: the context ends when it runs too long).
const collectTimeout = 30 * time.Second

// startProperties starts the agent's property provider once. Without one, or when it fails
// to start, the agent reports what the built-in provider reports from the member client it
// already has, without the version (PROP-FALLBACK); the ClusterPropertyProviderStarted
// condition says which.
func (a *Agent) startProperties(ctx context.Context) {
	if a.provider != nil {
		return
	}
	fallback := &properties.Kubernetes{Client: a.Member}
	if a.Properties == nil {
		a.provider = fallback
		return
	}
	if err := a.Properties.Start(ctx, a.MemberConfig); err != nil {
		a.Log.Info("the property provider did not start; reporting the built-in properties", "error", err.Error())
		a.provider = fallback
		a.providerStarted = metav1.Condition{Type: properties.ConditionTypeStarted, Status: metav1.ConditionFalse,
			Reason: properties.ReasonStartFailed, Message: err.Error()}
		return
	}
	a.provider = a.Properties
	a.providerStarted = metav1.Condition{Type: properties.ConditionTypeStarted, Status: metav1.ConditionTrue,
		Reason: properties.ReasonStarted, Message: "the property provider started"}
}

// collect asks the provider for the member's properties and writes the provider's
// conditions into conds, observing generation.
func (a *Agent) collect(ctx context.Context, conds *[]metav1.Condition, generation int64) properties.Collection {
	a.startProperties(ctx)
	ctx, cancel := context.WithTimeout(ctx, collectTimeout)
	defer cancel()
	c := a.provider.Collect(ctx)
	if c.Err == nil && c.Properties == nil {
		c.Err = fmt.Errorf("the property provider reported nothing")
	}
	write := func(cond metav1.Condition) {
		cond.ObservedGeneration, cond.LastTransitionTime = generation, metav1.NewTime(a.now())
		meta.SetStatusCondition(conds, cond)
	}
	if a.providerStarted.Type != "" {
		write(a.providerStarted)
	}
	for _, cond := range c.Conditions {
		write(cond)
	}
	return c
}
