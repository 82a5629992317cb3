// libzmq's remote_thr on zeromq.js: PUSH connected, sends count messages of one buffer.
//   node remote_thr.js <connect-to> <message-size> <message-count>
"use strict"

const {zmq, args, span} = require("./common")

async function main() {
  const [connectTo, size, count] = args("remote_thr <connect-to> <message-size> <message-count>")
  const sock = new zmq.Push()
  sock.connect(connectTo)
  const body = Buffer.alloc(size, 1)
  const end = span()
  for (let i = 0; i < count; i++) await sock.send(body)
  const [, cpu] = end()
  console.log(`sender cpu per message: ${(cpu / count).toFixed(1)} [ns]`)
  sock.close() // LINGER -1: the context delivers the rest before the process ends
}

main().catch(err => {
  console.error(err)
  process.exit(1)
})
