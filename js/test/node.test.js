// The scenarios (scenarios.js) under Node, against zws-peer on libzmq 4.3.5 with drafts.
import { test } from "node:test";
import * as zws from "../dist/index.js";
import { makeKeys, peerBinary, setUp } from "./harness.js";
import { scenarios } from "./scenarios.js";

peerBinary();
const keys = makeKeys(zws);

for (const [name, scenario] of Object.entries(scenarios)) {
  if (scenario.browserOnly) continue;
  test(`node: ${name} (${scenario.mechanism})`, { timeout: 30000 }, async () => {
    const { context, harness, stop } = await setUp(scenario, keys);
    try {
      await scenario.run(zws, { ...context, harness });
    } finally {
      await stop();
    }
  });
}
