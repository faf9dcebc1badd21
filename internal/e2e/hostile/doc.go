// Package hostile proves the gateway's limits (docs/LIMITS.md) with the real binary: its
// tests build the gateway, start it with a small request memory budget and send each class of
// hostile but well-formed traffic at a size that would cost gigabytes without the limits,
// while a health client from another address keeps asking for ApiVersions. They assert the
// gateway's peak resident memory (VmHWM) stays within the budget plus a baseline, the health
// requests are answered within a bound, and the process survives. E2E_HOSTILE_SCALE
// multiplies the sizes for heavier runs.
package hostile
