// Which libzmq the addon runs on: the one named by EXPECT_LIBZMQ (a path), as mapped into
// this process, and the capabilities zeromq.js reads from it (EXPECT_DRAFT: 1 or 0).
"use strict"

const {test} = require("node:test")
const fs = require("node:fs")
const {assert, zmq} = require("./helpers")

test("the loaded libzmq is the expected one", () => {
  const maps = fs.readFileSync("/proc/self/maps", "utf8")
  const libs = new Set(
    maps
      .split("\n")
      .map(l => l.split(/\s+/).slice(5).join(" "))
      .filter(p => /\/libzmq\.so/.test(p)),
  )
  const want = process.env.EXPECT_LIBZMQ
  if (want) {
    assert.deepEqual([...libs], [fs.realpathSync(want)], "libzmq mapped into the process")
  }
  assert.match(zmq.version, /^4\.3\.\d+$/)
  assert.equal(zmq.capability.ipc, true)
  assert.equal(zmq.capability.curve, true)
  if (process.env.EXPECT_DRAFT) assert.equal(zmq.capability.draft, process.env.EXPECT_DRAFT === "1")
})
