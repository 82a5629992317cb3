// zeromq.js's promise and async-iterator API over tcp, ipc and inproc: every socket type in
// its usual pairs, bursts past the high-water marks, routing ids, closing while an operation
// waits, errors, options, socket events, the proxy and CURVE.
"use strict"

const {test, describe} = require("node:test")
const net = require("node:net")
const {assert, zmq, protos, endpoint, bindConnect, deadline, rejects, closeAll, waitJoined} = require("./helpers")

const T = 20000 // per test

for (const proto of protos) {
  describe(`${proto}`, () => {
    test("PAIR: both ways, multi-part", {timeout: T}, async () => {
      const a = new zmq.Pair({linger: 0}), b = new zmq.Pair({linger: 0})
      try {
        await bindConnect(proto, a, b)
        await b.send(["ping", "two"])
        assert.deepEqual((await a.receive()).map(String), ["ping", "two"])
        await a.send(Buffer.alloc(100000, 7))
        const [big] = await b.receive()
        assert.equal(big.length, 100000)
        assert.equal(big[99999], 7)
      } finally {
        closeAll(a, b)
      }
    })

    test("PUSH/PULL: a burst of 5,000 past HWMs of 10, in order, read by async iterator", {timeout: T}, async () => {
      const pull = new zmq.Pull({receiveHighWaterMark: 10, linger: 0})
      const push = new zmq.Push({sendHighWaterMark: 10, linger: 0})
      try {
        await bindConnect(proto, pull, push)
        const n = 5000
        const sending = (async () => {
          for (let i = 0; i < n; i++) await push.send(String(i))
        })()
        let i = 0
        for await (const [m] of pull) {
          assert.equal(m.toString(), String(i))
          if (++i === n) break
        }
        await sending
      } finally {
        closeAll(pull, push)
      }
    })

    test("REQ/REP: 200 round trips, the REP an async iterator", {timeout: T}, async () => {
      const rep = new zmq.Reply({linger: 0}), req = new zmq.Request({linger: 0})
      try {
        await bindConnect(proto, rep, req)
        const serve = (async () => {
          for await (const [m] of rep) await rep.send(["re:", m])
        })()
        for (let i = 0; i < 200; i++) {
          await req.send(String(i))
          assert.deepEqual((await req.receive()).map(String), ["re:", String(i)])
        }
        rep.close()
        await serve
      } finally {
        closeAll(rep, req)
      }
    })

    test("DEALER/ROUTER: two named dealers, bursts both ways", {timeout: T}, async () => {
      const router = new zmq.Router({linger: 0})
      const a = new zmq.Dealer({routingId: "A", linger: 0}), b = new zmq.Dealer({routingId: "B", linger: 0})
      try {
        await bindConnect(proto, router, a, b)
        const n = 500
        const echo = (async () => {
          let seen = 0
          for await (const [id, m] of router) {
            assert.ok(["A", "B"].includes(id.toString()))
            await router.send([id, m])
            if (++seen === 2 * n) return
          }
        })()
        const run = async d => {
          const sending = (async () => {
            for (let i = 0; i < n; i++) await d.send(`${d.routingId}${i}`)
          })()
          for (let i = 0; i < n; i++) assert.equal((await d.receive())[0].toString(), `${d.routingId}${i}`)
          await sending
        }
        await Promise.all([run(a), run(b), echo])
      } finally {
        closeAll(router, a, b)
      }
    })

    test("REQ to ROUTER and DEALER to REP: envelopes", {timeout: T}, async () => {
      const router = new zmq.Router({linger: 0}), req = new zmq.Request({routingId: "r1", linger: 0})
      const rep = new zmq.Reply({linger: 0}), dealer = new zmq.Dealer({linger: 0})
      try {
        await bindConnect(proto, router, req)
        await req.send("q")
        const [id, empty, body] = await router.receive()
        assert.deepEqual([id.toString(), empty.length, body.toString()], ["r1", 0, "q"])
        await router.send([id, "", "a"])
        assert.equal((await req.receive())[0].toString(), "a")

        await bindConnect(proto, rep, dealer)
        await dealer.send(["", "q2"])
        assert.equal((await rep.receive())[0].toString(), "q2")
        await rep.send("a2")
        assert.deepEqual((await dealer.receive()).map(String), ["", "a2"])
      } finally {
        closeAll(router, req, rep, dealer)
      }
    })

    test("PUB/SUB: prefix filters, unsubscribe", {timeout: T}, async () => {
      const pub = new zmq.Publisher({linger: 0}), sub = new zmq.Subscriber({linger: 0})
      try {
        await bindConnect(proto, pub, sub)
        sub.subscribe("a", "probe")
        await waitJoined(pub, sub)
        // Drain probes that raced, then the filter at work.
        await pub.send("b-dropped")
        await pub.send("a1")
        let m
        do [m] = await sub.receive()
        while (m.toString() === "probe")
        assert.equal(m.toString(), "a1")
        sub.unsubscribe("a")
        sub.subscribe("c")
        // Subscriptions travel in order with nothing to wait on: probe again until "c" passes.
        let got = false
        const done = sub.receive().then(([x]) => (got = x.toString()))
        const start = Date.now()
        while (!got && Date.now() - start < 5000) {
          await pub.send("a-dropped")
          await pub.send("c1")
          await Promise.race([done, new Promise(r => setTimeout(r, 10))])
        }
        assert.ok(got === "c1" || got === "probe", `got ${got}`)
      } finally {
        closeAll(pub, sub)
      }
    })

    test("XPUB/XSUB: subscriptions are messages", {timeout: T}, async () => {
      const xpub = new zmq.XPublisher({linger: 0}), xsub = new zmq.XSubscriber({linger: 0})
      try {
        await bindConnect(proto, xpub, xsub)
        await xsub.send(Buffer.from("\x01t"))
        const [s] = await deadline(xpub.receive(), 5000, "subscription")
        assert.deepEqual([...s], [1, 116])
        for (let i = 0; i < 300; i++) await xpub.send(`t${i}`)
        for (let i = 0; i < 300; i++) assert.equal((await xsub.receive())[0].toString(), `t${i}`)
        await xsub.send(Buffer.from("\x00t"))
        assert.deepEqual([...(await xpub.receive())[0]], [0, 116])
      } finally {
        closeAll(xpub, xsub)
      }
    })

    test("close while a receive and a send wait: both settle with EAGAIN", {timeout: T}, async () => {
      const req = new zmq.Request({linger: 0}), rep = new zmq.Reply({linger: 0})
      try {
        await bindConnect(proto, rep, req)
        const receiving = rep.receive()
        const blocked = new zmq.Push({sendHighWaterMark: 1, linger: 0}) // no peer: send waits
        const sending = blocked.send("x")
        rep.close()
        blocked.close()
        await rejects(receiving, "EAGAIN", "Operation was not possible or timed out")
        await rejects(sending, "EAGAIN")
      } finally {
        closeAll(req, rep)
      }
    })

    test("close while the peer streams: the sender goes on, nothing hangs", {timeout: T}, async () => {
      const pull = new zmq.Pull({linger: 0}), push = new zmq.Push({sendHighWaterMark: 100, linger: 0, sendTimeout: 200})
      try {
        await bindConnect(proto, pull, push)
        const sending = (async () => {
          let sent = 0
          try {
            for (; sent < 2000; sent++) await push.send(Buffer.alloc(64))
          } catch (err) {
            assert.equal(err.code, "EAGAIN") // the reader is gone: the queue stays full
          }
          return sent
        })()
        for (let i = 0; i < 50; i++) await pull.receive()
        pull.close()
        assert.ok((await sending) >= 50)
        assert.equal(push.closed, false)
      } finally {
        closeAll(pull, push)
      }
    })

    test("ROUTER: connect with a routing id routes to it at once", {timeout: T}, async () => {
      const router = new zmq.Router({mandatory: true, linger: 0}), dealer = new zmq.Dealer({linger: 0})
      try {
        // Bound first...
        await dealer.bind(endpoint(proto))
        router.connect(dealer.lastEndpoint, {routingId: "remoteId"})
        await router.send(["remoteId", "hi"])
        assert.equal((await dealer.receive())[0].toString(), "hi")
        // ...and, but for tcp (its port is not known before), bound later.
        if (proto !== "tcp") {
          const late = new zmq.Dealer({linger: 0}), ep = endpoint(proto)
          try {
            router.connect(ep, {routingId: "later"})
            await router.send(["later", "early"])
            await late.bind(ep)
            assert.equal((await late.receive())[0].toString(), "early")
          } finally {
            late.close()
          }
        }
      } finally {
        closeAll(router, dealer)
      }
    })

    if (zmq.capability.draft) {
      test("SERVER/CLIENT: replies by routing id", {timeout: T}, async () => {
        const {Server, Client} = require("zeromq/draft")
        const server = new Server({linger: 0}), c1 = new Client({linger: 0}), c2 = new Client({linger: 0})
        try {
          await bindConnect(proto, server, c1, c2)
          for (const c of [c1, c2]) await c.send("hello")
          const ids = new Set()
          for (let i = 0; i < 2; i++) {
            const [m, {routingId}] = await server.receive()
            assert.equal(m.toString(), "hello")
            ids.add(routingId)
            await server.send(`to ${routingId}`, {routingId})
          }
          assert.equal(ids.size, 2)
          for (const c of [c1, c2]) assert.match((await c.receive())[0].toString(), /^to \d+$/)
          await rejects(server.send("x", {routingId: 12345}), "EHOSTUNREACH", "Host unreachable")
        } finally {
          closeAll(server, c1, c2)
        }
      })

      test("SCATTER/GATHER and RADIO/DISH", {timeout: T}, async () => {
        const {Scatter, Gather, Radio, Dish} = require("zeromq/draft")
        const gather = new Gather({linger: 0}), scatter = new Scatter({linger: 0})
        const radio = new Radio({linger: 0}), dish = new Dish({linger: 0})
        try {
          await bindConnect(proto, gather, scatter)
          for (let i = 0; i < 100; i++) await scatter.send(String(i))
          for (let i = 0; i < 100; i++) assert.equal((await gather.receive())[0].toString(), String(i))
          {
            await bindConnect(proto, radio, dish)
            dish.join("g")
            // A join travels to the radio with nothing to wait on: send until one arrives.
            let got = null
            const r = dish.receive().then(x => (got = x))
            const start = Date.now()
            while (!got && Date.now() - start < 5000) {
              await radio.send("hello", {group: "g"})
              await radio.send("other", {group: "h"})
              await Promise.race([r, new Promise(res => setTimeout(res, 10))])
            }
            const [m, {group}] = await r
            assert.equal(m.toString(), "hello")
            assert.equal(group.toString(), "g")
          }
        } finally {
          closeAll(gather, scatter, radio, dish)
        }
      })
    }
  })
}

describe("errors", () => {
  test("bad endpoints, endpoints in use and unknown ones", {timeout: T}, async () => {
    const s = new zmq.Dealer({linger: 0}), t = new zmq.Dealer({linger: 0})
    try {
      await rejects(s.bind("foo-bar"), "EINVAL", "Invalid argument")
      await rejects(s.bind("foo://bar"), "EPROTONOSUPPORT", "Protocol not supported")
      assert.throws(() => s.connect("foo://bar"), err => err.code === "EPROTONOSUPPORT")
      await s.bind("tcp://127.0.0.1:*")
      await rejects(t.bind(s.lastEndpoint), "EADDRINUSE", "Address already in use")
      await rejects(s.unbind("tcp://127.0.0.1:1"), "ENOENT", "No such endpoint")
      assert.throws(() => s.disconnect("tcp://127.0.0.1:1"), err => err.code === "ENOENT")
    } finally {
      closeAll(s, t)
    }
  })

  test("timeouts, state errors, closed and busy sockets", {timeout: T}, async () => {
    const req = new zmq.Request({linger: 0, receiveTimeout: 50, sendTimeout: 0})
    try {
      await rejects(req.receive(), "EFSM", "Operation cannot be accomplished in current state")
      req.connect("inproc://nobody-here")
      await req.send("q")
      // A second request before the reply: EFSM at once (send timeout 0).
      await rejects(req.send("again"), "EFSM")
      await rejects(req.receive(), "EAGAIN") // timed out
      const d = new zmq.Dealer({linger: 0})
      d.connect("inproc://nobody-either")
      const first = d.receive()
      assert.throws(() => d.receive(), err => err.code === "EBUSY")
      d.close()
      await rejects(first, "EAGAIN")
      assert.throws(() => d.receive(), err => err.code === "EBADF")
    } finally {
      req.close()
    }
  })

  test("ROUTER_MANDATORY to an unknown peer: EHOSTUNREACH, 'Host unreachable'", {timeout: T}, async () => {
    const router = new zmq.Router({mandatory: true, sendTimeout: 0, linger: 0})
    try {
      await rejects(router.send(["fooId", "foo"]), "EHOSTUNREACH", "Host unreachable")
    } finally {
      router.close()
    }
  })
})

describe("options, events, proxy, curve", () => {
  test("options read back as set", {timeout: T}, async () => {
    const s = new zmq.Dealer({routingId: "me", sendHighWaterMark: 7, receiveHighWaterMark: 9, linger: 0})
    try {
      assert.equal(s.routingId, "me")
      assert.equal(s.sendHighWaterMark, 7)
      assert.equal(s.receiveHighWaterMark, 9)
      assert.equal(s.linger, 0)
      assert.equal(s.type, 5)
      s.immediate = true
      assert.equal(s.immediate, true)
      await s.bind("tcp://127.0.0.1:*")
      assert.match(s.lastEndpoint, /^tcp:\/\/127\.0\.0\.1:\d+$/)
      const ctx = new zmq.Context({ioThreads: 2, maxSockets: 64})
      assert.equal(ctx.ioThreads, 2)
      assert.equal(ctx.maxSockets, 64)
    } finally {
      s.close()
    }
  })

  test("socket events: bind, accept, connect, handshake, disconnect, end", {timeout: T}, async () => {
    const a = new zmq.Dealer({linger: 0}), b = new zmq.Dealer({linger: 0})
    const seenA = [], seenB = []
    const watch = (s, seen, until) =>
      (async () => {
        for await (const e of s.events) {
          seen.push(e.type)
          if (e.type === until) return
        }
      })()
    try {
      const wa = watch(a, seenA, "disconnect")
      const wb = watch(b, seenB, "handshake")
      await a.bind("tcp://127.0.0.1:*")
      b.connect(a.lastEndpoint)
      await deadline(wb, 5000, "B's handshake")
      b.close()
      await deadline(wa, 5000, "A's disconnect")
      assert.ok(seenA.includes("bind") && seenA.includes("accept"), seenA.join())
      assert.ok(seenB.includes("connect"), seenB.join())
    } finally {
      closeAll(a, b)
    }
  })

  test("Proxy: ROUTER front, DEALER back, REP worker; terminate", {timeout: T}, async () => {
    const proxy = new zmq.Proxy(new zmq.Router({linger: 0}), new zmq.Dealer({linger: 0}))
    const worker = new zmq.Reply({linger: 0}), client = new zmq.Request({linger: 0})
    try {
      await proxy.frontEnd.bind(endpoint("inproc"))
      await proxy.backEnd.bind(endpoint("inproc"))
      worker.connect(proxy.backEnd.lastEndpoint)
      client.connect(proxy.frontEnd.lastEndpoint)
      const running = proxy.run()
      const serve = (async () => {
        for await (const [m] of worker) await worker.send(`w:${m}`)
      })()
      for (let i = 0; i < 20; i++) {
        await client.send(String(i))
        assert.equal((await client.receive())[0].toString(), `w:${i}`)
      }
      proxy.terminate()
      await deadline(running, 5000, "proxy end")
      worker.close()
      await serve
    } finally {
      closeAll(proxy.frontEnd, proxy.backEnd, worker, client)
    }
  })

  test("CURVE over tcp", {timeout: T}, async () => {
    const server = zmq.curveKeyPair(), client = zmq.curveKeyPair()
    const rep = new zmq.Reply({curveServer: true, curveSecretKey: server.secretKey, linger: 0})
    const req = new zmq.Request({
      curveServerKey: server.publicKey,
      curvePublicKey: client.publicKey,
      curveSecretKey: client.secretKey,
      linger: 0,
    })
    try {
      await bindConnect("tcp", rep, req)
      await req.send("secret")
      assert.equal((await rep.receive())[0].toString(), "secret")
      await rep.send("ok")
      assert.equal((await req.receive())[0].toString(), "ok")
    } finally {
      closeAll(rep, req)
    }
  })

  test("STREAM with a raw TCP peer", {timeout: T}, async () => {
    const stream = new zmq.Stream({linger: 0})
    let conn
    try {
      await stream.bind("tcp://127.0.0.1:*")
      const port = Number(stream.lastEndpoint.split(":").pop())
      conn = net.connect(port, "127.0.0.1")
      const reply = new Promise(res => conn.once("data", d => res(d.toString())))
      const [id, hello] = await stream.receive() // the connection: an empty frame
      assert.equal(hello.length, 0)
      conn.write("raw bytes")
      const [id2, data] = await stream.receive()
      assert.deepEqual(id2, id)
      assert.equal(data.toString(), "raw bytes")
      await stream.send([id, "answer"])
      assert.equal(await deadline(reply, 5000, "raw reply"), "answer")
    } finally {
      if (conn) conn.destroy()
      stream.close()
    }
  })
})
