// Compares the app under test (EVE_BASE_URL) with the eve reference (EVE_REFERENCE_URL) scenario
// by scenario: the same raw requests, normalised answers and streams, deepStrictEqual. With both
// URLs on the reference this validates the harness itself (normalisation must make two runs of
// eve equal). On a mismatch both records are written to tests/eve-client/artifacts/.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { CANDIDATE_URL, REFERENCE_URL, SCENARIOS, applyDifferences, normalize, sideBySide } from "./side-by-side.mjs";
import { DIFFERENCES } from "./differences.mjs";

const artifacts = join(dirname(fileURLToPath(import.meta.url)), "artifacts");

for (const name of Object.keys(SCENARIOS)) {
  test(`side by side: ${name} (${CANDIDATE_URL} vs the reference ${REFERENCE_URL})`, { timeout: 120_000 }, async () => {
    const { reference, candidate } = await sideBySide(name, { differences: DIFFERENCES });
    assert.ok(reference.steps.length > 0, "the scenario made requests");
    for (const stream of Object.values(reference.streams)) assert.ok(Array.isArray(stream.events));
    try {
      assert.deepStrictEqual(candidate, reference);
    } catch (error) {
      mkdirSync(artifacts, { recursive: true });
      const base = join(artifacts, name.replace(/[^a-z0-9]+/gi, "-"));
      writeFileSync(`${base}.reference.json`, JSON.stringify(reference, null, 2));
      writeFileSync(`${base}.candidate.json`, JSON.stringify(candidate, null, 2));
      error.message = `${name}: the app differs from eve (records in ${base}.{reference,candidate}.json)\n${error.message}`;
      throw error;
    }
  });
}

// The harness itself, offline: normalisation equates what legitimately differs, and only that.
test("side by side: normalisation keeps structure, hides only run-specific values", () => {
  const run = (sid, evt, delivery, { text = "Hello", extra } = {}) => ({
    sessions: [sid],
    steps: [
      {
        label: "create",
        request: "POST /eve/v1/session",
        status: 202,
        compare: "full",
        headers: { "content-type": "application/json", "cache-control": "no-store", "x-eve-session-id": sid },
        json: { ok: true, sessionId: sid, status: "accepted" },
        isJson: true,
      },
    ],
    streams: {
      main: {
        sessionId: sid,
        headers: { "x-eve-stream-version": "26" },
        facts: { leadingEmptyLine: true, sessionIdHeaderMatches: true },
        events: [
          { type: "turn.started", data: { turnId: "turn_0", sequence: 0, trace: { spanId: evt } }, meta: { id: `evt_01M8RAJ1N0A16ZYSYHXCVRAR${evt}`, at: "2026-12-01T08:11:53.376Z", deliveryIds: [delivery] } },
          { type: "message.appended", data: { turnId: "turn_0", sequence: 0, stepIndex: 0, messageDelta: text.slice(0, 2) }, meta: { id: `evt_01M8RAJ1N0A16ZYSYHXCVRAS${evt}`, at: "2026-12-01T08:11:53.377Z", deliveryIds: [delivery] } },
          { type: "message.appended", data: { turnId: "turn_0", sequence: 0, stepIndex: 0, messageDelta: text.slice(2) }, meta: { id: `evt_01M8RAJ1N0A16ZYSYHXCVRAT${evt}`, at: "2026-12-01T08:11:53.378Z", deliveryIds: [delivery] } },
          { type: "session.waiting", data: { continuationToken: sid, wait: "next-user-message", usage: { inputTokens: evt.length }, ...extra }, meta: { id: `evt_01M8RAJ1N0A16ZYSYHXCVRAV${evt}`, at: "2026-12-01T08:11:54.000Z", deliveryIds: [delivery] } },
        ],
      },
    },
  });
  const a = normalize(run("wrun_01M8RAJ10MR9BAAYR53ZTAMTM7", "ZZ", "c51e39b8-d9f4-42a4-9cc6-8e5f6a655fe4"));
  const b = normalize(run("wrun_01M8RAN24S29AEQHJ1B3XXVCP3", "YY", "61b75ca7-dd64-4d3b-9a15-20566b692505"));
  assert.deepStrictEqual(a, b, "ids, times, trace and usage numbers are normalised");
  assert.equal(a.streams.main.events.length, 3, "adjacent deltas are merged");
  assert.equal(a.streams.main.events[1].data.messageDelta, "Hello");
  assert.notDeepStrictEqual(a, normalize(run("wrun_01M8RAN24S29AEQHJ1B3XXVCP3", "YY", "x", { text: "Hellp" })), "text is compared");
  assert.notDeepStrictEqual(a, normalize(run("wrun_01M8RAN24S29AEQHJ1B3XXVCP3", "YY", "x", { extra: { more: 1 } })), "fields are compared");
  const odd = normalize(run("ses_abc", "YY", "not-a-uuid"));
  assert.notDeepStrictEqual(a, odd, "id formats are checked");
  assert.match(odd.streams.main.session, /unexpected-format/);

  const c = normalize(run("wrun_01M8RAN24S29AEQHJ1B3XXVCP3", "YY", "61b75ca7-dd64-4d3b-9a15-20566b692505", { extra: { more: 1 } }));
  const diff = [{ scenario: "x", path: "streams.main.events.[type=session.waiting].data.more", reason: "test" }];
  assert.deepStrictEqual(applyDifferences(c, "x", diff), applyDifferences(structuredClone(a), "x", diff));
  assert.throws(() => applyDifferences(a, "x", [{ scenario: "x", path: "steps" }]), /needs a reason/);
});
