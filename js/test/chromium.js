// Shared by the Chromium tests: Debian's chromium through playwright-core, and a static server.
import { createReadStream, existsSync, statSync } from "node:fs";
import * as http from "node:http";
import { extname, join, normalize } from "node:path";
import { chromium } from "playwright-core";

const types = { ".js": "text/javascript", ".html": "text/html", ".map": "application/json", ".css": "text/css" };

/** Serves js/ (dist, test, node_modules/@noble) to the page; nothing outside it. */
export function staticServer(dir) {
  return http.createServer((req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url, "http://x").pathname));
    const file = join(dir, path);
    if (!file.startsWith(dir) || !existsSync(file) || !statSync(file).isFile()) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "content-type": types[extname(file)] ?? "application/octet-stream" });
    createReadStream(file).pipe(res);
  });
}

export const importMap = {
  imports: {
    "#websocket": "/dist/websocket-browser.js",
    "@noble/curves/": "/node_modules/@noble/curves/",
    "@noble/ciphers/": "/node_modules/@noble/ciphers/",
    "@noble/hashes/": "/node_modules/@noble/hashes/",
  },
};

export function launchChromium(extraArgs = []) {
  // Local Network Access (Chromium 14x+) asks the user before a page may open connections to
  // loopback or private addresses; headless there is no one to ask.
  return chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-features=LocalNetworkAccessChecks", ...extraArgs],
  });
}
