// Package auth establishes who a Kafka connection acts as: SASL PLAIN and OAUTHBEARER
// credentials verified by logging in to Iggy, and client certificates mapped to Iggy users by
// Kafka-style principal mapping rules. The identity ends up on the connection
// (listener.Identity); docs/SECURITY.md describes the guarantees.
package auth
