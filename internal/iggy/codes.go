package iggy

import (
	"strconv"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy/wire"
)

var codeNames = map[uint32]string{
	CodeError:                            "error",
	CodeInvalidCommand:                   "invalid_command",
	CodeInvalidFormat:                    "invalid_format",
	CodeFeatureUnavailable:               "feature_unavailable",
	CodeInvalidIdentifier:                "invalid_identifier",
	CodeDisconnected:                     "disconnected",
	CodeResourceNotFound:                 "resource_not_found",
	CodeStaleClient:                      "stale_client",
	CodeUnauthenticated:                  "unauthenticated",
	CodeUnauthorized:                     "unauthorized",
	CodeInvalidCredentials:               "invalid_credentials",
	CodeInvalidUsername:                  "invalid_username",
	CodeInvalidPassword:                  "invalid_password",
	CodeUserAlreadyExists:                "user_already_exists",
	CodeUserInactive:                     "user_inactive",
	CodePersonalAccessTokenAlreadyExists: "personal_access_token_already_exists",
	CodeInvalidPersonalAccessToken:       "invalid_personal_access_token",
	CodePersonalAccessTokenExpired:       "personal_access_token_expired",
	CodeTransientNotCommitted:            "transient_not_committed",
	CodeTransientNotAccepted:             "transient_not_accepted",
	CodeNotConnected:                     "not_connected",
	CodeStreamIDNotFound:                 "stream_id_not_found",
	CodeStreamNameNotFound:               "stream_name_not_found",
	CodeStreamNameAlreadyExists:          "stream_name_already_exists",
	CodeInvalidStreamName:                "invalid_stream_name",
	CodeInvalidTopicSize:                 "invalid_topic_size",
	CodeTopicIDNotFound:                  "topic_id_not_found",
	CodeTopicNameNotFound:                "topic_name_not_found",
	CodeTopicNameAlreadyExists:           "topic_name_already_exists",
	CodeInvalidTopicName:                 "invalid_topic_name",
	CodeTooManyPartitions:                "too_many_partitions",
	CodeInvalidPartitionsCount:           "invalid_partitions_count",
	CodePartitionNotFound:                "partition_not_found",
	CodeNoPartitions:                     "no_partitions",
	CodeConsumerOffsetNotFound:           "consumer_offset_not_found",
	CodeTooBigUserHeaders:                "too_big_user_headers",
	CodeTooBigMessagePayload:             "too_big_message_payload",
	CodeEmptyMessagePayload:              "empty_message_payload",
	CodeInvalidMessagePayloadLength:      "invalid_message_payload_length",
	CodeInvalidMessageChecksum:           "invalid_message_checksum",
	CodeInvalidMessageTimestampDelta:     "invalid_message_timestamp_delta",
	CodeInvalidBatchChecksum:             "invalid_batch_checksum",
	CodeInvalidHeaderKind:                "invalid_header_kind",
	CodeUnsupportedOptionKey:             "unsupported_option_key",
	CodeInvalidOptionValue:               "invalid_option_value",
	CodeOptionsBlockTooLarge:             "options_block_too_large",
	CodeInvalidOffset:                    "invalid_offset",
	CodeConsumerGroupIDNotFound:          "consumer_group_id_not_found",
	CodeConsumerGroupNameNotFound:        "consumer_group_name_not_found",
	CodeConsumerGroupNameAlreadyExists:   "consumer_group_name_already_exists",
	CodeConsumerGroupMemberNotFound:      "consumer_group_member_not_found",
	CodeConsumerGroupPartitionNotOwned:   "consumer_group_partition_not_owned",
	CodeIncompatibleProtocolVersion:      "incompatible_protocol_version",
}

// CodeName returns a short snake_case name for an Iggy error code ("code_N" when unknown).
func CodeName(code uint32) string {
	if n, ok := codeNames[code]; ok {
		return n
	}
	return "code_" + strconv.FormatUint(uint64(code), 10)
}

var commandNames = map[uint32]string{
	wire.CodePing: "ping", wire.CodeGetClusterMetadata: "get_cluster_metadata", wire.CodeGetMe: "get_me",
	wire.CodeGetUser: "get_user", wire.CodeGetUsers: "get_users", wire.CodeCreateUser: "create_user",
	wire.CodeDeleteUser: "delete_user", wire.CodeUpdatePermissions: "update_permissions",
	wire.CodeChangePassword: "change_password", wire.CodeLogoutUser: "logout", wire.CodeLoginRegister: "login",
	wire.CodeLoginRegisterPAT: "login_with_token", wire.CodeGetPATs: "get_personal_access_tokens",
	wire.CodeCreatePAT: "create_personal_access_token", wire.CodeDeletePAT: "delete_personal_access_token",
	wire.CodePollMessages: "poll_messages", wire.CodeSendMessages: "send_messages",
	wire.CodeGetConsumerOffset: "get_consumer_offset", wire.CodeStoreConsumerOffset: "store_consumer_offset",
	wire.CodeDeleteConsumerOffset: "delete_consumer_offset", wire.CodeGetStream: "get_stream",
	wire.CodeGetStreams: "get_streams", wire.CodeCreateStream: "create_stream", wire.CodeDeleteStream: "delete_stream",
	wire.CodeGetTopic: "get_topic", wire.CodeGetTopics: "get_topics", wire.CodeCreateTopic: "create_topic",
	wire.CodeDeleteTopic: "delete_topic", wire.CodeUpdateTopic: "update_topic", wire.CodePurgeTopic: "purge_topic",
	wire.CodeCreatePartitions: "create_partitions", wire.CodeDeletePartitions: "delete_partitions",
	wire.CodeGetConsumerGroup: "get_consumer_group", wire.CodeGetConsumerGroups: "get_consumer_groups",
	wire.CodeCreateConsumerGroup: "create_consumer_group", wire.CodeDeleteConsumerGroup: "delete_consumer_group",
	wire.CodeJoinConsumerGroup: "join_consumer_group", wire.CodeLeaveConsumerGroup: "leave_consumer_group",
	wire.CodeSyncConsumerGroup: "sync_consumer_group",
}

// commandName names a command code for errors, logs and metrics.
func commandName(code uint32) string {
	if n, ok := commandNames[code]; ok {
		return n
	}
	return "command_" + strconv.FormatUint(uint64(code), 10)
}
