package metrics_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/metrics"
)

// An application registers a Collector of its store with its registry and
// serves the registry on /metrics, with its own metrics beside the
// store's.
func ExampleNewCollector() {
	dir, _ := os.MkdirTemp("", "strata-metrics")
	defer os.RemoveAll(dir)
	s, err := strata.Open(dir, nil)
	if err != nil {
		panic(err)
	}
	defer s.Close()
	ctx := context.Background()
	if err := s.CreateTopic("orders", strata.TopicConfig{}); err != nil {
		panic(err)
	}
	for _, v := range []string{"a", "b", "c"} {
		if _, err := s.AppendTo(ctx, "orders", 0, strata.Record{Value: []byte(v)}); err != nil {
			panic(err)
		}
	}
	if err := s.Commit("billing", "orders", 0, 1, ""); err != nil {
		panic(err)
	}

	reg := prometheus.NewRegistry()
	reg.MustRegister(metrics.NewCollector(s, nil))
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if strings.Contains(line, `topic="orders"`) && (strings.HasPrefix(line, "strata_partition_log_end_offset") ||
			strings.HasPrefix(line, "strata_partition_appended_records_total") || strings.HasPrefix(line, "strata_group_lag")) {
			fmt.Println(line)
		}
	}
	// Output:
	// strata_group_lag{group="billing",partition="0",topic="orders"} 2
	// strata_partition_appended_records_total{partition="0",topic="orders"} 3
	// strata_partition_log_end_offset{partition="0",topic="orders"} 3
}
