// Streaming benchmark for docs/performance.md (a measurement, not a test): one long Markdown
// answer (default 20,000 tokens: paragraphs, lists, code blocks) streamed through the real app —
// tests/browser/fake-openai.mjs → the agent → eve-proxy → the browser — in headless Chromium,
// and how the page kept up while it streamed:
//   - frame intervals (requestAnimationFrame), against the 16.7 ms budget of 60 fps;
//   - long tasks (> 50 ms, PerformanceObserver);
//   - main-thread busy time (CDP Performance.getMetrics TaskDuration) per streamed token and
//     per render (a render = one batch of DOM mutations of the answer).
// Usage: node tests/browser/stream-bench.mjs [tokens] [runs] [delay-ms]   (host and components
// built). delay-ms paces the model: a pause before each token (0, the default: as fast as the
// app takes them; 5 ≈ 150 tokens/s, faster than hosted models stream).
import { launchBrowser, startApp, startChat } from "./harness.mjs";
import { fakeModelVariables, startFakeOpenAI } from "./fake-openai.mjs";

const tokens = Number(process.argv[2] ?? 20000);
const runs = Number(process.argv[3] ?? 3);
const delayMs = Number(process.argv[4] ?? 0);

/** A deterministic long answer, one model token per chunk (a word with its spacing). */
function answerTokens(n) {
  const words = "the quick brown fox jumps over a lazy dog while streaming markdown keeps every frame smooth".split(" ");
  const out = [];
  let i = 0;
  const word = () => words[i++ % words.length];
  while (out.length < n) {
    const kind = out.length % 5;
    out.push(`\n\n## Section ${out.length}\n\n`);
    if (kind === 2) {
      out.push("```js\n");
      for (let l = 0; l < 12; l++) out.push(`const v${l} = "${word()}";`, ` // ${word()}\n`);
      out.push("```\n\n");
    } else if (kind === 4) {
      for (let l = 0; l < 8; l++) out.push(`- **${word()}**`, ` ${word()}`, ` ${word()}\n`);
    } else {
      for (let w = 0; w < 60; w++) out.push(`${w % 12 === 0 ? "*" + word() + "*" : word()} `);
    }
  }
  out.length = n - 1;
  out.push("\n\nEND-OF-ANSWER");
  return out;
}

const chunks = answerTokens(tokens);
const fake = await startFakeOpenAI((text) => (text.includes("long answer") ? { chunks, delayMs } : { chunks: ["ok"] }));
const app = await startApp(fakeModelVariables(fake));
const browser = await launchBrowser();
const pct = (xs, p) => (xs.length ? [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))] : 0);
try {
  for (let run = 0; run < runs; run++) {
    const context = await browser.newContext({ baseURL: app.baseUrl, viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    page.on("crash", () => console.log("the page crashed (out of memory?)"));
    const cdp = await context.newCDPSession(page);
    await cdp.send("Performance.enable");
    await page.goto("/");
    await page.waitForSelector(".auth-slot .viewer-name");
    await page.evaluate(() => {
      const b = (window.__bench = { frames: [], longTasks: [], renders: 0, running: true, firstText: 0, done: 0 });
      new PerformanceObserver((list) => {
        for (const e of list.getEntries()) b.longTasks.push(e.duration);
      }).observe({ type: "longtask" });
      const tick = (t) => {
        b.frames.push(t);
        if (b.running) requestAnimationFrame(tick);
      };
      requestAnimationFrame(tick);
      // Count renders of the answer: one MutationObserver callback per batch of DOM changes.
      new MutationObserver(() => {
        const md = document.querySelector(".message.assistant .markdown");
        if (!md) return;
        b.renders++;
        // Only the last block: reading the whole answer's text on every render would be most of
        // the work measured.
        const last = md.lastElementChild?.textContent ?? "";
        if (!b.firstText && last.length) b.firstText = performance.now();
        if (!b.done && last.includes("END-OF-ANSWER")) {
          b.done = performance.now();
          b.running = false;
        }
      }).observe(document.body, { subtree: true, childList: true, characterData: true });
    });
    const metrics = async () => Object.fromEntries((await cdp.send("Performance.getMetrics")).metrics.map((m) => [m.name, m.value * 1000]));
    const m0 = await metrics();
    if (process.env.PROFILE) {
      await cdp.send("Profiler.enable");
      await cdp.send("Profiler.setSamplingInterval", { interval: 2000 });
      await cdp.send("Profiler.start");
    }
    await startChat(page, "long answer please", { inApp: true });
    await page.waitForFunction(() => window.__bench.done > 0, null, { timeout: 600000, polling: 200 });
    const m1 = await metrics();
    const spent = (k) => m1[k] - m0[k];
    const busy = spent("TaskDuration");
    if (process.env.PROFILE) {
      console.log(Object.entries(m1).filter(([k]) => /Duration|Count/.test(k)).map(([k, v]) => `${k} ${((v - m0[k]) / 1000).toFixed(1)}`).join(", "));
      // Self time per function (build the app unminified to read the names).
      const { profile } = await cdp.send("Profiler.stop");
      const self = new Map();
      const dt = profile.timeDeltas;
      const byId = new Map(profile.nodes.map((n) => [n.id, n]));
      profile.samples.forEach((id, i) => {
        const f = byId.get(id).callFrame;
        const key = `${f.functionName || "(anon)"} ${f.url.split("/").pop()}:${f.lineNumber}`;
        self.set(key, (self.get(key) ?? 0) + (dt[i] ?? 0) / 1000);
      });
      for (const [k, v] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(`${v.toFixed(0).padStart(7)} ms  ${k}`);
    }
    const b = await page.evaluate(() => {
      const { frames, longTasks, renders, firstText, done } = window.__bench;
      const streaming = [];
      for (let i = 1; i < frames.length; i++) if (frames[i] >= firstText && frames[i] <= done) streaming.push(frames[i] - frames[i - 1]);
      return { streaming, longTasks, renders, seconds: (done - firstText) / 1000, chars: document.querySelector(".message.assistant .markdown").textContent.length };
    });
    const over = b.streaming.filter((d) => d > 16.7 * 1.5).length;
    console.log(
      `run ${run + 1}: ${tokens} tokens${delayMs ? `, ${delayMs} ms apart,` : ""} (${b.chars} chars on screen) streamed in ${b.seconds.toFixed(1)} s; ` +
        `frames p50 ${pct(b.streaming, 50).toFixed(1)} / p95 ${pct(b.streaming, 95).toFixed(1)} / max ${Math.max(...b.streaming).toFixed(0)} ms, ` +
        `${((100 * over) / Math.max(1, b.streaming.length)).toFixed(1)}% of ${b.streaming.length} frames over 25 ms; ` +
        `long tasks ${b.longTasks.length} (total ${b.longTasks.reduce((a, x) => a + x, 0).toFixed(0)} ms, max ${Math.max(0, ...b.longTasks).toFixed(0)} ms); ` +
        `main thread busy ${(busy / 1000).toFixed(1)} s = ${(busy / tokens).toFixed(2)} ms per token, ${(busy / Math.max(1, b.renders)).toFixed(1)} ms per render (${b.renders} renders); ` +
        `of it script ${(spent("ScriptDuration") / 1000).toFixed(1)} s, style ${(spent("RecalcStyleDuration") / 1000).toFixed(1)} s, layout ${(spent("LayoutDuration") / 1000).toFixed(1)} s`,
    );
    await context.close();
  }
} finally {
  await browser.close();
  await app.stop();
  await fake.close();
}
