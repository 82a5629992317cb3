// zeromq.js's callback API (`zeromq/v5-compat`, the zeromq 5.x API) over tcp, ipc and
// inproc. It runs every socket through ZMQ_FD and ZMQ_EVENTS in Node's event loop with a
// send queue of its own, so its bursts are where a readiness edge the library fails to
// signal shows up as a hang.
"use strict"

const {test, describe} = require("node:test")
const {assert, protos, endpoint, deadline} = require("./helpers") // first: sets blocky
const zmq = require("zeromq/v5-compat")

const T = 20000

/** Binds `a` (callback API) on a fresh endpoint; resolves with the endpoint bound. */
function bind(a, proto) {
  const ep = endpoint(proto)
  return new Promise((resolve, reject) =>
    a.bind(ep, err => (err ? reject(err) : resolve(a.getsockopt(zmq.ZMQ_LAST_ENDPOINT)))),
  )
}

/** Resolves after `n` "message" events on `s`, with their arguments. */
function messages(s, n, what) {
  const got = []
  return deadline(
    new Promise(resolve =>
      s.on("message", (...parts) => {
        got.push(parts)
        if (got.length === n) resolve(got)
      }),
    ),
    10000,
    `${what}: ${n} messages`,
  ).catch(err => {
    throw new Error(`${err.message} (got ${got.length})`)
  })
}

function closeAll(...socks) {
  for (const s of socks) if (s && !s.closed) s.close()
}

for (const proto of protos) {
  describe(`compat ${proto}`, () => {
    test("REQ/REP: a burst of queued requests, each sent when the previous reply is in", {timeout: T}, async () => {
      const rep = zmq.socket("rep"), req = zmq.socket("req")
      rep.on("message", m => rep.send(`re:${m}`))
      try {
        const ep = await bind(rep, proto)
        req.connect(ep)
        const n = 100
        const replies = messages(req, n, "REQ")
        for (let i = 0; i < n; i++) req.send(String(i))
        const got = await replies
        got.forEach(([m], i) => assert.equal(m.toString(), `re:${i}`))
      } finally {
        closeAll(req, rep)
      }
    })

    test("DEALER/ROUTER: identities, echo of 500 messages from two dealers", {timeout: T}, async () => {
      const router = zmq.socket("router")
      const a = zmq.socket("dealer"), b = zmq.socket("dealer")
      a.setsockopt(zmq.ZMQ_IDENTITY, "A")
      b.setsockopt("identity", "B")
      router.on("message", (id, m) => router.send([id, m]))
      try {
        const ep = await bind(router, proto)
        a.connect(ep)
        b.connect(ep)
        const n = 500
        const ga = messages(a, n, "A"), gb = messages(b, n, "B")
        for (let i = 0; i < n; i++) {
          a.send(`A${i}`)
          b.send(`B${i}`)
        }
        for (const [got, who] of [[await ga, "A"], [await gb, "B"]])
          got.forEach(([m], i) => assert.equal(m.toString(), `${who}${i}`))
      } finally {
        closeAll(router, a, b)
      }
    })

    test("PUSH/PULL with HWMs of 5: 2,000 messages in order, send callbacks called", {timeout: T}, async () => {
      const pull = zmq.socket("pull"), push = zmq.socket("push")
      pull.setsockopt(zmq.ZMQ_RCVHWM, 5)
      push.setsockopt(zmq.ZMQ_SNDHWM, 5)
      try {
        const ep = await bind(pull, proto)
        push.connect(ep)
        const n = 2000
        const got = messages(pull, n, "PULL")
        let called = 0
        const sent = new Promise(resolve => {
          for (let i = 0; i < n; i++)
            push.send(String(i), 0, err => {
              assert.ifError(err)
              if (++called === n) resolve()
            })
        })
        ;(await got).forEach(([m], i) => assert.equal(m.toString(), String(i)))
        await deadline(sent, 5000, "send callbacks")
      } finally {
        closeAll(pull, push)
      }
    })

    test("PAIR: multi-part with SNDMORE, both ways", {timeout: T}, async () => {
      const a = zmq.socket("pair"), b = zmq.socket("pair")
      try {
        const ep = await bind(a, proto)
        b.connect(ep)
        const atA = messages(a, 1, "A"), atB = messages(b, 1, "B")
        b.send("one", zmq.ZMQ_SNDMORE)
        b.send("two")
        a.send(["x", "y", "z"])
        assert.deepEqual((await atA)[0].map(String), ["one", "two"])
        assert.deepEqual((await atB)[0].map(String), ["x", "y", "z"])
      } finally {
        closeAll(a, b)
      }
    })

    test("PUB/SUB and XPUB/XSUB: subscriptions", {timeout: T}, async () => {
      const xpub = zmq.socket("xpub"), sub = zmq.socket("sub"), xsub = zmq.socket("xsub")
      try {
        const ep = await bind(xpub, proto)
        const subs = messages(xpub, 2, "XPUB")
        sub.subscribe("t")
        sub.connect(ep)
        xsub.connect(ep)
        xsub.send(Buffer.from("\x01u"))
        const seen = (await subs).map(([m]) => m.toString("latin1")).sort()
        assert.deepEqual(seen, ["\x01t", "\x01u"])
        const atSub = messages(sub, 2, "SUB"), atXsub = messages(xsub, 1, "XSUB")
        for (const m of ["t1", "u1", "v1", "t2"]) xpub.send(m)
        assert.deepEqual((await atSub).map(([m]) => m.toString()), ["t1", "t2"])
        assert.deepEqual((await atXsub).map(([m]) => m.toString()), ["u1"])
      } finally {
        closeAll(xpub, sub, xsub)
      }
    })

    test("close while sends are queued and a receive waits: the send in flight is cancelled", {timeout: T}, async () => {
      const push = zmq.socket("push"), pull = zmq.socket("pull")
      push.setsockopt(zmq.ZMQ_SNDHWM, 1)
      const errors = []
      push.on("error", e => errors.push(e))
      pull.on("error", e => errors.push(e))
      try {
        push.connect(proto === "tcp" ? "tcp://127.0.0.1:1" : endpoint(proto)) // nobody there
        for (let i = 0; i < 10; i++) push.send("never")
        await bind(pull, proto)
        push.close()
        pull.close()
        assert.equal(push.closed, true)
        assert.equal(pull.closed, true)
        // The one send in flight is cancelled (an "error" event, EAGAIN, as on libzmq); the
        // receive that waited ends quietly.
        await new Promise(r => setImmediate(r))
        assert.ok(errors.length <= 1, `${errors.length} errors`)
        for (const e of errors) assert.equal(e.code, "EAGAIN")
      } finally {
        closeAll(push, pull)
      }
    })
  })
}

describe("compat errors and options", () => {
  test("ROUTER_MANDATORY to an unknown peer: the callback gets 'Host unreachable'", {timeout: T}, async () => {
    const r = zmq.socket("router")
    try {
      r.setsockopt(zmq.ZMQ_ROUTER_MANDATORY, 1)
      r.setsockopt(zmq.ZMQ_SNDTIMEO, 10)
      const err = await new Promise(resolve => r.send(["nobody", "x"], null, resolve))
      assert.equal(err.message, "Host unreachable")
      assert.equal(err.code, "EHOSTUNREACH")
    } finally {
      r.close()
    }
  })

  test("bind errors reach the callback; options read back", {timeout: T}, async () => {
    const a = zmq.socket("dealer"), b = zmq.socket("dealer")
    try {
      const ep = await bind(a, "tcp")
      const err = await new Promise(resolve => b.bind(ep, resolve))
      assert.equal(err.code, "EADDRINUSE")
      const bad = await new Promise(resolve => b.bind("foo://bar", resolve))
      assert.equal(bad.code, "EPROTONOSUPPORT")
      a.setsockopt(zmq.ZMQ_LINGER, 0)
      assert.equal(a.getsockopt(zmq.ZMQ_LINGER), 0)
      a.setsockopt(zmq.ZMQ_SNDHWM, 17)
      assert.equal(a.getsockopt(zmq.ZMQ_SNDHWM), 17)
      a.setsockopt("reconnect_ivl", 250)
      assert.equal(a.getsockopt("reconnect_ivl"), 250)
      assert.equal(a.getsockopt(zmq.ZMQ_TYPE), zmq.ZMQ_DEALER)
      zmq.Context.setMaxThreads(2) // a context in use: kept, as libzmq does
      assert.equal(zmq.Context.getMaxThreads(), 2)
      zmq.Context.setMaxThreads(1)
    } finally {
      closeAll(a, b)
    }
  })

  test("monitor: listen, accept, connect and disconnect events", {timeout: T}, async () => {
    const a = zmq.socket("dealer"), b = zmq.socket("dealer")
    try {
      a.monitor()
      b.monitor()
      const listen = new Promise(r => a.once("listen", (v, ep) => r(ep)))
      const accept = new Promise(r => a.once("accept", () => r()))
      const connect = new Promise(r => b.once("connect", () => r()))
      const disconnect = new Promise(r => a.once("disconnect", () => r()))
      const ep = await bind(a, "tcp")
      b.connect(ep)
      assert.match(await deadline(listen, 5000, "listen"), /^tcp:/)
      await deadline(Promise.all([accept, connect]), 5000, "accept, connect")
      b.close()
      await deadline(disconnect, 5000, "disconnect")
    } finally {
      closeAll(a, b)
    }
  })

  test("zmq.proxy: ROUTER/DEALER with a REP worker", {timeout: T}, async () => {
    const front = zmq.socket("router"), back = zmq.socket("dealer")
    const worker = zmq.socket("rep"), client = zmq.socket("req")
    try {
      const fe = await bind(front, "inproc"), be = await bind(back, "inproc")
      zmq.proxy(front, back)
      worker.on("message", m => worker.send(`w:${m}`))
      worker.connect(be)
      client.connect(fe)
      const got = messages(client, 10, "client")
      for (let i = 0; i < 10; i++) client.send(String(i))
      ;(await got).forEach(([m], i) => assert.equal(m.toString(), `w:${i}`))
    } finally {
      closeAll(front, back, worker, client)
    }
  })
})
