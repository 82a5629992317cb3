// Shared by the perf tools (libzmq's perf/ command lines, on zeromq.js's promise API): the
// arguments, and the process's CPU time (user + sys of every thread: Node's and libzmq's
// I/O threads) over the timed span.
"use strict"

const zmq = require("zeromq")

function args(usage) {
  const a = process.argv.slice(2)
  if (a.length !== 3) {
    console.error(`usage: ${usage}`)
    process.exit(2)
  }
  return [a[0], Number(a[1]), Number(a[2])]
}

/** Starts a span; `end()` gives [seconds elapsed, CPU nanoseconds used]. */
function span() {
  const t0 = process.hrtime.bigint(), c0 = process.cpuUsage()
  return () => {
    const c = process.cpuUsage(c0)
    return [Number(process.hrtime.bigint() - t0) / 1e9, (c.user + c.system) * 1000]
  }
}

module.exports = {zmq, args, span}
