// Command listener serves a Strata directory to Kafka clients: it opens
// the store, listens for Kafka's wire protocol, and serves until it is
// interrupted (Ctrl-C, SIGTERM), when it closes the listener and its
// connections and then the store, so that the directory is left cleanly
// shut down.
//
//	go run ./examples/listener                      # a temporary directory, removed at the end
//	go run ./examples/listener -dir DIR             # DIR, kept
//	go run ./examples/listener -auto-create         # Metadata creates the topics clients ask for
//	go run ./examples/listener -addr :9092 -advertised host.example:9092
//	go run ./examples/listener -sasl alice:secret -tls-cert cert.pem -tls-key key.pem
//
// Any Kafka client then uses the directory through the printed address:
//
//	kcat -b 127.0.0.1:9092 -L
//	echo hello | kcat -b 127.0.0.1:9092 -P -t greetings
//	kcat -b 127.0.0.1:9092 -C -t greetings -o beginning -e
//
// Flags:
//
//	-dir DIR          the store directory (default: a new temporary one, printed, removed at exit)
//	-addr HOST:PORT   the address to listen on (default 127.0.0.1:9092, loopback only; ":9092" is every interface)
//	-advertised H:P   the address Metadata gives clients for the broker (default: the listening address)
//	-auto-create      create the topics a client's Metadata request names (Kafka's auto.create.topics.enable)
//	-partitions N     the partitions of an auto-created topic (default 1, Kafka's num.partitions)
//	-sasl USER:PASS   a SASL user (repeat the flag for more): clients then authenticate with
//	                  SCRAM-SHA-512, SCRAM-SHA-256 or PLAIN before anything else
//	-tls-cert FILE    serve TLS with this PEM certificate (chain), and
//	-tls-key FILE     its PEM private key: SSL, or SASL_SSL with -sasl
//
// It prints the directory and the address it serves, one line each, and
// the reasons it closes connections (a malformed request, say) on stderr.
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	stdlog "log"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/stratalog/strata"
	"github.com/stratalog/strata/broker"
)

func main() {
	dir := flag.String("dir", "", "store directory (default: a new temporary directory, removed at exit)")
	addr := flag.String("addr", broker.DefaultAddr, "address to listen on, host:port")
	advertised := flag.String("advertised", "", "address Metadata gives clients, host:port (default: the listening address)")
	autoCreate := flag.Bool("auto-create", false, "create the topics Metadata requests name")
	partitions := flag.Int("partitions", 1, "partitions of an auto-created topic")
	users := map[string]string{}
	flag.Func("sasl", "a SASL user, USER:PASSWORD (repeatable)", func(v string) error {
		user, pass, ok := strings.Cut(v, ":")
		if !ok || user == "" || pass == "" {
			return errors.New("want USER:PASSWORD, neither empty")
		}
		users[user] = pass
		return nil
	})
	certFile := flag.String("tls-cert", "", "PEM certificate (chain) to serve TLS with")
	keyFile := flag.String("tls-key", "", "PEM private key of -tls-cert")
	flag.Parse()
	if flag.NArg() > 0 || *partitions < 1 || (*certFile == "") != (*keyFile == "") {
		fmt.Fprintf(os.Stderr, "listener: want no arguments (got %q), -partitions of at least 1 (got %d), and -tls-cert and -tls-key together\n", flag.Args(), *partitions)
		flag.Usage()
		os.Exit(2)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	opts := &broker.Options{
		Addr:             *addr,
		AdvertisedAddr:   *advertised,
		AutoCreateTopics: *autoCreate,
		AutoCreateConfig: strata.TopicConfig{Partitions: *partitions},
		ErrorLog:         stdlog.New(os.Stderr, "listener: ", stdlog.LstdFlags),
	}
	if len(users) > 0 {
		opts.SASL = &broker.SASL{Users: users}
	}
	if *certFile != "" {
		cert, err := tls.LoadX509KeyPair(*certFile, *keyFile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "listener:", err)
			os.Exit(1)
		}
		opts.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	if err := run(ctx, *dir, opts); err != nil {
		fmt.Fprintln(os.Stderr, "listener:", err)
		os.Exit(1)
	}
}

// run serves the store in dir (a temporary directory if empty) with opts
// until ctx ends, then closes the server and the store.
func run(ctx context.Context, dir string, opts *broker.Options) (err error) {
	if dir == "" {
		tmp, err := os.MkdirTemp("", "strata-listener-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	store, err := strata.Open(dir, nil)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, store.Close()) }()

	srv, err := broker.Start(store, opts)
	if err != nil {
		return err
	}
	fmt.Printf("directory %s\n", dir)
	fmt.Printf("serving Kafka clients on %s\n", srv.Addr())
	<-ctx.Done()
	fmt.Println("closing")
	return srv.Close()
}
