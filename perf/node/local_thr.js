// libzmq's local_thr on zeromq.js: PULL bound, times count messages after the first.
//   node local_thr.js <bind-to> <message-size> <message-count>
"use strict"

const {zmq, args, span} = require("./common")

async function main() {
  const [bindTo, size, count] = args("local_thr <bind-to> <message-size> <message-count>")
  const sock = new zmq.Pull()
  await sock.bind(bindTo)
  let [m] = await sock.receive()
  if (m.length !== size) throw new Error(`message of incorrect size received: ${m.length}`)
  const end = span()
  for (let i = 1; i < count; i++) {
    ;[m] = await sock.receive()
    if (m.length !== size) throw new Error(`message of incorrect size received: ${m.length}`)
  }
  const [secs, cpu] = end()
  const thr = (count - 1) / secs
  console.log(`message size: ${size} [B]`)
  console.log(`message count: ${count}`)
  console.log(`mean throughput: ${Math.round(thr)} [msg/s]`)
  console.log(`mean throughput: ${((thr * size * 8) / 1e6).toFixed(3)} [Mb/s]`)
  console.log(`cpu per message: ${(cpu / (count - 1)).toFixed(1)} [ns]`)
  sock.close()
}

main().catch(err => {
  console.error(err)
  process.exit(1)
})
