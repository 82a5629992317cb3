// The demo (demo/) in headless Chromium, judged by what a person would see: a screenshot of the
// page, decoded, has the chart's line colour across the chart's box (the points drawn, not just
// the DOM), the status line counts points, and after typing a question and pressing Send the
// reply box shows the REP server's answer. The screenshot is kept in test-results/demo.png.
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { after, before, test } from "node:test";
import { startDemo } from "../demo/server.mjs";
import { launchChromium } from "./chromium.js";

let demo;
let browser;

before(async () => {
  demo = await startDemo();
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  demo?.close();
});

/** Pixels of a PNG (decoded by the browser) close to rgb within a box, and the box's columns that have any. */
async function linePixels(png, box, rgb) {
  const page = await browser.newPage();
  try {
    return await page.evaluate(
      async ({ data, box, rgb }) => {
        const img = new Image();
        img.src = `data:image/png;base64,${data}`;
        await img.decode();
        const c = document.createElement("canvas");
        c.width = img.width;
        c.height = img.height;
        const g = c.getContext("2d");
        g.drawImage(img, 0, 0);
        const px = g.getImageData(box.x, box.y, box.width, box.height).data;
        let count = 0;
        const columns = new Set();
        for (let i = 0; i < px.length; i += 4) {
          if (Math.abs(px[i] - rgb[0]) + Math.abs(px[i + 1] - rgb[1]) + Math.abs(px[i + 2] - rgb[2]) < 60) {
            count++;
            columns.add((i / 4) % box.width);
          }
        }
        return { count, columns: columns.size };
      },
      { data: png.toString("base64"), box, rgb },
    );
  } finally {
    await page.close();
  }
}

test("demo: the chart fills with the PUB's ticks and the form shows the REP's reply", { timeout: 60000 }, async () => {
  const page = await browser.newPage({ viewport: { width: 800, height: 600 } });
  await page.goto(demo.url);
  // Ten ticks a second: wait until the status line counts 30.
  await page.waitForFunction(() => Number(document.getElementById("status").textContent.split(" ")[0]) >= 30, null, { timeout: 20000 });
  await page.fill("#question", "abc def");
  await page.click("button[type=submit]");
  await page.waitForFunction(() => document.getElementById("reply").textContent.length > 0, null, { timeout: 10000 });
  assert.match(await page.textContent("#reply"), /^fed cba \(answer #1\)$/);
  assert.ok(await page.isVisible("#reply"));

  const png = await page.screenshot();
  mkdirSync("test-results", { recursive: true });
  writeFileSync("test-results/demo.png", png);
  const box = await page.locator("#chart").boundingBox();
  const chart = { x: Math.round(box.x), y: Math.round(box.y), width: Math.round(box.width), height: Math.round(box.height) };
  const line = await linePixels(png, chart, [0x1f, 0x5f, 0xd6]);
  // 30+ points over 120 slots: the line spans at least a fifth of the chart's width.
  assert.ok(line.columns > chart.width / 5, `the chart's line covers ${line.columns} of ${chart.width} columns`);
  const status = await page.textContent("#status");
  assert.match(status, /^\d+ points received \(last: #\d+ = [\d.]+\)$/);
  await page.close();
});
