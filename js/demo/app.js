// The demo page: a SUB socket draws the PUB's ticks as a line chart, a REQ socket sends the
// form's question and shows the reply. Endpoints come from the demo server's /config.json.
import { Req, Sub } from "@oxmq/zws";

const config = await (await fetch("/config.json")).json();
const canvas = document.getElementById("chart");
const status = document.getElementById("status");
const points = [];
const LINE = "#1f5fd6";

function draw() {
  const g = canvas.getContext("2d");
  g.fillStyle = "#ffffff";
  g.fillRect(0, 0, canvas.width, canvas.height);
  g.strokeStyle = "#e3e6eb";
  for (let y = 0; y <= 100; y += 25) {
    const py = canvas.height - (y / 100) * canvas.height;
    g.beginPath();
    g.moveTo(0, py);
    g.lineTo(canvas.width, py);
    g.stroke();
  }
  const shown = points.slice(-120);
  g.strokeStyle = LINE;
  g.lineWidth = 3;
  g.beginPath();
  shown.forEach((v, i) => {
    const x = (i / 119) * canvas.width;
    const y = canvas.height - (v / 100) * canvas.height;
    if (i === 0) g.moveTo(x, y);
    else g.lineTo(x, y);
  });
  g.stroke();
}

const sub = new Sub();
sub.connect(config.ticks);
sub.subscribe("tick");
(async () => {
  for await (const [frame] of sub) {
    const [, seq, value] = new TextDecoder().decode(frame).split(" ");
    points.push(Number(value));
    status.textContent = `${points.length} points received (last: #${seq} = ${value})`;
    draw();
  }
})();

const req = new Req({ receiveTimeout: 5000 });
req.connect(config.ask);
document.getElementById("ask").addEventListener("submit", async (event) => {
  event.preventDefault();
  const reply = document.getElementById("reply");
  try {
    await req.send(document.getElementById("question").value);
    const [answer] = await req.receive();
    reply.textContent = new TextDecoder().decode(answer);
  } catch (error) {
    reply.textContent = `error ${error.code}: ${error.message}`;
  }
});
draw();
