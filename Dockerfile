# Container image of the gateway: a static binary on an empty base (docs/OPERATIONS.md).
#
#   docker build -t iggy-gateway-kafka \
#     --build-arg VERSION=$(git describe --tags --always) --build-arg REVISION=$(git rev-parse HEAD) .
#
# Dockerfile.scratch builds the same image from binaries built on the host, for machines that
# cannot pull the Go image (scripts/container-check.sh uses it).
ARG GO_VERSION=1.26

FROM golang:${GO_VERSION}-bookworm AS build
ARG VERSION=devel
ARG REVISION=unknown
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY cmd ./cmd
COPY internal ./internal
ENV CGO_ENABLED=0
RUN pkg=github.com/iggygw/iggy-gateway-kafka/internal/buildinfo && \
    go build -trimpath -buildvcs=false \
      -ldflags "-s -w -X ${pkg}.version=${VERSION} -X ${pkg}.commit=${REVISION}" \
      -o /out/ ./cmd/iggy-gateway-kafka ./cmd/iggy-healthcheck

FROM scratch
ARG VERSION=devel
ARG REVISION=unknown
ARG SOURCE=https://github.com/iggygw/iggy-gateway-kafka
LABEL org.opencontainers.image.title="iggy-gateway-kafka" \
      org.opencontainers.image.description="Kafka wire protocol gateway storing data in Apache Iggy" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.source="${SOURCE}" \
      org.opencontainers.image.licenses="Apache-2.0"
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /out/iggy-gateway-kafka /out/iggy-healthcheck /
# Listen on every interface inside the container; clients outside it need IGGY_KAFKA_ADVERTISED_HOST.
ENV IGGY_KAFKA_BIND_ADDR=0.0.0.0:9093 \
    IGGY_KAFKA_METRICS_ADDR=127.0.0.1:9094
# Metrics stay inside the container (they name every topic and consumer group): set
# IGGY_KAFKA_METRICS_ADDR=0.0.0.0:9094, with IGGY_KAFKA_METRICS_BEARER_TOKEN or
# _USERNAME/_PASSWORD, to scrape from outside (docs/METRICS.md, "Access").
EXPOSE 9093
# nobody:nogroup; the gateway writes nothing to disk.
USER 65534:65534
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 \
  CMD ["/iggy-healthcheck", "http://127.0.0.1:9094/readyz"]
ENTRYPOINT ["/iggy-gateway-kafka"]
