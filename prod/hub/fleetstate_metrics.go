package hub

import (
	"context"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	clusterv1beta1 "github.com/fleetsim/fleetsim/apis/cluster/v1beta1"
	v1beta1 "github.com/fleetsim/fleetsim/apis/placement/v1beta1"
)

// Fleet-state gauges, read from the hub's informer cache at each scrape rather than kept up
// to date by the controllers: a scrape then always shows what is stored, whichever replica
// leads, and no decision pays for them.
var (
	membersDesc = prometheus.NewDesc("fleetsim_hub_member_clusters",
		"MemberClusters by their Joined and Healthy conditions (True, False or Unknown).", []string{"joined", "healthy"}, nil)
	placementsDesc = prometheus.NewDesc("fleetsim_hub_placements",
		"ClusterResourcePlacements by condition type and status.", []string{"condition", "status"}, nil)
	// KubeFleet's name and labels for the same fact per placement: the time of each
	// condition's last transition.
	placementStatusDesc = prometheus.NewDesc("fleet_workload_placement_status_last_timestamp_seconds",
		"Last transition time of each condition of each placement, in seconds since the epoch.",
		[]string{"namespace", "name", "generation", "conditionType", "status", "reason"}, nil)
)

// fleetState collects the gauges from the cache of the hub Setup made last (one hub per
// process in production; tests that start hubs one after another see the latest).
type fleetStateCollector struct{ reader atomic.Pointer[client.Reader] }

var fleetState = &fleetStateCollector{}

func init() { crmetrics.Registry.MustRegister(fleetState) }

func (c *fleetStateCollector) use(r client.Reader) { c.reader.Store(&r) }

func (c *fleetStateCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- membersDesc
	ch <- placementsDesc
	ch <- placementStatusDesc
}

func (c *fleetStateCollector) Collect(ch chan<- prometheus.Metric) {
	rp := c.reader.Load()
	if rp == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	status := func(conds []metav1.Condition, typ string) string {
		if cond := meta.FindStatusCondition(conds, typ); cond != nil {
			return string(cond.Status)
		}
		return string(metav1.ConditionUnknown)
	}
	var mcs clusterv1beta1.MemberClusterList
	if err := (*rp).List(ctx, &mcs); err == nil {
		counts := map[[2]string]int{}
		for _, mc := range mcs.Items {
			counts[[2]string{status(mc.Status.Conditions, clusterv1beta1.ConditionTypeJoined), status(mc.Status.Conditions, clusterv1beta1.ConditionTypeHealthy)}]++
		}
		for k, n := range counts {
			ch <- prometheus.MustNewConstMetric(membersDesc, prometheus.GaugeValue, float64(n), k[0], k[1])
		}
	}
	var crps v1beta1.ClusterResourcePlacementList
	if err := (*rp).List(ctx, &crps); err == nil {
		counts := map[[2]string]int{}
		for _, crp := range crps.Items {
			for _, cond := range crp.Status.Conditions {
				counts[[2]string{cond.Type, string(cond.Status)}]++
				ch <- prometheus.MustNewConstMetric(placementStatusDesc, prometheus.GaugeValue, float64(cond.LastTransitionTime.Unix()),
					"", crp.Name, strconv.FormatInt(cond.ObservedGeneration, 10), cond.Type, string(cond.Status), cond.Reason)
			}
		}
		for k, n := range counts {
			ch <- prometheus.MustNewConstMetric(placementsDesc, prometheus.GaugeValue, float64(n), k[0], k[1])
		}
	}
}
