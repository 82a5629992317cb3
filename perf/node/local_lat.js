// libzmq's local_lat on zeromq.js: REP bound, echoes roundtrip-count messages.
//   node local_lat.js <bind-to> <message-size> <roundtrip-count>
"use strict"

const {zmq, args, span} = require("./common")

async function main() {
  const [bindTo, size, count] = args("local_lat <bind-to> <message-size> <roundtrip-count>")
  const sock = new zmq.Reply()
  await sock.bind(bindTo)
  let end
  for (let i = 0; i < count; i++) {
    const [m] = await sock.receive()
    if (i === 0) end = span()
    if (m.length !== size) throw new Error(`message of incorrect size received: ${m.length}`)
    await sock.send(m)
  }
  const [, cpu] = end()
  console.log(`echo cpu per roundtrip: ${(cpu / count).toFixed(1)} [ns]`)
  sock.close()
}

main().catch(err => {
  console.error(err)
  process.exit(1)
})
