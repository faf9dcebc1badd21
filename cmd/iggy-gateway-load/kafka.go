package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// kafkaBroker is the Kafka broker of the "kafka" legs (--kafka-addr) and its round's topic,
// created and deleted through its admin API.
type kafkaBroker struct {
	addr  string
	cl    *kgo.Client
	admin *kadm.Client
	topic string // this round's, "" between rounds
}

func dialKafka(ctx context.Context, addr string) (*kafkaBroker, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return nil, err
	}
	if err := cl.Ping(ctx); err != nil {
		cl.Close()
		return nil, fmt.Errorf("kafka broker at %s: %w", addr, err)
	}
	return &kafkaBroker{addr: addr, cl: cl, admin: kadm.NewClient(cl)}, nil
}

// createTopic creates name with one replica.
func (k *kafkaBroker) createTopic(ctx context.Context, name string, partitions int) error {
	resp, err := k.admin.CreateTopic(ctx, int32(partitions), 1, nil, name)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		return fmt.Errorf("create topic %q on the Kafka broker: %w", name, err)
	}
	k.topic = name
	return nil
}

func (k *kafkaBroker) deleteTopic(ctx context.Context) error {
	if k.topic == "" {
		return nil
	}
	resp, err := k.admin.DeleteTopic(ctx, k.topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		err = fmt.Errorf("delete topic %q on the Kafka broker: %w", k.topic, err)
	}
	k.topic = ""
	return err
}

// endOffsets returns the high watermark of each of the topic's partitions.
func (k *kafkaBroker) endOffsets(ctx context.Context, partitions int) ([]int64, error) {
	listed, err := k.admin.ListEndOffsets(ctx, k.topic)
	if err == nil {
		err = listed.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("end offsets of %q on the Kafka broker: %w", k.topic, err)
	}
	ends := make([]int64, partitions)
	found := 0
	listed.Each(func(o kadm.ListedOffset) {
		if int(o.Partition) < partitions {
			ends[o.Partition] = o.Offset
			found++
		}
	})
	if found != partitions {
		return nil, errors.New("the Kafka broker did not list every partition's end offset")
	}
	return ends, nil
}

func (k *kafkaBroker) close() { k.cl.Close() }
