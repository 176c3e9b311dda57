// The shell component over HTTP, as a browser sees it: content types, ETag/304, encodings,
// caching, SPA routes, real 404s, JSON 404 for unknown /api paths, security headers.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { gunzipSync, brotliDecompressSync } from "node:zlib";
import { startApp } from "./harness.mjs";

let app;
before(async () => {
  app = await startApp();
});
after(async () => {
  await app?.stop();
});

const get = (path, headers = {}) => fetch(app.baseUrl + path, { headers, redirect: "manual" });

async function assets() {
  const html = await (await get("/")).text();
  const scripts = [...html.matchAll(/<script[^>]*src="([^"]+)"/g)].map((m) => m[1]);
  const styles = [...html.matchAll(/<link rel="stylesheet" href="([^"]+)"/g)].map((m) => m[1]);
  return { html, scripts, styles };
}

function assertSecurityHeaders(res) {
  const csp = res.headers.get("content-security-policy") ?? "";
  assert.match(csp, /script-src 'self'(;|$)/);
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
  assert.match(csp, /frame-ancestors 'none'/);
  assert.equal(res.headers.get("x-content-type-options"), "nosniff");
  assert.ok(res.headers.get("referrer-policy"));
}

test("root and chat routes serve the app HTML, revalidated on every use", async () => {
  for (const path of ["/", "/chat/some-chat-id"]) {
    const res = await get(path);
    assert.equal(res.status, 200, path);
    assert.equal(res.headers.get("content-type"), "text/html; charset=utf-8");
    assert.equal(res.headers.get("cache-control"), "no-cache");
    assert.ok(res.headers.get("etag"));
    assertSecurityHeaders(res);
    assert.match(await res.text(), /<div id="app">/);
  }
});

test("the HTML has no inline script: every script is an external same-origin file", async () => {
  const { html, scripts } = await assets();
  const allScripts = [...html.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)];
  assert.ok(allScripts.length >= 2);
  for (const [, attrs, body] of allScripts) {
    assert.match(attrs, /src="\/assets\//);
    assert.equal(body.trim(), "");
  }
  assert.ok(scripts.some((s) => /early-/.test(s)), "the early sidebar script is a blocking external script");
});

test("a matching If-None-Match answers 304 without a body", async () => {
  const first = await get("/");
  const etag = first.headers.get("etag");
  const again = await get("/", { "if-none-match": etag });
  assert.equal(again.status, 304);
  assert.equal(again.headers.get("etag"), etag);
  assert.equal(await again.text(), "");
});

test("fingerprinted assets are immutable and served brotli, gzip or identity as accepted", async () => {
  const { scripts } = await assets();
  const app_js = scripts.find((s) => /\/app-/.test(s));
  const plain = await get(app_js, { "accept-encoding": "identity" });
  assert.equal(plain.status, 200);
  assert.equal(plain.headers.get("content-type"), "text/javascript; charset=utf-8");
  assert.equal(plain.headers.get("cache-control"), "public, max-age=31536000, immutable");
  assert.equal(plain.headers.get("content-encoding"), null);
  assert.equal(plain.headers.get("vary"), "Accept-Encoding");
  const body = Buffer.from(await plain.arrayBuffer());

  // fetch() would decode transparently; read the raw bytes with a low-level request instead.
  const http = await import("node:http");
  const raw = (enc) =>
    new Promise((resolve, reject) => {
      http.get(app.baseUrl + app_js, { headers: { "accept-encoding": enc } }, (res) => {
        const chunks = [];
        res.on("data", (c) => chunks.push(c));
        res.on("end", () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
      }).on("error", reject);
    });
  const br = await raw("gzip, deflate, br");
  assert.equal(br.headers["content-encoding"], "br");
  assert.deepEqual(brotliDecompressSync(br.body), body);
  const gz = await raw("gzip");
  assert.equal(gz.headers["content-encoding"], "gzip");
  assert.deepEqual(gunzipSync(gz.body), body);
  assert.notEqual(br.headers.etag, gz.headers.etag, "each encoding is its own representation");
  console.log(`app JS: ${body.length} B raw, ${gz.body.length} B gzip, ${br.body.length} B brotli`);
  assert.ok(gz.body.length <= 150 * 1024, "JS stays within 150 KB gzip");
});

test("missing assets and unknown pages are real 404s", async () => {
  for (const path of ["/assets/nope-ABCDEFGH.js", "/favicon.ico", "/chat/abc/extra", "/.env"]) {
    const res = await get(path);
    assert.equal(res.status, 404, path);
    assert.equal(res.headers.get("cache-control"), "no-store");
    assertSecurityHeaders(res);
  }
});

test("unknown /api paths that fall through to the shell answer a JSON 404", async () => {
  for (const method of ["GET", "POST"]) {
    const res = await fetch(app.baseUrl + "/api/does-not-exist", { method, headers: { origin: app.baseUrl } });
    assert.equal(res.status, 404);
    assert.match(res.headers.get("content-type"), /^application\/json/);
    const body = await res.json();
    assert.equal(body.error.code, "not_found");
  }
});

test("paths with dot-dot segments are rejected", async () => {
  const http = await import("node:http");
  const status = (path) =>
    new Promise((resolve, reject) => {
      const url = new URL(app.baseUrl);
      http.get({ host: url.hostname, port: url.port, path }, (res) => {
        res.resume();
        resolve(res.statusCode);
      }).on("error", reject);
    });
  assert.equal(await status("/%2e%2e/%2e%2e/etc/passwd"), 400);
  assert.equal(await status("/assets/..%2f..%2fCargo.toml"), 400);
});

test("only GET and HEAD are allowed on files", async () => {
  const res = await fetch(app.baseUrl + "/", { method: "DELETE", headers: { origin: app.baseUrl } });
  assert.equal(res.status, 405);
  const head = await fetch(app.baseUrl + "/", { method: "HEAD" });
  assert.equal(head.status, 200);
  assert.equal(await head.text(), "");
});
