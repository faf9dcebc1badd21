// Package authorize decides what each Kafka request of an identified principal may do
// (docs/SECURITY.md, "Authorization"). A connection that authenticated (SASL, or a client
// certificate mapped to an Iggy user) has every request checked against that user's Iggy
// permissions (internal/authz snapshots) before its handler runs; anonymous connections
// (PLAINTEXT, SSL without a client certificate) act as the bridge account, unchecked, and
// never reach this package.
//
// Each API key has one rule (topics.go, groups.go, data.go, acls.go); the group rules also
// read the operator's group ACLs (internal/groupacl), since Iggy has no permission on Kafka
// groups. A rule narrows the request to what the user may do, runs the handler on the rest,
// and answers the refused parts with Kafka's authorization errors (29 topic, 30 group, 31
// cluster), as a Kafka broker does. Data still travels over the bridge account's connections.
// The same grants and group ACLs, rendered as Kafka ACLs (aclbindings.go), answer
// DescribeAcls.
//
// internal/broker calls Checker.Serve from its dispatch for every request of an identified
// principal; the rules know kmsg requests and responses, Iggy permissions and the topic map,
// and nothing of sockets or storage.
package authorize
