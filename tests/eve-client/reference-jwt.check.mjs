// The eve reference (tests/eve-reference, started by run-all with EVE_JWT_SECRET) verifies a
// forwarding proxy's bearer JWT with eve's own `jwtHmac`: a token minted the way eve-chat's
// proxy mints one (crates/eve-agent/src/jwt.rs: HS256; sub, iss "eve-chat", aud "eve-agent",
// iat, exp = iat + 300 s, plus mode/name/email) is accepted, and a token that does not verify
// is refused with 401 instead of falling through to `localDev()`. A caller without a token is
// still let in by `localDev()` (eve dev on loopback), which is how the other suites call it.
//
//   EVE_REFERENCE_URL=http://127.0.0.1:P EVE_JWT_SECRET=… node --test reference-jwt.check.mjs
//
// Not a *.test.mjs: it checks the reference itself, so `run` does not pick it up for other servers.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { trimSlash } from "./lib.mjs";

const REFERENCE_URL = trimSlash(process.env.EVE_REFERENCE_URL || "http://127.0.0.1:2000");
const SECRET = process.env.EVE_JWT_SECRET ?? "";

const b64url = (value) => Buffer.from(typeof value === "string" ? value : JSON.stringify(value)).toString("base64url");

/** A token as UpstreamJwt::mint makes it (same header bytes, same claims). */
function mint({ secret = SECRET, header = { alg: "HS256", typ: "JWT" }, ...overrides } = {}) {
  const now = Math.floor(Date.now() / 1000);
  const claims = {
    sub: "dev-user",
    iss: "eve-chat",
    aud: "eve-agent",
    iat: now,
    exp: now + 300,
    mode: "local-dev",
    name: "Dev User",
    email: "dev@example.com",
    ...overrides,
  };
  const input = `${b64url(header)}.${b64url(claims)}`;
  return `${input}.${createHmac("sha256", secret).update(input).digest("base64url")}`;
}

async function call(path, { token, method = "GET", json } = {}) {
  const headers = {};
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  if (json !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(`${REFERENCE_URL}${path}`, {
    method,
    headers,
    body: json === undefined ? undefined : JSON.stringify(json),
    signal: AbortSignal.timeout(15_000),
  });
  const text = await res.text();
  let body;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  return { status: res.status, headers: res.headers, body };
}

test("the reference is started with EVE_JWT_SECRET", () => {
  assert.ok(SECRET.length >= 32, "EVE_JWT_SECRET (>= 32 characters, as eve-chat requires) is set for this check");
});

test("reference auth: no bearer token -> localDev() lets a loopback caller in", async () => {
  assert.equal((await call("/eve/v1/info")).status, 200);
});

test("reference auth: a token minted like eve-chat's proxy is accepted by jwtHmac", async () => {
  const info = await call("/eve/v1/info", { token: mint() });
  assert.equal(info.status, 200, JSON.stringify(info.body).slice(0, 300));
  const created = await call("/eve/v1/session", { method: "POST", token: mint() });
  assert.equal(created.status, 202, JSON.stringify(created.body));
  assert.match(created.body.sessionId, /^wrun_/);
  const stream = await call(`/eve/v1/session/${created.body.sessionId}/stream?follow=false`, { token: mint() });
  assert.equal(stream.status, 200);
  // Also without the optional claims (name, email), as minted for a principal without them.
  assert.equal((await call("/eve/v1/info", { token: mint({ name: undefined, email: undefined }) })).status, 200);
});

for (const [what, token] of [
  ["a wrong secret", () => mint({ secret: "not-the-secret-not-the-secret-not-the-secret" })],
  ["a wrong issuer", () => mint({ iss: "someone-else" })],
  ["a wrong audience", () => mint({ aud: "another-agent" })],
  ["an expired token", () => mint({ iat: Math.floor(Date.now() / 1000) - 1000, exp: Math.floor(Date.now() / 1000) - 700 })],
  ["no subject", () => mint({ sub: "" })],
  ["alg none", () => `${b64url({ alg: "none", typ: "JWT" })}.${b64url({ sub: "x", iss: "eve-chat", aud: "eve-agent", exp: 9999999999 })}.`],
  ["HS512 instead of HS256", () => mint({ header: { alg: "HS512", typ: "JWT" } })],
  ["not a JWT", () => "not-a-jwt"],
]) {
  test(`reference auth: ${what} is refused with 401`, async () => {
    for (const [path, method] of [["/eve/v1/info", "GET"], ["/eve/v1/session", "POST"]]) {
      const res = await call(path, { token: token(), method });
      assert.equal(res.status, 401, `${method} ${path}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body?.ok, false);
      assert.equal(res.body?.code, "invalid_token");
      assert.match(res.headers.get("www-authenticate") ?? "", /^Bearer\b/);
    }
  });
}
