package sim

// runRecord is a ClusterStagedUpdateRun with its approval requests.
type runRecord struct {
	name string
}
