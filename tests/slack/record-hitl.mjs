#!/usr/bin/env node
// Records what eve 0.80.1's own Slack code makes of questions and approvals (its exported
// `renderInputRequestBlocks` and `deriveHitlResponse`, and the modal and answered-card builders
// its interaction handler uses) into recordings/hitl.json, which
// `cargo test -p eve-slack recorded` replays against eve-chat's `eve_slack::hitl`.
//
//   node tests/slack/record-hitl.mjs   (needs target/eve-reference/node_modules: run-all installs it)
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const slack = path.resolve(here, "../../target/eve-reference/node_modules/eve/dist/src/public/channels/slack");
const hitl = await import(path.join(slack, "hitl.js"));
const cards = await import(path.join(slack, "interaction-cards.js"));

// Keys in sorted order: eve-chat reads events into sorted maps (JSON.stringify keeps insertion order).
const action = { callId: "call_1", input: { mode: "overwrite", path: "/tmp/report.txt" }, kind: "tool-call", toolName: "write_file" };
const requests = [
  { action, kind: "question", prompt: "Which city should I check the weather for?", requestId: "req_q1",
    options: [{ id: "option_0", label: "Paris" }, { id: "option_1", label: "Tokyo" }, { id: "option_2", label: "Lima" }] },
  { action, kind: "question", prompt: `A very long question ${"that goes on and on ".repeat(12)}?`, requestId: "req_q2",
    options: [{ id: "a", label: `An option whose label is far longer than Slack's seventy-five character button text limit` }] },
  { action, kind: "tool-approval", prompt: "Allow write_file?", requestId: "req_a1",
    options: [{ id: "approve", label: "Approve" }, { id: "cancel", label: "Deny" }] },
  { action, kind: "question", prompt: "What is your name?", requestId: "req_f1" },
];

const cases = requests.map((request) => {
  const blocks = hitl.renderInputRequestBlocks(request);
  const buttons = blocks.flatMap((b) => b.actions ?? b.elements ?? []);
  const decoded = buttons.map((b) => hitl.deriveHitlResponse({ actionId: b.action_id, value: b.value }));
  const card = blocks.find((b) => b.type === "card");
  const answered = card ? cards.answeredBlocksFromActionBlock({ answerLabel: buttons[0].text.text, block: card, userId: "U2" }) : null;
  return { request, blocks, decoded, answered };
});
const modal = hitl.buildFreeformModalView({ metadata: { requestId: "req_f1" }, prompt: "What is your name?" });
const answeredFreeform = hitl.buildAnsweredBlocks({ promptBlocks: [], answerLabel: "Ada", userId: "U2" });
const out = path.join(here, "recordings/hitl.json");
fs.writeFileSync(out, JSON.stringify({ eve: "0.80.1", cases, modal, answeredFreeform }, null, 1) + "\n");
console.error(`wrote ${out}`);
