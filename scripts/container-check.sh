#!/usr/bin/env bash
# Proves the container packaging (Dockerfile.scratch, Dockerfile.memserver, deploy/compose*.yaml):
#   1. installs Debian's docker.io and docker-compose when missing, and starts a private dockerd
#      when no daemon answers (stopped again on exit, with whatever it left mounted);
#   2. builds the binaries on the host (CGO_ENABLED=0) and the FROM-scratch images from them;
#   3. checks that the image and the binary report the same --version, and the image labels;
#   4. runs the gateway image on host networking in dev mode and produces/consumes through it
#      with kcat;
#   5. brings up deploy/compose.yaml with the memserver override (the real Iggy image cannot be
#      pulled here) and runs the README quick start against it: create a topic with the Kafka
#      tools, produce with kcat, consume with the Kafka console consumer and kcat;
#   6. brings up deploy/compose.three.yaml (three gateways, one memserver) and checks that every
#      gateway lists all three, that kafka-topics --create works through each, and produces and
#      consumes through each gateway with kcat bootstrapped with all three;
#   7. checks deploy/compose.cluster.yaml (two gateways, three Iggy nodes) as docker-compose
#      renders it: its configuration only. A replicated cluster needs the real Iggy image,
#      which cannot be pulled here, and the in-memory server cannot stand in for three nodes
#      in three containers; internal/e2e runs the gateway against the in-memory cluster instead
#      (TestIggyCluster*).
# Publishes only to loopback. Every wait is bounded; a failure names the step and shows logs.
# Needs root (or sudo) for apt-get and dockerd. .ci/run calls it after `make test`, which
# installed kcat and the Kafka tools (scripts/install-test-deps.sh).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
if [ "$(id -u)" -eq 0 ]; then sudo=""; else sudo="sudo"; fi

start=$(date +%s)
work="$repo/.cache/container-check"
run_id="iggygw-check-$$"
gateway_image="iggy-gateway-kafka:check"
memserver_image="iggy-memserver:check"
step() { printf '==> [%3ds] %s\n' $(($(date +%s) - start)) "$*"; }
fail() {
  printf 'container-check FAILED: %s\n' "$*" >&2
  exit 1
}

# --- cleanup: everything this script started, in reverse order -----------------------------
dockerd_pid=""
had_docker0=""
compose_files=(-f deploy/compose.yaml -f deploy/compose.memserver.yaml)
three_files=(-f deploy/compose.three.yaml -f deploy/compose.memserver.yaml)
cleanup() {
  local rc=$?
  set +e
  if [ -n "${DOCKER_HOST:-}" ] || docker info >/dev/null 2>&1; then
    docker rm -f "$run_id-gw" >/dev/null 2>&1
    if [ -n "${compose_up:-}" ]; then
      timeout 60 docker-compose -p "$run_id" "${compose_files[@]}" down -v --remove-orphans >/dev/null 2>&1
    fi
    if [ -n "${three_up:-}" ]; then
      timeout 60 docker-compose -p "$run_id-three" "${three_files[@]}" down -v --remove-orphans >/dev/null 2>&1
    fi
  fi
  if [ -n "$dockerd_pid" ]; then
    kill "$dockerd_pid" 2>/dev/null
    for _ in $(seq 1 50); do kill -0 "$dockerd_pid" 2>/dev/null || break; sleep 0.2; done
    kill -9 "$dockerd_pid" 2>/dev/null
    wait "$dockerd_pid" 2>/dev/null
    # dockerd leaves overlay, shm and netns mounts behind when it is killed: unmount them,
    # deepest first, then delete its state.
    findmnt -rn -o TARGET | grep -F "$work/docker" | sort -r | while read -r m; do
      $sudo umount -l "$m" 2>/dev/null
    done
    $sudo rm -rf "$work/docker"
    # ...and the default bridge it created, unless it was there before.
    if [ -z "$had_docker0" ] && ip link show docker0 >/dev/null 2>&1; then
      $sudo ip link delete docker0 2>/dev/null
    fi
  fi
  if [ "$rc" -ne 0 ] && [ -f "$work/dockerd.log" ] && [ -n "$dockerd_pid" ]; then
    echo "--- last lines of dockerd's log ($work/dockerd.log)"
    tail -20 "$work/dockerd.log"
  fi
  echo "==> container-check finished in $(($(date +%s) - start))s with status $rc"
}
trap cleanup EXIT

# wait_for SECONDS WHAT COMMAND...: retries COMMAND every 0.5s until it succeeds or time is up.
wait_for() {
  local secs=$1 what=$2
  shift 2
  local deadline=$(($(date +%s) + secs))
  until "$@" >/dev/null 2>&1; do
    [ "$(date +%s)" -lt "$deadline" ] || return 1
    sleep 0.5
  done
  echo "    $what at $(($(date +%s) - start))s"
}

# free_port: a TCP port nothing listens on (tests of other packages use fixed 90xx ports).
free_port() {
  local p
  for _ in $(seq 1 50); do
    p=$((20000 + RANDOM % 20000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
      echo "$p"
      return
    fi
  done
  fail "no free TCP port found"
}

# --- 1. tools and daemon --------------------------------------------------------------------
step "Docker tools (Debian docker.io, docker-compose) and kcat"
missing=()
command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
command -v docker-compose >/dev/null 2>&1 || missing+=(docker-compose)
command -v kcat >/dev/null 2>&1 || missing+=(kcat)
if [ ${#missing[@]} -gt 0 ]; then
  echo "    installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
[ -x e2e/bin/kafka-topics.sh ] && compgen -G "e2e/java/lib/kafka-tools-*.jar" >/dev/null ||
  fail "the Kafka tools are missing (e2e/java/lib): run scripts/install-test-deps.sh first"

step "Docker daemon"
if docker info >/dev/null 2>&1; then
  echo "    using the running daemon"
else
  # A private daemon: own socket, state and bridge, so it cannot disturb a system daemon.
  mkdir -p "$work"
  $sudo rm -rf "$work/docker"
  mkdir -p "$work/docker"
  had_docker0=$(ip link show docker0 2>/dev/null || true)
  export DOCKER_HOST="unix://$work/docker/docker.sock"
  $sudo dockerd --host "$DOCKER_HOST" --data-root "$work/docker/data" --exec-root "$work/docker/exec" \
    --pidfile "$work/docker/dockerd.pid" >"$work/dockerd.log" 2>&1 &
  dockerd_pid=$!
  if ! wait_for 60 "dockerd answers" docker info; then
    kill -0 "$dockerd_pid" 2>/dev/null || fail "dockerd exited at startup (log above): containers cannot run on this machine"
    fail "dockerd did not answer within 60s"
  fi
fi

# --- 2. binaries and images -----------------------------------------------------------------
version=$(git describe --tags --always --dirty 2>/dev/null || echo devel)
revision=$(git rev-parse HEAD 2>/dev/null || echo unknown)
ctx="$work/context"
step "host binaries (CGO_ENABLED=0, version $version, revision $revision)"
rm -rf "$ctx"
mkdir -p "$ctx"
pkg=github.com/iggygw/iggy-gateway-kafka/internal/buildinfo
CGO_ENABLED=0 GOOS=linux go build -trimpath -buildvcs=false \
  -ldflags "-s -w -X $pkg.version=$version -X $pkg.commit=$revision" \
  -o "$ctx/" ./cmd/iggy-gateway-kafka ./cmd/iggy-healthcheck ./cmd/iggy-memserver
cp /etc/ssl/certs/ca-certificates.crt "$ctx/" || fail "no CA bundle at /etc/ssl/certs/ca-certificates.crt (Debian ca-certificates)"

step "FROM-scratch images $gateway_image and $memserver_image"
build() {
  # The classic builder: it needs no buildx plugin and pulls nothing for FROM scratch.
  DOCKER_BUILDKIT=0 docker build -q -f "$1" -t "$2" \
    --build-arg VERSION="$version" --build-arg REVISION="$revision" "$ctx" >"$work/build.log" 2>&1 || {
    cat "$work/build.log"
    fail "docker build -f $1"
  }
}
build Dockerfile.scratch "$gateway_image"
build Dockerfile.memserver "$memserver_image"

# --- 3. versions and labels -----------------------------------------------------------------
step "image and binary report the same version"
host_version=$("$ctx/iggy-gateway-kafka" --version)
image_version=$(timeout 30 docker run --rm "$gateway_image" --version) || fail "docker run $gateway_image --version"
echo "    $image_version"
[ "$host_version" = "$image_version" ] || fail "the image says '$image_version', the binary '$host_version'"
case "$image_version" in
  *" $version (commit $revision, go"*) ;;
  *) fail "--version '$image_version' does not name version $version and commit $revision" ;;
esac
for label in version:"$version" revision:"$revision"; do
  got=$(docker inspect -f "{{index .Config.Labels \"org.opencontainers.image.${label%%:*}\"}}" "$gateway_image")
  [ "$got" = "${label#*:}" ] || fail "label org.opencontainers.image.${label%%:*} is '$got', want '${label#*:}'"
done
[ "$(docker inspect -f '{{.Config.User}}' "$gateway_image")" = "65534:65534" ] || fail "the image does not run as a non-root user"

# produce_consume BOOTSTRAP TOPIC [unordered]: 20 keyed records in with kcat, the same 20 out
# with kcat, in the same order unless "unordered" (a topic of several partitions).
produce_consume() {
  local bootstrap=$1 topic=$2 order=${3:-} want got
  want=$(for i in $(seq 1 20); do echo "k$i:value $i of $topic"; done)
  echo "$want" | timeout 30 kcat -b "$bootstrap" -P -t "$topic" -K: -X message.timeout.ms=20000 ||
    fail "kcat could not produce to $topic through $bootstrap"
  got=$(timeout 30 kcat -b "$bootstrap" -C -t "$topic" -o beginning -c 20 -e -f '%k:%s\n') ||
    fail "kcat could not consume $topic through $bootstrap"
  if [ "$order" = unordered ]; then
    got=$(echo "$got" | sort -V)
  fi
  [ "$got" = "$want" ] || fail "consumed records of $topic differ from those produced:
--- produced
$want
--- consumed
$got"
  echo "    20 records produced and consumed back through $bootstrap ($topic)"
}

# --- 4. the gateway image on host networking, dev mode ----------------------------------------
kafka_port=$(free_port)
metrics_port=$(free_port)
dev_iggy_port=$(free_port)
step "gateway image on host networking, dev mode (Kafka 127.0.0.1:$kafka_port)"
# A memory limit, where this dockerd can set one: the gateway must size its tail cache and the
# Go runtime's soft limit from the container's limit, not from the machine's RAM.
memory_args=()
if [ "$(docker info --format '{{.MemoryLimit}}' 2>/dev/null)" = true ]; then
  memory_args=(--memory 512m)
fi
docker run -d --name "$run_id-gw" --network host "${memory_args[@]}" \
  -e IGGY_KAFKA_DEV=true -e IGGY_KAFKA_AUTO_CREATE_TOPICS_ENABLED=true \
  -e IGGY_KAFKA_BIND_ADDR="127.0.0.1:$kafka_port" \
  -e IGGY_KAFKA_METRICS_ADDR="127.0.0.1:$metrics_port" \
  -e IGGY_KAFKA_DEV_IGGY_ADDR="127.0.0.1:$dev_iggy_port" \
  "$gateway_image" >/dev/null || fail "docker run $gateway_image"
if ! wait_for 60 "gateway ready" "$ctx/iggy-healthcheck" "http://127.0.0.1:$metrics_port/readyz"; then
  docker logs "$run_id-gw" 2>&1 | tail -30
  fail "the gateway container did not become ready within 60s (its log is above)"
fi
produce_consume "127.0.0.1:$kafka_port" container-check
if [ ${#memory_args[@]} -gt 0 ]; then
  gw_log=$(docker logs "$run_id-gw" 2>&1)
  for want in 'msg="tail cache sized from memory" bytes=134217728' 'msg="Go runtime memory limit set" limit_bytes=483183820 from="90% of the cgroup limit'; do
    grep -qF "$want" <<<"$gw_log" || fail "under a 512 MiB container limit the gateway's log lacks: $want
$(grep -i memory <<<"$gw_log")"
  done
  echo "    under a 512 MiB limit: tail cache 128 MiB, Go runtime soft limit 90% of the limit"
else
  echo "    this dockerd cannot limit memory: the memory-derived sizes were not checked"
fi
docker rm -f "$run_id-gw" >/dev/null

# --- 5. Compose with the memserver override: the README quick start -------------------------
export KAFKA_PORT METRICS_PORT IGGY_PORT GATEWAY_IMAGE="$gateway_image" MEMSERVER_IMAGE="$memserver_image"
KAFKA_PORT=$(free_port)
METRICS_PORT=$(free_port)
IGGY_PORT=$(free_port)
step "Compose stack $run_id (deploy/compose.yaml + compose.memserver.yaml, Kafka 127.0.0.1:$KAFKA_PORT)"
compose() { timeout 120 docker-compose -p "$run_id" "${compose_files[@]}" "$@"; }
compose_up=1
compose up -d --no-build >"$work/compose-up.log" 2>&1 || {
  cat "$work/compose-up.log"
  fail "docker-compose up"
}
# healthy STACK SERVICE: whether the service of the Compose stack run by STACK (compose or
# three) reports healthy.
healthy() {
  local id
  id=$("$1" ps -q "$2") && [ -n "$id" ] &&
    [ "$(docker inspect -f '{{.State.Health.Status}}' "$id")" = healthy ]
}
for svc in iggy gateway; do
  if ! wait_for 90 "$svc healthy" healthy compose "$svc"; then
    compose ps
    compose logs --tail 30
    fail "Compose service $svc did not become healthy within 90s (logs above)"
  fi
done
"$ctx/iggy-healthcheck" "http://127.0.0.1:$METRICS_PORT/readyz" || fail "/readyz is not published on 127.0.0.1:$METRICS_PORT"
for port in "$KAFKA_PORT" "$METRICS_PORT" "$IGGY_PORT"; do
  published=$(docker port "$(compose ps -q gateway)" 2>/dev/null; docker port "$(compose ps -q iggy)" 2>/dev/null)
  echo "$published" | grep -q ":$port\$" || fail "port $port is not published"
  if echo "$published" | grep ":$port\$" | grep -qv ' -> 127\.0\.0\.1:'; then
    fail "port $port is published beyond loopback: $published"
  fi
done
echo "    every port published on 127.0.0.1 only"

bootstrap="127.0.0.1:$KAFKA_PORT"
for topic in orders compose-check; do
  timeout 60 e2e/bin/kafka-topics.sh --bootstrap-server "$bootstrap" --create --topic "$topic" \
    --partitions 1 --replication-factor 1 || fail "kafka-topics.sh --create $topic through the Compose gateway"
done
echo 'k1:hello' | timeout 30 kcat -b "$bootstrap" -P -t orders -K: || fail "kcat produce to orders"
got=$(timeout 60 e2e/bin/kafka-console-consumer.sh --bootstrap-server "$bootstrap" --topic orders \
  --from-beginning --max-messages 1 --timeout-ms 30000 2>/dev/null) || fail "kafka-console-consumer.sh on orders"
[ "$got" = hello ] || fail "kafka-console-consumer.sh read '$got', want 'hello'"
got=$(timeout 30 kcat -b "$bootstrap" -C -t orders -o beginning -c 1 -e -f 'key=%k value=%s offset=%o\n') ||
  fail "kcat consume orders"
[ "$got" = "key=k1 value=hello offset=0" ] || fail "kcat read '$got', want 'key=k1 value=hello offset=0'"
echo "    quick start: topic created, 'k1:hello' produced, read back by the console consumer and kcat"
produce_consume "$bootstrap" compose-check

step "Compose stack down"
compose down -v --remove-orphans >/dev/null 2>&1 || fail "docker-compose down"
compose_up=""

# --- 6. Three gateways over one memserver (deploy/compose.three.yaml) ------------------------
export KAFKA_PORT_1 KAFKA_PORT_2 KAFKA_PORT_3 METRICS_PORT_1 METRICS_PORT_2 METRICS_PORT_3
KAFKA_PORT_1=$(free_port)
KAFKA_PORT_2=$(free_port)
KAFKA_PORT_3=$(free_port)
METRICS_PORT_1=$(free_port)
METRICS_PORT_2=$(free_port)
METRICS_PORT_3=$(free_port)
IGGY_PORT=$(free_port)
gateways=("127.0.0.1:$KAFKA_PORT_1" "127.0.0.1:$KAFKA_PORT_2" "127.0.0.1:$KAFKA_PORT_3")
all=$(IFS=,; echo "${gateways[*]}")
step "Compose stack $run_id-three (deploy/compose.three.yaml + compose.memserver.yaml, Kafka $all)"
three() { timeout 120 docker-compose -p "$run_id-three" "${three_files[@]}" "$@"; }
three_up=1
three up -d --no-build >"$work/compose-three-up.log" 2>&1 || {
  cat "$work/compose-three-up.log"
  fail "docker-compose up (three gateways)"
}
for svc in iggy gateway-1 gateway-2 gateway-3; do
  if ! wait_for 90 "$svc healthy" healthy three "$svc"; then
    three ps
    three logs --tail 30
    fail "Compose service $svc did not become healthy within 90s (logs above)"
  fi
done
# lists_three GATEWAY: the gateway's Metadata lists the three gateways.
lists_three() { timeout 10 kcat -b "$1" -L -t __none 2>/dev/null | grep -q '^ 3 brokers:'; }
for g in "${gateways[@]}"; do
  wait_for 30 "$g lists three brokers" lists_three "$g" || {
    timeout 10 kcat -b "$g" -L -t __none
    fail "the gateway at $g does not list three brokers"
  }
done
for i in 0 1 2; do
  # Only one gateway is the controller: the others' NOT_CONTROLLER sends the tool there.
  timeout 60 e2e/bin/kafka-topics.sh --bootstrap-server "${gateways[$i]}" --create --topic "three-$i" \
    --partitions 3 --replication-factor 1 || fail "kafka-topics.sh --create three-$i through ${gateways[$i]}"
  produce_consume "$all" "three-$i" unordered
done

step "Compose stack $run_id-three down"
three down -v --remove-orphans >/dev/null 2>&1 || fail "docker-compose down (three gateways)"
three_up=""
# --- 7. Two gateways in front of three Iggy nodes (deploy/compose.cluster.yaml): configuration --
step "deploy/compose.cluster.yaml: configuration (docker-compose config)"
cluster_config=$(timeout 60 docker-compose -p "$run_id-cluster" -f deploy/compose.cluster.yaml config 2>&1) || {
  echo "$cluster_config"
  fail "docker-compose config of deploy/compose.cluster.yaml"
}
# want TEXT: the rendered configuration contains TEXT.
want() { grep -qF -- "$1" <<<"$cluster_config" || fail "deploy/compose.cluster.yaml as rendered lacks: $1"; }
for i in 0 1 2; do
  # Each node's command, --replica-id i: two list items on consecutive lines.
  tr '\n' '~' <<<"$cluster_config" | grep -qF -- "- --replica-id~    - '$i'" ||
    fail "deploy/compose.cluster.yaml as rendered has no node started with --replica-id $i"
  want "IGGY_CLUSTER_NODES_${i}_REPLICA_ID: '$i'"
  want "ipv4_address: 172.29.90.1$i"
done
want 'IGGY_CLUSTER_ENABLED: "true"'
want "IGGY_KAFKA_IGGY_ADDR: 172.29.90.10:8090,172.29.90.11:8090,172.29.90.12:8090"
want "IGGY_KAFKA_BROKERS: 1@127.0.0.1:${KAFKA_PORT_1:-9093},2@127.0.0.1:${KAFKA_PORT_2:-9095}"
services=$(timeout 60 docker-compose -f deploy/compose.cluster.yaml config --services | sort | tr '\n' ' ')
[ "$services" = "gateway-1 gateway-2 iggy-0 iggy-1 iggy-2 " ] || fail "deploy/compose.cluster.yaml has services $services"
echo "    three Iggy nodes (replica ids 0-2, static roster addresses), two gateways given all three"

step "container packaging checks passed"
