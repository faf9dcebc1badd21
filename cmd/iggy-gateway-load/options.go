package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/iggygw/iggy-gateway-kafka/internal/durability"
)

// Options is one comparison run.
type Options struct {
	Records    int // records per leg
	RecordSize int // bytes per record value
	Codec      string
	Acks       string // all, 1 or 0
	Linger     time.Duration
	BatchBytes int // franz-go's ProducerBatchMaxBytes
	Partitions int
	Producers  int
	// FetchPartitionBytes is franz-go's FetchMaxPartitionBytes; direct polls ask for as many
	// records as fit in it, so both consumers move the same amount per partition and round trip.
	FetchPartitionBytes int
	// DirectBatchRecords fixes the records per direct send; 0 replays the batch sizes franz-go
	// cut in the gateway leg (or, without that leg, as many records as fit in BatchBytes).
	DirectBatchRecords int
	Gateway, Direct    bool // which legs run
	// IdempotenceOffLeg adds a gateway produce leg with franz-go's idempotent writes off.
	IdempotenceOffLeg bool

	IggyAddr, IggyUsername, IggyPassword string // empty IggyAddr: in-memory server in-process
	IggyStream                           string // the gateway's IGGY_STREAM
	GatewayAddr                          string // empty: build and start the gateway
	GatewayPID                           int    // pid of an external gateway, for /proc figures
	GatewayBin                           string // prebuilt gateway binary to start
	GatewayEnv                           []string
	ProfileDir                           string // CPU profiles of the started gateway go here
	// KafkaAddr is a Kafka broker the gateway's franz-go legs also run against ("kafka"
	// legs); empty: none. KafkaPID is its process, for its CPU and RSS figures.
	KafkaAddr string
	KafkaPID  int
	// IggyPID is the process of the Iggy server at IggyAddr, for its CPU in the gateway and
	// direct legs (0: not measured).
	IggyPID int

	// TopicFlush is the flush mode of the test topics (docs/DURABILITY.md), as the gateway
	// would create them.
	TopicFlush durability.Mode

	// Rate is the records/s of the rate-limited legs; 0: half of the lowest produce rate of
	// the round. LatencyDuration is how long they produce; 0: no rate-limited legs.
	Rate            float64
	LatencyDuration time.Duration

	// RebalanceMembers adds the rebalance legs (rebalance.go) with a group of this many
	// members; 0: none.
	RebalanceMembers int

	Rounds       int           // each round runs every leg once on fresh topics
	StallTimeout time.Duration // a leg that makes no progress for this long fails
	KeepTopics   bool
}

func defaultOptions() Options {
	return Options{
		Records: 300_000, Rounds: 3, RecordSize: 1024, Codec: "none", Acks: "all",
		Linger: 10 * time.Millisecond, BatchBytes: 1 << 20, Partitions: 4, Producers: 1,
		FetchPartitionBytes: 1 << 20, Gateway: true, Direct: true,
		IggyUsername: "iggy", IggyPassword: "iggy", IggyStream: "kafka",
		StallTimeout: 30 * time.Second, TopicFlush: durability.Write, LatencyDuration: 5 * time.Second,
	}
}

// errUsage marks a flag error; the message has been printed with the usage.
var errUsage = errors.New("usage")

// parseOptions reads flags. --help prints the usage and returns flag.ErrHelp.
func parseOptions(args []string, stderr io.Writer) (*Options, error) {
	o := defaultOptions()
	fs := flag.NewFlagSet("iggy-gateway-load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: iggy-gateway-load [flags]\n\nCompares produce and consume through the gateway with direct Iggy access (docs/PERFORMANCE.md).\n\nFlags:\n")
		fs.PrintDefaults()
	}
	fs.IntVar(&o.Records, "records", o.Records, "records per leg and round")
	fs.IntVar(&o.Rounds, "rounds", o.Rounds, "rounds; each runs every leg once, and the report gives the median")
	fs.IntVar(&o.RecordSize, "record-size", o.RecordSize, "bytes per record value (at least 12)")
	fs.StringVar(&o.Codec, "codec", o.Codec, "producer compression: none, gzip, snappy, lz4 or zstd")
	fs.StringVar(&o.Acks, "acks", o.Acks, "producer acks: all, 1 or 0 (1 and 0 disable idempotent writes)")
	fs.DurationVar(&o.Linger, "linger", o.Linger, "producer linger")
	fs.IntVar(&o.BatchBytes, "batch-max-bytes", o.BatchBytes, "producer batch size limit in bytes")
	fs.IntVar(&o.Partitions, "partitions", o.Partitions, "partitions of each test topic")
	fs.IntVar(&o.Producers, "producers", o.Producers, "concurrent producer clients (and direct writers)")
	fs.IntVar(&o.FetchPartitionBytes, "fetch-max-partition-bytes", o.FetchPartitionBytes, "consumer bytes per partition and fetch (direct polls use the same)")
	fs.IntVar(&o.DirectBatchRecords, "direct-batch-records", 0, "records per direct send (0: the batch sizes the gateway leg's producer cut)")
	fs.BoolVar(&o.IdempotenceOffLeg, "idempotence-off-leg", false, "also produce through the gateway with franz-go's idempotent writes off (same gateway, a topic of its own) and print the idempotence on/off produce ratio; needs --acks all")
	legs := fs.String("legs", "gateway,direct", "legs to run: gateway, direct or both")
	fs.StringVar(&o.IggyAddr, "iggy-addr", "", "Iggy TCP address (default: an in-memory server started in-process)")
	fs.StringVar(&o.IggyUsername, "iggy-username", o.IggyUsername, "Iggy user (also the bridge account of a started gateway)")
	fs.StringVar(&o.IggyPassword, "iggy-password", o.IggyPassword, "Iggy password")
	fs.StringVar(&o.IggyStream, "iggy-stream", o.IggyStream, "Iggy stream the gateway maps Kafka topics to (its IGGY_KAFKA_IGGY_STREAM)")
	fs.StringVar(&o.GatewayAddr, "gateway-addr", "", "Kafka address of a running gateway (default: build and start one)")
	fs.IntVar(&o.GatewayPID, "gateway-pid", 0, "process id of the gateway at --gateway-addr, for its CPU and RSS figures")
	fs.StringVar(&o.GatewayBin, "gateway-bin", "", "gateway binary to start instead of building ./cmd/iggy-gateway-kafka")
	fs.Func("gateway-env", "extra IGGY_KAFKA_NAME=value setting for the started gateway (repeatable)", func(s string) error {
		if !strings.HasPrefix(s, "IGGY_KAFKA_") || !strings.Contains(s, "=") {
			return errors.New("want IGGY_KAFKA_NAME=value")
		}
		o.GatewayEnv = append(o.GatewayEnv, s)
		return nil
	})
	fs.StringVar(&o.KafkaAddr, "kafka-addr", "", "also run the franz-go legs against the Kafka broker at this address (topics created through its admin API)")
	fs.IntVar(&o.KafkaPID, "kafka-pid", 0, "process id of the broker at --kafka-addr, for its CPU and RSS figures")
	fs.IntVar(&o.IggyPID, "iggy-pid", 0, "process id of the Iggy server at --iggy-addr, for its CPU in the gateway and direct legs")
	fs.StringVar(&o.ProfileDir, "profile-dir", "", "write CPU profiles of the started gateway's produce and consume legs to this directory")
	fs.Float64Var(&o.Rate, "rate", 0, "records/s of the rate-limited latency legs (0: half of the lowest produce rate of the round)")
	fs.DurationVar(&o.LatencyDuration, "latency-duration", o.LatencyDuration, "how long the rate-limited latency legs produce (0: no latency legs)")
	fs.IntVar(&o.RebalanceMembers, "rebalance-members", 0, "add the rebalance legs: a consumer group of this many members joins, is half replaced and loses one member while a producer writes; time to stable and records processed twice, gateway and --kafka-addr (0: no rebalance legs; at least 2)")
	fs.DurationVar(&o.StallTimeout, "stall-timeout", o.StallTimeout, "fail a leg that makes no progress for this long")
	fs.BoolVar(&o.KeepTopics, "keep-topics", false, "do not delete the test topics at the end")
	fs.Func("topic-flush", "flush mode of the test topics: write (the gateway's default), fsync or iggy-default (docs/DURABILITY.md)", func(s string) (err error) {
		o.TopicFlush, err = durability.Parse(s)
		return err
	})
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, errUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "unexpected argument %q\n", fs.Arg(0))
		return nil, errUsage
	}
	var err error
	if o.Gateway, o.Direct, err = parseLegs(*legs); err == nil {
		err = o.validate()
	}
	if err != nil {
		fmt.Fprintf(stderr, "iggy-gateway-load: %v\n", err)
		return nil, errUsage
	}
	return &o, nil
}

func parseLegs(s string) (gateway, direct bool, err error) {
	for _, l := range strings.Split(s, ",") {
		switch strings.TrimSpace(l) {
		case "gateway":
			gateway = true
		case "direct":
			direct = true
		default:
			return false, false, fmt.Errorf("--legs: unknown leg %q (want gateway, direct or gateway,direct)", l)
		}
	}
	return gateway, direct, nil
}

func (o *Options) validate() error {
	switch {
	case o.Records < 1:
		return errors.New("--records must be at least 1")
	case o.Rounds < 1:
		return errors.New("--rounds must be at least 1")
	case o.RecordSize < valueHeaderSize:
		return fmt.Errorf("--record-size must be at least %d (sequence number and checksum)", valueHeaderSize)
	case o.Partitions < 1 || o.Partitions > 1000:
		return errors.New("--partitions must be 1..1000")
	case o.Producers < 1:
		return errors.New("--producers must be at least 1")
	case o.BatchBytes < 1 || o.FetchPartitionBytes < 1:
		return errors.New("--batch-max-bytes and --fetch-max-partition-bytes must be positive")
	case o.IdempotenceOffLeg && (!o.Gateway || (o.Acks != "all" && o.Acks != "-1")):
		return errors.New("--idempotence-off-leg needs the gateway leg and --acks all (other acks are never idempotent)")
	case o.RebalanceMembers == 1 || o.RebalanceMembers < 0:
		return errors.New("--rebalance-members must be 0 (none) or at least 2")
	case o.DirectBatchRecords < 0:
		return errors.New("--direct-batch-records must not be negative")
	case o.Rate < 0 || o.LatencyDuration < 0:
		return errors.New("--rate and --latency-duration must not be negative")
	case o.StallTimeout <= 0:
		return errors.New("--stall-timeout must be positive")
	case o.GatewayPID != 0 && o.GatewayAddr == "":
		return errors.New("--gateway-pid needs --gateway-addr")
	case o.IggyPID != 0 && o.IggyAddr == "":
		return errors.New("--iggy-pid needs --iggy-addr (the in-memory server runs in this process)")
	case o.KafkaPID != 0 && o.KafkaAddr == "":
		return errors.New("--kafka-pid needs --kafka-addr")
	case o.ProfileDir != "" && o.GatewayAddr != "":
		return errors.New("--profile-dir needs a gateway started by the tool (no --gateway-addr)")
	case o.GatewayAddr == "" && o.GatewayBin != "" && o.ProfileDir != "":
		return errors.New("--profile-dir builds the gateway with its profiling hook; drop --gateway-bin")
	}
	if _, err := o.compression(); err != nil {
		return err
	}
	if _, err := o.acks(); err != nil {
		return err
	}
	return nil
}

func (o *Options) compression() (kgo.CompressionCodec, error) {
	switch o.Codec {
	case "none":
		return kgo.NoCompression(), nil
	case "gzip":
		return kgo.GzipCompression(), nil
	case "snappy":
		return kgo.SnappyCompression(), nil
	case "lz4":
		return kgo.Lz4Compression(), nil
	case "zstd":
		return kgo.ZstdCompression(), nil
	}
	return kgo.CompressionCodec{}, fmt.Errorf("--codec %q: want none, gzip, snappy, lz4 or zstd", o.Codec)
}

func (o *Options) acks() (kgo.Acks, error) {
	switch o.Acks {
	case "all", "-1":
		return kgo.AllISRAcks(), nil
	case "1":
		return kgo.LeaderAck(), nil
	case "0":
		return kgo.NoAck(), nil
	}
	return kgo.Acks{}, fmt.Errorf("--acks %q: want all, 1 or 0", o.Acks)
}

// producerOpts are the franz-go options the flags select.
func (o *Options) producerOpts() []kgo.Opt {
	codec, _ := o.compression()
	acks, _ := o.acks()
	opts := []kgo.Opt{
		kgo.ProducerBatchCompression(codec), kgo.RequiredAcks(acks),
		kgo.ProducerLinger(o.Linger), kgo.ProducerBatchMaxBytes(int32(min(o.BatchBytes, 1<<30))),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
	}
	if acks != kgo.AllISRAcks() { // franz-go's idempotent writes need acks=all
		opts = append(opts, kgo.DisableIdempotentWrite())
	}
	return opts
}
