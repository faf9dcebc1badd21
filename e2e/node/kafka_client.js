// kafkajs client for the end-to-end suite (internal/e2e).
//
// Each command performs client operations against --bootstrap and prints what the client saw
// as one JSON document on stdout; the Go test asserts it. Errors exit non-zero.
'use strict'

const fs = require('fs')
const { Kafka, CompressionTypes, CompressionCodecs, ConfigResourceTypes, logLevel } = require('kafkajs')
const SnappyCodec = require('kafkajs-snappy')

CompressionCodecs[CompressionTypes.Snappy] = SnappyCodec

const TIMEOUT_MS = 30000
const codecs = { none: CompressionTypes.None, gzip: CompressionTypes.GZIP, snappy: CompressionTypes.Snappy }

function parseArgs (argv) {
  const args = { command: argv[0], topics: [] }
  for (let i = 1; i < argv.length; i += 2) {
    const name = argv[i].replace(/^--/, '')
    if (name === 'topics') args.topics.push(argv[i + 1])
    else args[name] = argv[i + 1]
  }
  return args
}

function readStdin () {
  return new Promise((resolve, reject) => {
    let data = ''
    process.stdin.setEncoding('utf8')
    process.stdin.on('data', (chunk) => { data += chunk })
    process.stdin.on('end', () => resolve(data))
    process.stdin.on('error', reject)
  })
}

// Record headers travel as an ordered list of [name, value]; kafkajs takes an object whose
// values are arrays for repeated names.
function toKafkajsHeaders (list) {
  const headers = {}
  for (const [k, v] of list || []) {
    if (k in headers) headers[k] = [].concat(headers[k], v)
    else headers[k] = v
  }
  return headers
}

function fromKafkajsHeaders (headers) {
  const list = []
  for (const [k, v] of Object.entries(headers || {})) {
    for (const one of [].concat(v)) list.push([k, one === null || one === undefined ? null : one.toString()])
  }
  return list
}

function text (buf) {
  return buf === null || buf === undefined ? null : buf.toString()
}

async function metadata (kafka, args) {
  const admin = kafka.admin()
  await admin.connect()
  try {
    const cluster = await admin.describeCluster()
    const md = await admin.fetchTopicMetadata({ topics: args.topics })
    return {
      brokers: cluster.brokers.map((b) => ({ id: b.nodeId, host: b.host, port: b.port })),
      topics: Object.fromEntries(md.topics.map((t) => [t.name,
        t.partitions.sort((a, b) => a.partitionId - b.partitionId).map((p) => ({ partition: p.partitionId, leader: p.leader }))]))
    }
  } finally {
    await admin.disconnect()
  }
}

async function produce (kafka, args) {
  const records = JSON.parse(await readStdin())
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 })
  await producer.connect()
  try {
    const result = await producer.send({
      topic: args.topic,
      acks: -1,
      compression: codecs[args.codec],
      messages: records.map((r) => ({
        partition: r.partition || 0,
        key: r.key,
        value: r.value,
        headers: toKafkajsHeaders(r.headers),
        timestamp: r.timestamp ? String(r.timestamp) : undefined
      }))
    })
    return { base_offsets: result.map((r) => Number(r.baseOffset)) }
  } finally {
    await producer.disconnect()
  }
}

async function groupConsume (kafka, args) {
  const want = Number(args.count)
  const consumer = kafka.consumer({ groupId: args.group, sessionTimeout: 10000, heartbeatInterval: 1000 })
  await consumer.connect()
  const records = []
  await consumer.subscribe({ topics: [args.topic], fromBeginning: true })
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`read ${records.length} of ${want} records in ${TIMEOUT_MS} ms`)), TIMEOUT_MS)
    consumer.run({
      autoCommit: false,
      eachMessage: async ({ partition, message }) => {
        records.push({
          partition,
          offset: Number(message.offset),
          key: text(message.key),
          value: text(message.value),
          headers: fromKafkajsHeaders(message.headers),
          timestamp: Number(message.timestamp)
        })
        await consumer.commitOffsets([{ topic: args.topic, partition, offset: String(Number(message.offset) + 1) }])
        if (records.length === want) {
          clearTimeout(timer)
          resolve()
        }
      }
    }).catch(reject)
  })
  await consumer.disconnect()
  const admin = kafka.admin()
  await admin.connect()
  try {
    const offsets = await admin.fetchOffsets({ groupId: args.group, topics: [args.topic] })
    const committed = {}
    for (const p of offsets[0].partitions) committed[p.partition] = Number(p.offset)
    return { records, committed }
  } finally {
    await admin.disconnect()
  }
}

async function adminOps (kafka, args) {
  const admin = kafka.admin()
  await admin.connect()
  const out = {}
  const partitionCount = async () => {
    const md = await admin.fetchTopicMetadata({ topics: [args.topic] })
    return md.topics[0].partitions.length
  }
  const retention = async () => {
    const d = await admin.describeConfigs({
      includeSynonyms: false,
      resources: [{ type: ConfigResourceTypes.TOPIC, name: args.topic, configNames: ['retention.ms'] }]
    })
    return d.resources[0].configEntries.find((e) => e.configName === 'retention.ms').configValue
  }
  try {
    out.created = await admin.createTopics({
      waitForLeaders: true,
      topics: [{ topic: args.topic, numPartitions: 2, replicationFactor: 1, configEntries: [{ name: 'retention.ms', value: '86400000' }] }]
    })
    out.created_again = await admin.createTopics({ topics: [{ topic: args.topic, numPartitions: 2, replicationFactor: 1 }] })
    out.partitions_after_create = await partitionCount()
    await admin.createPartitions({ topicPartitions: [{ topic: args.topic, count: 4 }] })
    const deadline = Date.now() + 20000
    while (await partitionCount() !== 4 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200))
    out.partitions_after_create_partitions = await partitionCount()
    out.retention_ms_at_create = await retention()
    await admin.alterConfigs({
      validateOnly: false,
      resources: [{ type: ConfigResourceTypes.TOPIC, name: args.topic, configEntries: [{ name: 'retention.ms', value: '3600000' }] }]
    })
    out.retention_ms_after_alter = await retention()
    await admin.deleteTopics({ topics: [args.topic], timeout: TIMEOUT_MS })
    while ((await admin.listTopics()).includes(args.topic) && Date.now() < deadline + 20000) await new Promise((resolve) => setTimeout(resolve, 200))
    out.listed_after_delete = (await admin.listTopics()).includes(args.topic)
    return out
  } finally {
    await admin.disconnect()
  }
}

// security turns --ca FILE (TLS trusting that CA), --cert FILE and --key FILE (a client
// certificate) and --sasl-username/--sasl-password (SASL PLAIN) into kafkajs options, as
// docs/SECURITY.md shows them.
function security (args) {
  const opts = {}
  if (args.ca) opts.ssl = { ca: [fs.readFileSync(args.ca, 'utf-8')] }
  if (args.cert) opts.ssl = Object.assign(opts.ssl || {}, { cert: fs.readFileSync(args.cert, 'utf-8'), key: fs.readFileSync(args.key, 'utf-8') })
  if (args['sasl-username']) opts.sasl = { mechanism: 'plain', username: args['sasl-username'], password: args['sasl-password'] }
  return opts
}

async function main () {
  const args = parseArgs(process.argv.slice(2))
  const kafka = new Kafka({ clientId: 'iggygw-e2e-kafkajs', brokers: [args.bootstrap], logLevel: logLevel.WARN, retry: { retries: 3 }, ...security(args) })
  const commands = { metadata, produce, 'group-consume': groupConsume, admin: adminOps }
  if (!(args.command in commands)) throw new Error(`unknown command ${args.command}`)
  const result = await commands[args.command](kafka, args)
  process.stdout.write(JSON.stringify(result) + '\n')
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
