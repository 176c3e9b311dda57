// Prints the browser app's figures for docs/performance.md (a measurement, not a test):
//   JS and CSS transferred (compressed, as the browser received them), first paint, first
//   contentful paint and time to interactive of `/` on the local host, and the time from Enter
//   to the first streamed token with the demo provider. Median of N cold loads (new context
//   each, so nothing is cached). Usage: node tests/browser/perf.mjs [runs]
//   (EVE_CHAT_PERF_LOCALE=zh-CN measures the page as a Chinese browser loads it; default en-US)
import { launchBrowser, startApp } from "./harness.mjs";

const runs = Number(process.argv[2] ?? 7);
const app = await startApp();
const browser = await launchBrowser();
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const rows = [];
try {
  for (let i = 0; i < runs; i++) {
    const context = await browser.newContext({ baseURL: app.baseUrl, viewport: { width: 1280, height: 800 }, locale: process.env.EVE_CHAT_PERF_LOCALE ?? "en-US" });
    const page = await context.newPage();
    await page.goto("/", { waitUntil: "load" });
    await page.waitForFunction(() => performance.getEntriesByName("eve-chat:interactive").length > 0);
    await page.waitForTimeout(100);
    rows.push(
      await page.evaluate(() => {
        const res = performance.getEntriesByType("resource");
        const sum = (re) => res.filter((r) => re.test(r.name)).reduce((n, r) => n + r.transferSize, 0);
        const body = (re) => res.filter((r) => re.test(r.name)).reduce((n, r) => n + r.decodedBodySize, 0);
        const paint = Object.fromEntries(performance.getEntriesByType("paint").map((p) => [p.name, p.startTime]));
        const nav = performance.getEntriesByType("navigation")[0];
        return {
          jsTransferred: sum(/\.js$/),
          jsDecoded: body(/\.js$/),
          cssTransferred: sum(/\.css$/),
          htmlTransferred: nav.transferSize,
          firstPaint: paint["first-paint"],
          firstContentfulPaint: paint["first-contentful-paint"],
          interactive: performance.getEntriesByName("eve-chat:interactive")[0].startTime,
        };
      }),
    );
    await context.close();
  }
  const pick = (k) => median(rows.map((r) => r[k]));
  console.log(`runs: ${runs} cold loads of / (median)`);
  console.log(`JS transferred:  ${(pick("jsTransferred") / 1024).toFixed(1)} KB (${(pick("jsDecoded") / 1024).toFixed(1)} KB decoded)`);
  console.log(`CSS transferred: ${(pick("cssTransferred") / 1024).toFixed(1)} KB`);
  console.log(`HTML transferred: ${(pick("htmlTransferred") / 1024).toFixed(1)} KB`);
  console.log(`first paint: ${pick("firstPaint").toFixed(0)} ms, first contentful paint: ${pick("firstContentfulPaint").toFixed(0)} ms`);
  console.log(`interactive (app rendered): ${pick("interactive").toFixed(0)} ms`);

  // Enter → first streamed token, through the real eve-proxy and agent.
  const probe = await fetch(app.baseUrl + "/eve/v1/session", { method: "POST", headers: { "content-type": "application/json", origin: app.baseUrl }, body: JSON.stringify({ message: "ping" }) });
  if (probe.status !== 201) {
    console.log(`Enter → first token: not measured (the agent answered ${probe.status})`);
  } else {
    const times = [];
    for (let i = 0; i < Math.min(runs, 5); i++) {
      const context = await browser.newContext({ baseURL: app.baseUrl });
      const page = await context.newPage();
      await page.goto("/");
      await page.waitForSelector(".auth-slot .viewer-name");
      await page.fill("#composer-input", `Hello number ${i}`);
      const t0 = await page.evaluate(() => performance.now());
      await page.keyboard.press("Enter");
      await page.waitForFunction(() => [...document.querySelectorAll(".message.assistant .markdown")].some((m) => m.textContent.trim().length > 0), null, { timeout: 60000 });
      const t1 = await page.evaluate(() => performance.now());
      times.push(t1 - t0);
      await context.close();
    }
    console.log(`Enter → first streamed token on screen: ${median(times).toFixed(0)} ms (median of ${times.length}; includes creating the chat and navigating)`);
  }
} finally {
  await browser.close();
  await app.stop();
}
