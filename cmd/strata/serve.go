package main

import (
	"context"
	"errors"
	"fmt"
	stdlog "log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/broker"
	"github.com/stratalog/strata/metrics"
)

func init() { commands = append(commands, newServeCmd) }

// serveFlags are strata serve's flags.
type serveFlags struct {
	listen, advertised          string
	tlsCert, tlsKey, tlsCA      string
	saslMechanisms              []string
	saslUsersFile               string
	saslUsers                   []string
	autoCreate                  bool
	metricsAddr                 string
	sync                        string
	addressFile                 string
	shutdownTimeout             time.Duration
	retentionCheck, cleanerTick time.Duration
}

func newServeCmd(a *app) *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the directory to Kafka clients: a one-binary Kafka-compatible broker",
		Long: `serve is a Kafka broker on the directory's files: Kafka clients (kcat,
kafka-console-producer, franz-go, librdkafka, Sarama, the Java client)
produce, consume, commit and administer topics through it, as they would on
one Kafka broker. It holds the directory as a writer does, runs the store's
background work (retention, the cleaner of compacted topics, the periodic
fsync of --sync) and, with --metrics, serves the store's figures on
/metrics in Prometheus' text format.

It logs one line per listener on stderr ("serving Kafka on ...", "metrics on
http://.../metrics"). SIGINT or SIGTERM stops it: it stops accepting, closes
the connections (a request being handled finishes first), closes the store
cleanly (the next open needs no recovery) and exits 0; a second signal ends
it at once.

TLS: --tls-cert and --tls-key (PEM) make the listener speak TLS; with
--tls-client-ca clients must present a certificate that CA signed.
SASL: --sasl-user user:password (repeated) or --sasl-users FILE (a
user:password a line; blank lines and lines starting with # are skipped)
make clients authenticate, with the mechanisms of --sasl-mechanism (default
SCRAM-SHA-512, SCRAM-SHA-256 and PLAIN). The user is not otherwise used:
there are no ACLs.`,
		Example: `  strata serve --dir /var/lib/orders
  strata serve --listen :9092 --advertised-address broker.example.com:9092 --metrics 127.0.0.1:9644
  strata serve --tls-cert server.pem --tls-key server-key.pem --sasl-mechanism SCRAM-SHA-256 --sasl-users users.txt
  strata serve --listen 127.0.0.1:0 --address-file /run/strata.addr --sync always

  # then, with kcat:
  kcat -b 127.0.0.1:9092 -L
  echo 'k1:hello' | kcat -b 127.0.0.1:9092 -P -t orders -K:
  kcat -b 127.0.0.1:9092 -C -t orders -o beginning -e`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.serve(cmd.Context(), f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.listen, "listen", broker.DefaultAddr, "the host:port to listen on for Kafka clients (port 0: any free port)")
	fl.StringVar(&f.advertised, "advertised-address", "", "the host:port clients are told to connect to (Kafka's advertised.listeners; default the address bound)")
	fl.StringVar(&f.tlsCert, "tls-cert", "", "the server's certificate chain, a PEM file: the listener speaks TLS")
	fl.StringVar(&f.tlsKey, "tls-key", "", "the private key of --tls-cert, a PEM file")
	fl.StringVar(&f.tlsCA, "tls-client-ca", "", "a PEM file of the CAs whose client certificates are required (mutual TLS)")
	fl.StringSliceVar(&f.saslMechanisms, "sasl-mechanism", nil, "the SASL mechanisms offered: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 (repeat or separate with commas; default all three)")
	fl.StringVar(&f.saslUsersFile, "sasl-users", "", "a file of SASL users, a user:password a line")
	fl.StringArrayVar(&f.saslUsers, "sasl-user", nil, "a SASL user, user:password (repeat for more)")
	fl.BoolVar(&f.autoCreate, "auto-create-topics", false, "create the topics clients ask for that do not exist (Kafka's auto.create.topics.enable), with the store's defaults")
	fl.StringVar(&f.metricsAddr, "metrics", "", "a host:port to serve /metrics on, in Prometheus' text format (e.g. 127.0.0.1:9644)")
	fl.StringVar(&f.sync, "sync", "1s", "the flush policy of topics without one of their own: always (fsync before a produce is acknowledged), never, or a duration (fsync that often)")
	fl.StringVar(&f.addressFile, "address-file", "", "write the Kafka listener's bound host:port to this file once serving (for --listen with port 0)")
	fl.DurationVar(&f.shutdownTimeout, "shutdown-timeout", 10*time.Second, "how long a stop waits for the metrics requests in flight")
	fl.DurationVar(&f.retentionCheck, "retention-check-interval", strata.DefaultRetentionCheckInterval, "how often retention runs (Kafka's log.retention.check.interval.ms); 0: never")
	fl.DurationVar(&f.cleanerTick, "cleaner-interval", strata.DefaultCleanerInterval, "how often the cleaner compacts the compacted topics (Kafka's log.cleaner.backoff.ms); 0: never")
	return cmd
}

// serve runs strata serve until ctx ends (SIGINT, SIGTERM).
func (a *app) serve(ctx context.Context, f serveFlags) error {
	bopts, err := f.brokerOptions(a)
	if err != nil {
		return err
	}
	sync, err := parseSync(f.sync)
	if err != nil {
		return err
	}
	if f.retentionCheck < 0 || f.cleanerTick < 0 {
		return usagef("--retention-check-interval and --cleaner-interval are durations of 0 (never) or more")
	}
	if f.shutdownTimeout < 0 {
		return usagef("--shutdown-timeout %s: a duration of 0 or more", f.shutdownTimeout)
	}
	if f.metricsAddr != "" {
		if _, ok := splitAddr(f.metricsAddr); !ok {
			return usagef("--metrics %q: want host:port, the port 0 to 65535, e.g. 127.0.0.1:9644", f.metricsAddr)
		}
	}
	dir, err := a.needDir()
	if err != nil {
		return err
	}
	opts := a.storeOptions(false)
	opts.Sync = sync
	opts.RetentionCheckInterval = orNever(f.retentionCheck)
	opts.CleanerInterval = orNever(f.cleanerTick)
	s, err := strata.Open(dir, opts)
	if err != nil {
		return err
	}
	srv, err := broker.Start(s, bopts)
	if err != nil {
		return errors.Join(wrapBrokerErr(err), s.Close())
	}
	fmt.Fprintf(a.stderr, "serving Kafka on %s\n", srv.Addr())
	var hs *http.Server
	var httpErr chan error
	if f.metricsAddr != "" {
		ln, err := net.Listen("tcp", f.metricsAddr)
		if err != nil {
			return errors.Join(fmt.Errorf("metrics: %w", err), srv.Close(), s.Close())
		}
		hs, httpErr = serveMetrics(s, ln)
		fmt.Fprintf(a.stderr, "metrics on http://%s/metrics\n", ln.Addr())
	}
	if f.addressFile != "" {
		if err := writeFileAtomic(f.addressFile, srv.Addr().String()+"\n"); err != nil {
			return errors.Join(err, shutdown(srv, hs, s, f.shutdownTimeout))
		}
	}
	var served error
	select {
	case <-ctx.Done():
		// A second SIGINT or SIGTERM ends the process at once, should the
		// shutdown hang.
		signal.Reset(os.Interrupt, syscall.SIGTERM)
	case err := <-httpErr:
		served = fmt.Errorf("metrics: %w", err)
	}
	return errors.Join(served, shutdown(srv, hs, s, f.shutdownTimeout))
}

// shutdown stops the Kafka listener and its connections, then the metrics
// server (waiting up to timeout for its requests), then closes the store.
func shutdown(srv *broker.Server, hs *http.Server, s *strata.Store, timeout time.Duration) error {
	errs := []error{srv.Close()}
	if hs != nil {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		errs = append(errs, hs.Shutdown(ctx))
		cancel()
	}
	return errors.Join(append(errs, s.Close())...)
}

// serveMetrics serves /metrics on ln: the store's figures (package
// metrics), and the Go runtime's and the process's. The channel receives
// the error that ends the server, other than its Shutdown.
func serveMetrics(s *strata.Store, ln net.Listener) (*http.Server, chan error) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		metrics.NewCollector(s, nil),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() {
		if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			errc <- err
		}
	}()
	return hs, errc
}

// orNever is d, or -1 (never) for 0.
func orNever(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}

// parseSync parses --sync: always, never or a positive duration.
func parseSync(v string) (strata.SyncPolicy, error) {
	switch v {
	case "always":
		return strata.SyncAlways, nil
	case "never":
		return strata.SyncNever, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return strata.SyncPolicy{}, usagef("--sync %q: want always, never or a positive duration (e.g. 1s, 200ms)", v)
	}
	return strata.SyncEvery(d), nil
}

// wrapBrokerErr marks the broker's ErrInvalidOptions as bad usage.
func wrapBrokerErr(err error) error {
	if errors.Is(err, broker.ErrInvalidOptions) {
		return usageError{err}
	}
	return err
}

// splitAddr splits a host:port flag value, and says whether it is one:
// the port a number from 0 to 65535.
func splitAddr(addr string) (host string, ok bool) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", false
	}
	n, err := strconv.ParseUint(port, 10, 16)
	return host, err == nil && n <= 65535
}

// brokerOptions builds the broker's options from the flags, checking
// them: every bad value is a usage error, found before the directory is
// opened.
func (f serveFlags) brokerOptions(a *app) (*broker.Options, error) {
	if _, ok := splitAddr(f.listen); !ok {
		return nil, usagef("--listen %q: want host:port, the port 0 to 65535, e.g. 127.0.0.1:9092 or :9092", f.listen)
	}
	o := &broker.Options{
		Addr:             f.listen,
		AdvertisedAddr:   f.advertised,
		AutoCreateTopics: f.autoCreate,
		ErrorLog:         stdlog.New(a.stderr, "strata: ", 0),
	}
	if f.advertised != "" {
		if host, ok := splitAddr(f.advertised); !ok || host == "" {
			return nil, usagef("--advertised-address %q: want host:port, the port 0 to 65535, e.g. broker.example.com:9092", f.advertised)
		}
	}
	var err error
	if o.TLS, err = tlsConfig(f.tlsCert, f.tlsKey, f.tlsCA); err != nil {
		return nil, err
	}
	if o.SASL, err = saslConfig(f.saslMechanisms, f.saslUsersFile, f.saslUsers); err != nil {
		return nil, err
	}
	return o, nil
}

// writeFileAtomic writes data to path through a temporary file renamed
// over it, so that a reader never sees it half written.
func writeFileAtomic(path, data string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".strata-addr-*")
	if err != nil {
		return fmt.Errorf("--address-file: %w", err)
	}
	_, err = tmp.WriteString(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("--address-file: %w", err)
	}
	return nil
}
