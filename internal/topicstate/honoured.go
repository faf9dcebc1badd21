package topicstate

// Names and values of the stored configs the data plane honours on every write
// (internal/dataplane): the topic-config handlers store them, the data plane reads them.
const (
	ConfigMaxMessageBytes = "max.message.bytes"
	ConfigTimestampType   = "message.timestamp.type"
	TimestampAppendTime   = "LogAppendTime"
)
