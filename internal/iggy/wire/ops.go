package wire

// Command codes (codes.rs). For replicated commands the code does not travel on the wire: the
// operation byte identifies the command.
const (
	CodePing                 = 1
	CodeGetStats             = 10
	CodeGetSnapshot          = 11
	CodeGetClusterMetadata   = 12
	CodeDescribeOptions      = 13
	CodeGetMe                = 20
	CodeGetClient            = 21
	CodeGetClients           = 22
	CodeGetUser              = 31
	CodeGetUsers             = 32
	CodeCreateUser           = 33
	CodeDeleteUser           = 34
	CodeUpdateUser           = 35
	CodeUpdatePermissions    = 36
	CodeChangePassword       = 37
	CodeLoginUser            = 38 // legacy, refused by 0.11.0 servers
	CodeLogoutUser           = 39
	CodeLoginRegister        = 40
	CodeGetPATs              = 41
	CodeCreatePAT            = 42
	CodeDeletePAT            = 43
	CodeLoginWithPAT         = 44 // legacy, refused by 0.11.0 servers
	CodeLoginRegisterPAT     = 45
	CodePollMessages         = 100
	CodeSendMessages         = 101
	CodeFlushUnsavedBuffer   = 102
	CodeGetConsumerOffset    = 120
	CodeStoreConsumerOffset  = 121
	CodeDeleteConsumerOffset = 122
	CodeGetStream            = 200
	CodeGetStreams           = 201
	CodeCreateStream         = 202
	CodeDeleteStream         = 203
	CodeUpdateStream         = 204
	CodePurgeStream          = 205
	CodeGetTopic             = 300
	CodeGetTopics            = 301
	CodeCreateTopic          = 302
	CodeDeleteTopic          = 303
	CodeUpdateTopic          = 304
	CodePurgeTopic           = 305
	CodeCreatePartitions     = 402
	CodeDeletePartitions     = 403
	CodeDeleteSegments       = 503
	CodeGetConsumerGroup     = 600
	CodeGetConsumerGroups    = 601
	CodeCreateConsumerGroup  = 602
	CodeDeleteConsumerGroup  = 603
	CodeJoinConsumerGroup    = 604
	CodeLeaveConsumerGroup   = 605
	CodeSyncConsumerGroup    = 606
)

// Operation bytes (consensus/operation.rs).
const (
	OpRegister             uint8 = 1
	OpNonReplicated        uint8 = 2
	OpLogout               uint8 = 3
	OpCreateStream         uint8 = 128
	OpUpdateStream         uint8 = 129
	OpDeleteStream         uint8 = 130
	OpPurgeStream          uint8 = 131
	OpCreateTopic          uint8 = 132
	OpUpdateTopic          uint8 = 133
	OpDeleteTopic          uint8 = 134
	OpPurgeTopic           uint8 = 135
	OpCreatePartitions     uint8 = 136
	OpDeletePartitions     uint8 = 137
	OpDeleteSegments       uint8 = 138
	OpCreateConsumerGroup  uint8 = 139
	OpDeleteConsumerGroup  uint8 = 140
	OpCreateUser           uint8 = 141
	OpUpdateUser           uint8 = 142
	OpDeleteUser           uint8 = 143
	OpChangePassword       uint8 = 144
	OpUpdatePermissions    uint8 = 145
	OpCreatePAT            uint8 = 146
	OpDeletePAT            uint8 = 147
	OpJoinConsumerGroup    uint8 = 148
	OpLeaveConsumerGroup   uint8 = 149
	OpSendMessages         uint8 = 160
	OpStoreConsumerOffset  uint8 = 161
	OpDeleteConsumerOffset uint8 = 162
)

// replicated pairs each replicated command code with its operation.
var replicated = [...]struct {
	code uint32
	op   uint8
}{
	{CodeCreateStream, OpCreateStream},
	{CodeUpdateStream, OpUpdateStream},
	{CodeDeleteStream, OpDeleteStream},
	{CodePurgeStream, OpPurgeStream},
	{CodeCreateTopic, OpCreateTopic},
	{CodeUpdateTopic, OpUpdateTopic},
	{CodeDeleteTopic, OpDeleteTopic},
	{CodePurgeTopic, OpPurgeTopic},
	{CodeCreatePartitions, OpCreatePartitions},
	{CodeDeletePartitions, OpDeletePartitions},
	{CodeDeleteSegments, OpDeleteSegments},
	{CodeCreateConsumerGroup, OpCreateConsumerGroup},
	{CodeDeleteConsumerGroup, OpDeleteConsumerGroup},
	{CodeCreateUser, OpCreateUser},
	{CodeUpdateUser, OpUpdateUser},
	{CodeDeleteUser, OpDeleteUser},
	{CodeChangePassword, OpChangePassword},
	{CodeUpdatePermissions, OpUpdatePermissions},
	{CodeCreatePAT, OpCreatePAT},
	{CodeDeletePAT, OpDeletePAT},
	{CodeJoinConsumerGroup, OpJoinConsumerGroup},
	{CodeLeaveConsumerGroup, OpLeaveConsumerGroup},
	{CodeSendMessages, OpSendMessages},
	{CodeStoreConsumerOffset, OpStoreConsumerOffset},
	{CodeDeleteConsumerOffset, OpDeleteConsumerOffset},
}

// OperationForCode returns the operation byte a command travels under: Register for the login
// codes, Logout, the replicated operation of a replicated command, and NonReplicated (with the
// code in the header) for everything else.
func OperationForCode(code uint32) uint8 {
	switch code {
	case CodeLoginRegister, CodeLoginRegisterPAT:
		return OpRegister
	case CodeLogoutUser:
		return OpLogout
	}
	for _, r := range replicated {
		if r.code == code {
			return r.op
		}
	}
	return OpNonReplicated
}

// CodeForOperation returns the command code of a replicated operation, for a server that
// receives it. Register, Logout and NonReplicated are not single commands and report false.
func CodeForOperation(op uint8) (uint32, bool) {
	for _, r := range replicated {
		if r.op == op {
			return r.code, true
		}
	}
	return 0, false
}

// ClientOperation reports whether clients may send op: Register, NonReplicated, Logout, the
// metadata plane (128..149) and the partition plane (160..162).
func ClientOperation(op uint8) bool {
	return op == OpRegister || op == OpNonReplicated || op == OpLogout ||
		IsMetadataOp(op) || IsPartitionOp(op)
}

// IsMetadataOp reports whether op is a metadata-plane operation (128..149). The server
// deduplicates these by (client, request), so clients advance the request counter after each.
func IsMetadataOp(op uint8) bool { return op >= OpCreateStream && op <= OpLeaveConsumerGroup }

// IsPartitionOp reports whether op is a partition-plane operation (160..162).
func IsPartitionOp(op uint8) bool { return op >= OpSendMessages && op <= OpDeleteConsumerOffset }

// AdvancesRequest reports whether a request with operation op consumes its request number, so
// the next request uses the following one (metadata ops and Logout do; reads, pings and
// partition ops reuse the current number).
func AdvancesRequest(op uint8) bool { return IsMetadataOp(op) || op == OpLogout }

// IsResultFramed reports whether a successful reply to op starts with a result section:
// every metadata operation except DeleteSegments, and the consumer-offset writes. Register
// replies are result-framed whenever their body is non-empty, which callers check themselves.
func IsResultFramed(op uint8) bool {
	return (IsMetadataOp(op) && op != OpDeleteSegments) ||
		op == OpStoreConsumerOffset || op == OpDeleteConsumerOffset
}
