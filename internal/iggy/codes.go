package iggy

import "strconv"

var codeNames = map[uint32]string{
	CodeError:                          "error",
	CodeInvalidCommand:                 "invalid_command",
	CodeInvalidFormat:                  "invalid_format",
	CodeFeatureUnavailable:             "feature_unavailable",
	CodeInvalidIdentifier:              "invalid_identifier",
	CodeDisconnected:                   "disconnected",
	CodeStaleClient:                    "stale_client",
	CodeUnauthenticated:                "unauthenticated",
	CodeUnauthorized:                   "unauthorized",
	CodeInvalidCredentials:             "invalid_credentials",
	CodeInvalidUsername:                "invalid_username",
	CodeInvalidPassword:                "invalid_password",
	CodeUserAlreadyExists:              "user_already_exists",
	CodeUserInactive:                   "user_inactive",
	CodeInvalidPersonalAccessToken:     "invalid_personal_access_token",
	CodePersonalAccessTokenExpired:     "personal_access_token_expired",
	CodeTransientNotCommitted:          "transient_not_committed",
	CodeTransientNotAccepted:           "transient_not_accepted",
	CodeNotConnected:                   "not_connected",
	CodeStreamIDNotFound:               "stream_id_not_found",
	CodeStreamNameNotFound:             "stream_name_not_found",
	CodeStreamNameAlreadyExists:        "stream_name_already_exists",
	CodeInvalidStreamName:              "invalid_stream_name",
	CodeInvalidTopicSize:               "invalid_topic_size",
	CodeTopicIDNotFound:                "topic_id_not_found",
	CodeTopicNameNotFound:              "topic_name_not_found",
	CodeTopicNameAlreadyExists:         "topic_name_already_exists",
	CodeInvalidTopicName:               "invalid_topic_name",
	CodeTooManyPartitions:              "too_many_partitions",
	CodeInvalidPartitionsCount:         "invalid_partitions_count",
	CodePartitionNotFound:              "partition_not_found",
	CodeNoPartitions:                   "no_partitions",
	CodeConsumerOffsetNotFound:         "consumer_offset_not_found",
	CodeTooBigUserHeaders:              "too_big_user_headers",
	CodeTooBigMessagePayload:           "too_big_message_payload",
	CodeEmptyMessagePayload:            "empty_message_payload",
	CodeInvalidMessagePayloadLength:    "invalid_message_payload_length",
	CodeInvalidMessageChecksum:         "invalid_message_checksum",
	CodeInvalidMessageTimestampDelta:   "invalid_message_timestamp_delta",
	CodeInvalidBatchChecksum:           "invalid_batch_checksum",
	CodeInvalidHeaderKind:              "invalid_header_kind",
	CodeUnsupportedOptionKey:           "unsupported_option_key",
	CodeInvalidOptionValue:             "invalid_option_value",
	CodeOptionsBlockTooLarge:           "options_block_too_large",
	CodeInvalidOffset:                  "invalid_offset",
	CodeConsumerGroupIDNotFound:        "consumer_group_id_not_found",
	CodeConsumerGroupNameNotFound:      "consumer_group_name_not_found",
	CodeConsumerGroupNameAlreadyExists: "consumer_group_name_already_exists",
	CodeConsumerGroupMemberNotFound:    "consumer_group_member_not_found",
	CodeConsumerGroupPartitionNotOwned: "consumer_group_partition_not_owned",
	CodeIncompatibleProtocolVersion:    "incompatible_protocol_version",
}

// CodeName returns a short snake_case name for an Iggy error code ("code_N" when unknown).
func CodeName(code uint32) string {
	if n, ok := codeNames[code]; ok {
		return n
	}
	return "code_" + strconv.FormatUint(uint64(code), 10)
}
