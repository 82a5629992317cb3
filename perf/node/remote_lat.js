// libzmq's remote_lat on zeromq.js: REQ connected, times roundtrip-count request/replies.
//   node remote_lat.js <connect-to> <message-size> <roundtrip-count>
"use strict"

const {zmq, args, span} = require("./common")

async function main() {
  const [connectTo, size, count] = args("remote_lat <connect-to> <message-size> <roundtrip-count>")
  const sock = new zmq.Request()
  sock.connect(connectTo)
  const body = Buffer.alloc(size, 1)
  const end = span()
  for (let i = 0; i < count; i++) {
    await sock.send(body)
    const [m] = await sock.receive()
    if (m.length !== size) throw new Error(`message of incorrect size received: ${m.length}`)
  }
  const [secs, cpu] = end()
  console.log(`message size: ${size} [B]`)
  console.log(`roundtrip count: ${count}`)
  console.log(`average latency: ${((secs * 1e6) / (count * 2)).toFixed(3)} [us]`)
  console.log(`cpu per roundtrip: ${(cpu / count).toFixed(1)} [ns]`)
  sock.close()
}

main().catch(err => {
  console.error(err)
  process.exit(1)
})
