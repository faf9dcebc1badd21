package authorize

import "github.com/twmb/franz-go/pkg/kmsg"

// ACL requests need no permission: DescribeAcls answers only with the caller's own grants
// (Kafka asks DESCRIBE on the cluster to list everyone's ACLs; here there is nobody else's to
// see), and CreateAcls/DeleteAcls change nothing, whoever asks.
func init() {
	for _, k := range []kmsg.Key{kmsg.DescribeACLs, kmsg.CreateACLs, kmsg.DeleteACLs} {
		authorizeRules[k.Int16()] = unchecked
	}
}
