package gateway

import (
	"net/http"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// /metrics reports the data path per topic, the Iggy pool and a consumer group's lag: the
// records between its committed offset and the partition's end.
func TestMetricsReportTopicsPoolAndGroupLag(t *testing.T) {
	addr, user, pass := testIggy(t)
	g, _ := start(t, nil, append(bridgeEnv(addr, pass, "IGGY_KAFKA_METRICS_ADDR=127.0.0.1:0"), "IGGY_KAFKA_IGGY_USERNAME="+user)...)
	ctx := testCtx(t)
	topic := "lag-" + strings.ReplaceAll(t.Name(), "/", "-")
	cl := kafkaClient(t, g.kafkaAddr(), kgo.DefaultProduceTopic(topic))
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"a", "b", "c"} {
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	offsets := kadm.Offsets{}
	offsets.Add(kadm.Offset{Topic: topic, Partition: 0, At: 1, LeaderEpoch: -1})
	if _, err := adm.CommitOffsets(ctx, "lagging", offsets); err != nil {
		t.Fatal(err)
	}
	// Read the records back: the gateway answers from its tail cache.
	consumer := kafkaClient(t, g.kafkaAddr(), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().At(0)}}))
	for got := 0; got < 3; {
		fs := consumer.PollFetches(ctx)
		if err := fs.Err(); err != nil {
			t.Fatal(err)
		}
		got += fs.NumRecords()
	}
	_, body := httpGet(t, "http://"+g.MetricsAddr()+"/metrics")
	if strings.Contains(body, "iggy_gateway_kafka_tail_cache_hits_total 0\n") {
		t.Error("the consumer's reads were not counted as tail cache hits")
	}
	if strings.Contains(body, "iggy_gateway_kafka_tail_cache_limit_bytes 0\n") {
		t.Error("the tail cache's limit (sized from memory) is reported as 0")
	}
	for _, want := range []string{
		"iggy_gateway_kafka_tail_cache_batches 3\n",
		"iggy_gateway_kafka_tail_cache_hits_total ",
		"iggy_gateway_kafka_tail_cache_invalidations_total 0\n",
		"iggy_gateway_kafka_tail_cache_limit_bytes ",
		`iggy_gateway_kafka_consumer_group_lag_records{group="lagging"} 2`,
		`iggy_gateway_kafka_consumer_group_committed_partitions{group="lagging"} 1`,
		`iggy_gateway_kafka_produced_records_total{topic="` + topic + `"} 3`,
		`iggy_gateway_kafka_iggy_pool_connections `,
		`iggy_gateway_kafka_iggy_requests_total{command="send_messages",outcome="ok"}`,
		`iggy_gateway_kafka_request_memory_limit_bytes `,
		`iggy_gateway_kafka_coordinator_log_load_duration_seconds `,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if t.Failed() {
		t.Logf("/metrics:\n%s", body)
	}
}

// With credentials set, /metrics (which names every topic and group) answers 401 without
// them; the probes stay open for container healthchecks.
func TestMetricsAuthentication(t *testing.T) {
	g, _ := start(t, nil, "IGGY_KAFKA_METRICS_ADDR=127.0.0.1:0", "IGGY_KAFKA_METRICS_BEARER_TOKEN=scrape-token",
		"IGGY_KAFKA_METRICS_USERNAME=prometheus", "IGGY_KAFKA_METRICS_PASSWORD=scrape-secret")
	base := "http://" + g.MetricsAddr()
	if code, _ := httpGet(t, base+"/metrics"); code != http.StatusUnauthorized {
		t.Errorf("/metrics without credentials: %d, want 401", code)
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		if code, body := httpGet(t, base+path); code != http.StatusOK {
			t.Errorf("%s: %d %s", path, code, body)
		}
	}
	for name, set := range map[string]func(*http.Request){
		"bearer": func(r *http.Request) { r.Header.Set("Authorization", "Bearer scrape-token") },
		"basic":  func(r *http.Request) { r.SetBasicAuth("prometheus", "scrape-secret") },
	} {
		req, err := http.NewRequest(http.MethodGet, base+"/metrics", nil)
		if err != nil {
			t.Fatal(err)
		}
		set(req)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("/metrics with %s credentials: %d", name, resp.StatusCode)
		}
	}
}
