package kafkacode

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy"
)

// Every way Iggy can be unavailable answers each API family's one retriable code, and that
// code is one Kafka clients retry on.
func TestKafkaCodeStorageUnavailable(t *testing.T) {
	unavailable := map[string]error{
		"unreachable":            &iggy.ConnError{Op: "dial", Err: errors.New("connection refused")},
		"connection lost":        &iggy.ConnError{Op: "get_topic", Err: errors.New("EOF")},
		"login rejected":         &iggy.Error{Code: iggy.CodeInvalidCredentials, Op: "login"},
		"login unauthorized":     &iggy.Error{Code: iggy.CodeUnauthorized, Op: "login"},
		"user inactive":          &iggy.Error{Code: iggy.CodeUserInactive, Op: "login"},
		"wrapped login rejected": fmt.Errorf("offsets: %w", &iggy.Error{Code: iggy.CodeInvalidCredentials, Op: "login"}),
		"not accepted":           &iggy.Error{Code: iggy.CodeTransientNotAccepted, Op: "poll_messages"},
		"client gone":            &iggy.ConnError{Op: "poll_messages", Err: context.Canceled, Sent: true},
	}
	want := map[Family]int16{
		Topics:         kerr.LeaderNotAvailable.Code,
		PartitionRead:  kerr.NotLeaderForPartition.Code,
		PartitionWrite: kerr.NotLeaderForPartition.Code,
		Groups:         kerr.CoordinatorLoadInProgress.Code,
	}
	for name, err := range unavailable {
		for f, code := range want {
			if name == "client gone" && f == PartitionWrite {
				continue // a send that may have landed: see TestKafkaCode
			}
			if got := Of(err, f); got != code {
				t.Errorf("%s in family %d: got %s, want %s", name, f, kerr.ErrorForCode(got), kerr.ErrorForCode(code))
			}
			if !kerr.IsRetriable(kerr.ErrorForCode(code)) {
				t.Errorf("family %d answers unavailable storage with %s, which clients do not retry", f, kerr.ErrorForCode(code))
			}
		}
	}
}

func TestKafkaCode(t *testing.T) {
	sentThenLost := &iggy.ConnError{Op: "send_messages", Err: errors.New("broken pipe"), Sent: true}
	timeout := &iggy.ConnError{Op: "get_topic", Err: context.DeadlineExceeded}
	for _, tc := range []struct {
		name string
		err  error
		f    Family
		want int16
	}{
		{"nil", nil, PartitionRead, 0},
		{"topic missing", &iggy.Error{Code: iggy.CodeTopicNameNotFound}, Topics, kerr.UnknownTopicOrPartition.Code},
		{"partition missing", &iggy.Error{Code: iggy.CodePartitionNotFound}, PartitionRead, kerr.UnknownTopicOrPartition.Code},
		{"permission missing", &iggy.Error{Code: iggy.CodeUnauthorized, Op: "poll_messages"}, PartitionRead, kerr.TopicAuthorizationFailed.Code},
		{"permission missing, metadata", &iggy.Error{Code: iggy.CodeUnauthorized, Op: "get_topic"}, Topics, kerr.TopicAuthorizationFailed.Code},
		{"send maybe applied", sentThenLost, PartitionWrite, kerr.RequestTimedOut.Code},
		{"read lost after sending", sentThenLost, PartitionRead, kerr.NotLeaderForPartition.Code},
		{"write timeout", timeout, PartitionWrite, kerr.RequestTimedOut.Code},
		{"metadata timeout", timeout, Topics, kerr.RequestTimedOut.Code},
		{"read timeout", timeout, PartitionRead, kerr.RequestTimedOut.Code},
		{"group lookup timeout", timeout, Groups, kerr.CoordinatorLoadInProgress.Code},
		{"not committed", &iggy.Error{Code: iggy.CodeTransientNotCommitted}, PartitionWrite, kerr.RequestTimedOut.Code},
		{"payload too big", &iggy.Error{Code: iggy.CodeTooBigMessagePayload}, PartitionWrite, kerr.MessageTooLarge.Code},
		{"empty payload", &iggy.Error{Code: iggy.CodeEmptyMessagePayload}, PartitionWrite, kerr.InvalidRecord.Code},
		{"bad checksum", &iggy.Error{Code: iggy.CodeInvalidBatchChecksum}, PartitionWrite, kerr.CorruptMessage.Code},
		{"unknown refusal of a read", &iggy.Error{Code: iggy.CodeInvalidOffset}, PartitionRead, kerr.UnknownServerError.Code},
		{"unknown refusal of a lookup", &iggy.Error{Code: iggy.CodeInvalidOffset}, Topics, kerr.LeaderNotAvailable.Code},
	} {
		if got := Of(tc.err, tc.f); got != tc.want {
			t.Errorf("%s: got %s, want %s", tc.name, kerr.ErrorForCode(got), kerr.ErrorForCode(tc.want))
		}
	}
}
