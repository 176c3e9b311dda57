// Prints how long a long chat takes to open in the browser (docs/performance.md, "Long chats"; a
// measurement, not a test): chats of ~1,000, ~20,000 and ~100,000 events (turns of 11 events,
// `longSession` in harness.mjs), each opened cold N times (a new context: nothing cached); the
// time from navigation to its last message on screen, and the bytes of the chat's API answer.
// Usage: node tests/browser/long-chat-bench.mjs [runs=3]
import { launchBrowser, longChat, startApp } from "./harness.mjs";

const runs = Number(process.argv[2] ?? 3);
const app = await startApp({ chat_event_writes_per_minute: "100000" });
const browser = await launchBrowser();
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
try {
  console.log("| events | open: last message on screen, median | API answer bytes | requests to /api/chats/:id |");
  console.log("|---|---|---|---|");
  for (const turns of [91, 1818, 9090]) {
    const { id, events } = await longChat(app.baseUrl, turns);
    const times = [];
    let bytes = 0;
    let reads = 0;
    for (let i = 0; i < runs; i++) {
      const context = await browser.newContext({ baseURL: app.baseUrl, viewport: { width: 1280, height: 800 }, locale: "en-US" });
      const page = await context.newPage();
      const answers = [];
      page.on("response", async (res) => {
        if (new URL(res.url()).pathname === `/api/chats/${id}`) answers.push((await res.body()).length);
      });
      await page.goto(`/chat/${id}`);
      await page.waitForSelector(`.message.user .bubble >> text=question ${turns - 1}`, { timeout: 120000 });
      times.push(await page.evaluate(() => performance.now()));
      await page.waitForTimeout(200);
      bytes = answers.reduce((a, b) => a + b, 0);
      reads = answers.length;
      await context.close();
    }
    console.log(`| ${events.length} | ${median(times).toFixed(0)} ms | ${(bytes / 1024).toFixed(1)} KiB | ${reads} |`);
  }
} finally {
  await browser.close();
  await app.stop();
}
