// Drives llmlat's store with the official JavaScript client, as a user's app would, and prints
// what it saw as one JSON object. Usage: node check.mjs URL PASSWORD (NODE_PATH: the client's node_modules)
import { createRequire } from 'node:module'
const require = createRequire(process.env.CLIENT_DIR + '/')
const { createClient } = require('@clickhouse/client')

const [url, password] = process.argv.slice(2)
const out = {}
const client = createClient({ url, username: 'default', password, compression: { request: true, response: true } })
const plain = createClient({ url, username: 'default', password, compression: { request: false, response: false } })
const wrong = createClient({ url, username: 'default', password: 'guess' })

try {
  out.ping = (await client.ping()).success
  await client.command({ query: 'CREATE TABLE IF NOT EXISTS js_rows (id UInt32, name String) ENGINE = MergeTree ORDER BY id' })
  await client.insert({ table: 'js_rows', values: Array.from({ length: 1000 }, (_, i) => ({ id: i, name: 'row ' + i })), format: 'JSONEachRow' })
  const rows = await (await client.query({ query: 'SELECT count() AS n, max(id) AS top FROM js_rows', format: 'JSONEachRow' })).json()
  out.count = Number(rows[0].n)
  out.top = Number(rows[0].top)

  // two clients at once, each with its own parameter value
  const ask = (c, v) => c.query({ query: 'SELECT {v:String} AS v, sleep(0.05) AS s', query_params: { v }, format: 'JSONEachRow' })
    .then(r => r.json()).then(r => r[0].v)
  out.params = await Promise.all([ask(client, 'alpha'), ask(plain, 'beta'), ask(client, 'gamma'), ask(plain, 'delta')])

  // a session keeps its SET and temporary table; a query outside it does not see them
  const session = createClient({ url, username: 'default', password, session_id: 'js-session-1' })
  await session.command({ query: 'SET max_threads = 1' })
  await session.command({ query: 'CREATE TEMPORARY TABLE tmp (x UInt8)' })
  await session.insert({ table: 'tmp', values: [{ x: 7 }], format: 'JSONEachRow' })
  out.sessionThreads = (await (await session.query({ query: "SELECT getSetting('max_threads') AS t", format: 'JSONEachRow' })).json())[0].t
  out.sessionTmp = (await (await session.query({ query: 'SELECT sum(x) AS s FROM tmp', format: 'JSONEachRow' })).json())[0].s
  out.outsideThreads = (await (await plain.query({ query: "SELECT getSetting('max_threads') AS t", format: 'JSONEachRow' })).json())[0].t
  await session.close()

  // settings for one query only
  out.oneQuerySetting = (await (await client.query({ query: "SELECT getSetting('max_block_size') AS b", format: 'JSONEachRow',
    clickhouse_settings: { max_block_size: '1234' } })).json())[0].b
  out.nextQuerySetting = (await (await client.query({ query: "SELECT getSetting('max_block_size') AS b", format: 'JSONEachRow' })).json())[0].b

  // a large result through the compressed answer, as a stream of rows
  const stream = (await client.query({ query: 'SELECT number FROM numbers(200000)', format: 'JSONEachRow' })).stream()
  let streamed = 0
  for await (const batch of stream) streamed += batch.length
  out.streamed = streamed

  try {
    await client.query({ query: 'SELEC 1' })
  } catch (e) {
    out.error = { code: e.code, type: e.type }
  }
  // the host's files stay out of reach through this client too
  try {
    await client.query({ query: "SELECT * FROM file('/etc/passwd', 'LineAsString')" })
    out.hostFile = { code: 'none' }
  } catch (e) {
    out.hostFile = { code: e.code, type: e.type }
  }
  try {
    await client.command({ query: "SYSTEM SHUTDOWN" })
    out.shutdown = { code: 'none' }
  } catch (e) {
    out.shutdown = { code: e.code, type: e.type }
  }
  out.afterShutdown = await (await client.query({ query: 'SELECT 42 AS x', format: 'JSONEachRow' })).json()
  try {
    await wrong.query({ query: 'SELECT 1' })
  } catch (e) {
    out.wrongPassword = { code: e.code, type: e.type }
  }
} catch (e) {
  out.failure = String(e && e.stack || e)
} finally {
  await client.close()
  await plain.close()
  await wrong.close()
}
console.log(JSON.stringify(out))
