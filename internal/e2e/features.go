package e2e

import (
	"os"
)

// Feature is a gateway capability that scenarios depend on.
type Feature string

// Gateway features, named after the Kafka APIs they need (issue numbers in the tracker).
const (
	// Core: the gateway binary, ApiVersions, Metadata, DescribeCluster, FindCoordinator and
	// InitProducerId (issue 3).
	FeatureCore Feature = "core"
	// AutoCreate: Metadata creates missing topics when IGGY_KAFKA_AUTO_CREATE_TOPICS_ENABLED.
	FeatureAutoCreate Feature = "auto-create"
	// Produce of uncompressed v2 batches (issue 4).
	FeatureProduce Feature = "produce"
	// Produce of batches compressed with each codec (issue 4).
	FeatureGzip   Feature = "produce-gzip"
	FeatureSnappy Feature = "produce-snappy"
	FeatureLZ4    Feature = "produce-lz4"
	FeatureZstd   Feature = "produce-zstd"
	// Fetch (issue 4).
	FeatureFetch Feature = "fetch"
	// ListOffsets: earliest, latest, by timestamp (issue 4).
	FeatureListOffsets Feature = "list-offsets"
	// Topic administration: CreateTopics, DeleteTopics, CreatePartitions (issue 4).
	FeatureCreateTopics     Feature = "create-topics"
	FeatureDeleteTopics     Feature = "delete-topics"
	FeatureCreatePartitions Feature = "create-partitions"
	// Configs: DescribeConfigs, AlterConfigs, IncrementalAlterConfigs (issue 4).
	FeatureConfigs Feature = "configs"
	// Groups: the classic group protocol, JoinGroup, SyncGroup, Heartbeat, LeaveGroup (issue 5).
	FeatureGroups Feature = "groups"
	// Offsets: OffsetCommit and OffsetFetch stored in Iggy (issue 5).
	FeatureOffsets Feature = "offsets"
	// GroupAdmin: DescribeGroups, ListGroups, DeleteGroups, OffsetDelete (issue 5).
	FeatureGroupAdmin Feature = "group-admin"
	// StaticMembership: group.instance.id honoured (issue 5).
	FeatureStaticMembership Feature = "static-membership"
)

// pendingFeatures lists the gateway features that have not landed yet, with the reason shown
// when a scenario needing one is skipped. This map is the only place where scenarios are
// gated: remove an entry when its feature lands, and every scenario that needs it runs (and
// must pass) from then on.
var pendingFeatures = map[Feature]string{}

// runPending reports whether pending scenarios run anyway (IGGYGW_E2E_RUN_PENDING=1), to see
// which of them already pass.
func runPending() bool { return os.Getenv("IGGYGW_E2E_RUN_PENDING") == "1" }

// pendingReason returns the reason the first pending feature in needs is pending, or "".
func pendingReason(needs []Feature) string {
	if runPending() {
		return ""
	}
	for _, f := range needs {
		if reason, ok := pendingFeatures[f]; ok {
			return reason
		}
	}
	return ""
}
