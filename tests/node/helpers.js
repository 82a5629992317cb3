// Shared by the Node tests: the zeromq.js under test (found through NODE_PATH, see
// zeromq-build.sh), endpoints, and waits that end on an event or a deadline, never a sleep.
"use strict"

const assert = require("node:assert/strict")
const zmq = require("zeromq")

// Sockets get LINGER 0 unless a test sets it, so a test that leaves a message queued to a
// peer that never comes does not hold the process at exit (as zeromq.js's own tests do).
zmq.context.blocky = false

const protos = ["tcp", "ipc", "inproc"]
let seq = 0

/** A fresh endpoint to bind: tcp picks a port (read it back with lastEndpoint). */
function endpoint(proto) {
  seq++
  switch (proto) {
    case "tcp":
      return "tcp://127.0.0.1:*"
    case "ipc":
      return `ipc:///tmp/oxmq-node-${process.pid}-${seq}`
    default:
      return `inproc://node-${process.pid}-${seq}`
  }
}

/** Binds `a` on a fresh endpoint of `proto`, connects each of `others`; returns the endpoint. */
async function bindConnect(proto, a, ...others) {
  await a.bind(endpoint(proto))
  const ep = a.lastEndpoint
  for (const b of others) b.connect(ep)
  return ep
}

/** `promise`, or a rejection naming `what` after `ms`. */
function deadline(promise, ms, what) {
  let timer
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: nothing after ${ms} ms`)), ms)
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

/** Rejects with a zeromq.js error whose code (and message, if given) are as expected. */
async function rejects(promise, code, message) {
  await assert.rejects(promise, err => {
    assert.equal(err.code, code, `code of ${err.message}`)
    if (message !== undefined) assert.equal(err.message, message)
    assert.equal(typeof err.errno, "number")
    return true
  })
}

/** Closes every socket given, ignoring ones already closed. */
function closeAll(...socks) {
  for (const s of socks) if (s && !s.closed) s.close()
}

/**
 * PUB cannot tell when a SUB has joined: publishes `probe` every 10 ms until `sub` has one
 * (bounded by a deadline), so what is sent after that is not lost to the late joiner.
 */
async function waitJoined(pub, sub, probe = "probe", ms = 5000) {
  let got = false
  const recv = sub.receive().then(m => {
    got = true
    return m
  })
  const start = Date.now()
  while (!got) {
    if (Date.now() - start > ms) throw new Error("the subscriber never joined")
    await pub.send(probe)
    await Promise.race([recv, new Promise(r => setTimeout(r, 10))])
  }
  return recv
}

module.exports = {assert, zmq, protos, endpoint, bindConnect, deadline, rejects, closeAll, waitJoined}
