// Generated eve v26 streams for situations the recordings do not cover (the reference agent has
// one instant tool and no connections): reasoning, streamed tool input, questions and approvals
// (`input.requested` → `turn.waiting` → `input.resolved`), sign-ins (`authorization.required`
// → `authorization.completed`), cancel during a tool call, failures, clear, compaction,
// partial tool output, retried steps, tasks, subagents, skills and file parts. Shapes follow
// eve 0.80.1's protocol/message.d.ts; ids are deterministic.

export function eveStream(sessionId) {
  let n = 0;
  let deliveryIds;
  const events = [];
  const meta = () => {
    n += 1;
    const m = { at: new Date(Date.UTC(2026, 11, 1, 8, 0, 0, n)).toISOString(), id: `evt_${sessionId}_${String(n).padStart(4, "0")}` };
    if (deliveryIds) m.deliveryIds = deliveryIds;
    return m;
  };
  const api = {
    events,
    delivery(id) {
      deliveryIds = id ? [id] : undefined;
      return api;
    },
    e(type, data) {
      events.push(data === undefined ? { type, meta: meta() } : { data, type, meta: meta() });
      return api;
    },
    turn(seq, text, parts) {
      const turnId = `turn_${seq}`;
      api.e("turn.started", { sequence: seq, turnId });
      api.e("message.received", parts ? { message: text, parts, sequence: seq, turnId } : { message: text, sequence: seq, turnId });
      return turnId;
    },
    step(seq, stepIndex) {
      return api.e("step.started", { modelId: "fake/fake-model", sequence: seq, stepIndex, turnId: `turn_${seq}` });
    },
    stepDone(seq, stepIndex, finishReason = "stop") {
      return api.e("step.completed", { finishReason, sequence: seq, stepIndex, turnId: `turn_${seq}`, usage: { inputTokens: 10, outputTokens: 5 } });
    },
    text(seq, stepIndex, ...deltas) {
      for (const d of deltas) api.e("message.appended", { messageDelta: d, sequence: seq, stepIndex, turnId: `turn_${seq}` });
      return api;
    },
    textDone(seq, stepIndex, message, finishReason = "stop") {
      return api.e("message.completed", { finishReason, message, sequence: seq, stepIndex, turnId: `turn_${seq}` });
    },
    reasoning(seq, stepIndex, ...deltas) {
      for (const d of deltas) api.e("reasoning.appended", { reasoningDelta: d, sequence: seq, stepIndex, turnId: `turn_${seq}` });
      return api;
    },
    input(seq, stepIndex, callId, toolName, ...deltas) {
      for (const d of deltas) api.e("action.input.appended", { callId, inputTextDelta: d, sequence: seq, stepIndex, toolName, turnId: `turn_${seq}` });
      return api;
    },
    call(seq, stepIndex, callId, toolName, input, extra = {}) {
      return api.e("actions.requested", { actions: [{ callId, input, kind: "tool-call", toolName }], ...extra, sequence: seq, stepIndex, turnId: `turn_${seq}` });
    },
    result(seq, stepIndex, callId, toolName, output, status = "completed", extra = {}) {
      return api.e("action.result", { result: { callId, kind: "tool-result", output, toolName }, sequence: seq, status, stepIndex, turnId: `turn_${seq}`, ...extra });
    },
    endTurn(seq, type = "turn.completed") {
      return api.e(type, { sequence: seq, turnId: `turn_${seq}` });
    },
    waiting() {
      return api.e("session.waiting", { continuationToken: sessionId, usage: { inputTokens: 10, outputTokens: 5 }, wait: "next-user-message" });
    },
  };
  api.delivery(`dlv_${sessionId}_0`);
  api.e("session.started", { runtime: { agentId: "eve-ref-app", eveVersion: "0.80.1" } });
  return api;
}

/** Reasoning, streamed tool input, two tools in one step, interim text, authoritative completion. */
function reasoningAndTools() {
  const s = eveStream("gen_tools");
  s.turn(0, "weather in Paris and Rome?");
  s.step(0, 0).reasoning(0, 0, "The user wants ", "two cities.").e("reasoning.completed", { reasoning: "The user wants two cities.", sequence: 0, stepIndex: 0, turnId: "turn_0" });
  s.text(0, 0, "Let me ", "check.").textDone(0, 0, "Let me check.", "tool-calls");
  s.input(0, 0, "call_1", "get_weather", '{"city"', ':"Paris"}').input(0, 0, "call_2", "get_weather", '{"city":"Rome"}');
  s.call(0, 0, "call_1", "get_weather", { city: "Paris" }, { presentation: { call_1: { label: "Weather in Paris" } } });
  s.call(0, 0, "call_2", "get_weather", { city: "Rome" });
  s.result(0, 0, "call_1", "get_weather", { tempC: 18 }, "completed", { presentation: { call_1: { label: "Checked Paris" } } });
  s.result(0, 0, "call_2", "get_weather", { tempC: 24 });
  s.stepDone(0, 0, "tool-calls");
  s.step(0, 1).text(0, 1, "Paris 18 °C, ", "Rome 24 °").textDone(0, 1, "Paris 18 °C, Rome 24 °C.").stepDone(0, 1);
  s.endTurn(0).waiting();
  // A reasoning-only step closed by step.completed; an empty append is ignored.
  s.delivery("dlv_gen_tools_1");
  s.turn(1, "again");
  s.step(1, 0).reasoning(1, 0, "", "Hmm.").stepDone(1, 0).step(1, 1).text(1, 1, "Same.").endTurn(1).waiting();
  return s.events;
}

/** A question from a workflow tool: answered with free text, then an option question answered by id. */
function question() {
  const s = eveStream("gen_question");
  s.turn(0, "plan my trip");
  s.step(0, 0).e("actions.requested", { actions: [{ callId: "ask_1", input: { question: "Which city?" }, kind: "workflow-tool-call", toolName: "ask_question" }], sequence: 0, stepIndex: 0, turnId: "turn_0" });
  const request = {
    action: { callId: "ask_1", input: { question: "Which city?" }, kind: "tool-call", toolName: "ask_question" },
    allowFreeform: true,
    display: "select",
    kind: "question",
    options: [
      { description: "The French capital.", id: "paris", label: "Paris" },
      { id: "lima", label: "Lima" },
    ],
    prompt: "Which city?",
    requestId: "req_1",
  };
  s.e("input.requested", { requests: [request], sequence: 0, stepIndex: 0, turnId: "turn_0" });
  s.e("turn.waiting", { on: "input", sequence: 0, turnId: "turn_0", usage: { inputTokens: 10, outputTokens: 5 } });
  s.delivery("dlv_gen_question_1");
  s.e("input.resolved", { resolutions: [{ kind: "question", outcome: "answered", requestId: "req_1", response: { requestId: "req_1", text: "Kyoto" } }], sequence: 0, stepIndex: 0, turnId: "turn_0" });
  s.step(0, 1);
  s.result(0, 1, "ask_1", "ask_question", { answer: "Kyoto", status: "answered" });
  s.stepDone(0, 1, "tool-calls").step(0, 2).text(0, 2, "Kyoto it is.").textDone(0, 2, "Kyoto it is.").stepDone(0, 2).endTurn(0).waiting();
  s.delivery("dlv_gen_question_2");
  s.turn(1, "and the hotel?");
  s.step(1, 0).call(1, 0, "ask_2", "ask_question", { question: "Budget?" });
  s.e("input.requested", {
    requests: [{ ...request, action: { ...request.action, callId: "ask_2" }, allowFreeform: undefined, options: [{ id: "low", label: "Low" }, { id: "high", label: "High", style: "primary" }], prompt: "Budget?", requestId: "req_2" }],
    sequence: 1,
    stepIndex: 0,
    turnId: "turn_1",
  });
  s.e("turn.waiting", { on: "input", sequence: 1, turnId: "turn_1" });
  return s.events;
}

/** Tool approvals: one approved (approval.settled + input.resolved), one denied, one rejected result. */
function approvals() {
  const s = eveStream("gen_approval");
  s.turn(0, "refund both charges");
  s.step(0, 0).input(0, 0, "c_a", "refund_charge", '{"chargeId":"a"}').call(0, 0, "c_a", "refund_charge", { chargeId: "a" }).call(0, 0, "c_b", "refund_charge", { chargeId: "b" });
  const req = (callId, requestId) => ({
    action: { callId, input: { chargeId: callId }, kind: "tool-call", toolName: "refund_charge" },
    kind: "tool-approval",
    options: [
      { id: "approve", label: "Approve", style: "primary" },
      { id: "cancel", label: "Cancel", style: "danger" },
    ],
    prompt: `Approve refund ${callId}?`,
    requestId,
  });
  s.e("input.requested", { requests: [req("c_a", "apr_a"), req("c_b", "apr_b")], sequence: 0, stepIndex: 0, turnId: "turn_0" });
  s.e("turn.waiting", { on: "input", sequence: 0, turnId: "turn_0" });
  s.e("approval.candidate", { candidateId: "cand_1", outcome: "pending", requestId: "apr_a", responderPrincipalId: "user:1", sequence: 0, stepIndex: 0, turnId: "turn_0" });
  s.e("approval.settled", { outcome: "approved", requestId: "apr_a", responderPrincipalId: "user:1", sequence: 0, stepIndex: 0, turnId: "turn_0" });
  s.e("input.resolved", { resolutions: [{ kind: "tool-approval", outcome: "approved", requestId: "apr_a", response: { optionId: "approve", requestId: "apr_a" } }], sequence: 0, stepIndex: 0, turnId: "turn_0" });
  s.e("input.resolved", { resolutions: [{ kind: "tool-approval", outcome: "denied", requestId: "apr_b", response: { optionId: "cancel", requestId: "apr_b", text: "Only a." } }], sequence: 0, stepIndex: 0, turnId: "turn_0" });
  s.step(0, 1).result(0, 1, "c_a", "refund_charge", { refunded: true });
  s.result(0, 1, "c_b", "refund_charge", "denied by the user", "rejected", { error: { code: "TOOL_EXECUTION_DENIED", message: "The user denied this call." } });
  s.stepDone(0, 1, "tool-calls").step(0, 2).text(0, 2, "Refunded a.").stepDone(0, 2).endTurn(0).waiting();
  return s.events;
}

/** Sign-ins: one authorized through its callback, one declined by cancelling the turn. */
function authorizations() {
  const s = eveStream("gen_auth");
  s.turn(0, "search my notion");
  s.step(0, 0).input(0, 0, "n_1", "notion__search", '{"q":"x"}').call(0, 0, "n_1", "notion__search", { q: "x" });
  s.e("authorization.required", {
    attemptId: "att_1",
    authorization: { displayName: "Notion", url: "/eve/v1/connections/notion/authorize?attempt=att_1" },
    description: "Authorization required for notion",
    name: "notion",
    principalId: "user:1",
    sequence: 0,
    stepIndex: 0,
    turnId: "turn_0",
    webhookUrl: "/eve/v1/callbacks/att_1",
  });
  s.e("turn.waiting", { on: "input", sequence: 0, turnId: "turn_0" });
  s.e("authorization.completed", { attemptId: "att_1", authorization: { displayName: "Notion", url: "/eve/v1/connections/notion/authorize?attempt=att_1" }, name: "notion", outcome: "authorized", principalId: "user:1", sequence: 0, stepIndex: 0, turnId: "turn_0" });
  s.step(0, 1).result(0, 1, "n_1", "notion__search", { pages: 2 }).stepDone(0, 1, "tool-calls").step(0, 2).text(0, 2, "Found 2 pages.").stepDone(0, 2).endTurn(0).waiting();
  // Without attemptId (matched by name), no callback, declined by a cancel.
  s.delivery("dlv_gen_auth_1");
  s.turn(1, "now linear");
  s.step(1, 0).call(1, 0, "l_1", "linear__list_issues", {});
  s.e("authorization.required", { authorization: { instructions: "Ask an admin.", userCode: "ABCD-1234" }, description: "Authorization required for linear", name: "linear", sequence: 1, stepIndex: 0, turnId: "turn_1" });
  s.e("turn.waiting", { on: "input", sequence: 1, turnId: "turn_1" });
  s.e("authorization.completed", { name: "linear", outcome: "declined", sequence: 1, stepIndex: 0, turnId: "turn_1" });
  s.endTurn(1, "turn.cancelled").waiting();
  // A failed sign-in with a reason.
  s.delivery("dlv_gen_auth_2");
  s.turn(2, "sentry?");
  s.step(2, 0).e("authorization.required", { attemptId: "att_3", description: "Connect Sentry", name: "sentry", sequence: 2, stepIndex: 0, turnId: "turn_2" });
  s.e("authorization.completed", { attemptId: "att_3", name: "sentry", outcome: "failed", reason: "access_denied", sequence: 2, stepIndex: 0, turnId: "turn_2" });
  s.text(2, 0, "Could not connect.").endTurn(2).waiting();
  return s.events;
}

/** Cancel during a streaming tool call and during a running one; cancel before any output. */
function cancels() {
  const s = eveStream("gen_cancel");
  s.turn(0, "slow tool");
  s.step(0, 0).text(0, 0, "Working").input(0, 0, "s_1", "slow", '{"n":').call(0, 0, "s_2", "slow", { n: 2 }).input(0, 0, "s_3", "slow", "{");
  s.endTurn(0, "turn.cancelled").waiting();
  s.delivery("dlv_gen_cancel_1");
  s.turn(1, "again");
  s.step(1, 0).endTurn(1, "turn.cancelled").waiting();
  s.delivery("dlv_gen_cancel_2");
  s.turn(2, "and again");
  s.endTurn(2, "turn.cancelled").waiting();
  return s.events;
}

/** A retryable failure (session.waiting follows), then a terminal one (session.failed). */
function failures() {
  const s = eveStream("gen_fail");
  s.turn(0, "fail softly");
  s.step(0, 0).text(0, 0, "Partial");
  s.e("step.failed", { code: "MODEL_CALL_FAILED", message: "upstream 500", sequence: 0, stepIndex: 0, turnId: "turn_0" });
  s.e("turn.failed", { code: "MODEL_CALL_FAILED", message: "upstream 500", sequence: 0, terminal: false, turnId: "turn_0" });
  s.waiting();
  s.delivery("dlv_gen_fail_1");
  s.turn(1, "fail hard");
  s.step(1, 0);
  s.e("step.failed", { code: "MODEL_CALL_FAILED", details: { status: 400 }, message: "bad request", sequence: 1, stepIndex: 0, turnId: "turn_1" });
  s.e("turn.failed", { code: "MODEL_CALL_FAILED", message: "bad request", sequence: 1, terminal: true, turnId: "turn_1" });
  s.e("session.failed", { code: "MODEL_CALL_FAILED", message: "bad request", sessionId: "gen_fail" });
  return s.events;
}

/** Clear, compaction, a reset that completes the session. */
function controls() {
  const s = eveStream("gen_controls");
  s.turn(0, "hi");
  s.step(0, 0).call(0, 0, "t_1", "get_time", {}).result(0, 0, "t_1", "get_time", { time: "noon" }).stepDone(0, 0, "tool-calls");
  s.step(0, 1).text(0, 1, "Noon.").endTurn(0).waiting();
  s.delivery("dlv_gen_controls_1");
  s.e("context.cleared", { sequence: 1, sessionId: "gen_controls", turnId: "turn_1" }).waiting();
  s.delivery("dlv_gen_controls_2");
  s.e("compaction.requested", { modelId: "fake/fake-model", sequence: 2, sessionId: "gen_controls", stepIndex: 0, turnId: "turn_2", usageInputTokens: 40 });
  s.e("compaction.completed", { modelId: "fake/fake-model", sequence: 2, sessionId: "gen_controls", stepIndex: 0, turnId: "turn_2" }).waiting();
  s.e("session.completed", { usage: { inputTokens: 60, outputTokens: 30 } });
  return s.events;
}

/** Partial output, a retried attempt, a failed result, tasks and a subagent, a skill, files. */
function assorted() {
  const s = eveStream("gen_assorted");
  s.turn(0, "see attached", [
    { text: "see attached", type: "text" },
    { filename: "a.txt", mediaType: "text/plain", size: 12, type: "file" },
    { mediaType: "image/png", type: "file", url: "data:image/png;base64,iVBORw0KGgo=" },
  ]);
  s.step(0, 0).call(0, 0, "p_1", "progress", {});
  s.e("action.partial", { result: { callId: "p_1", kind: "tool-result", output: { done: 1 }, toolName: "progress" }, sequence: 0, stepIndex: 0, turnId: "turn_0" });
  s.e("action.partial", { result: { callId: "p_1", kind: "tool-result", output: { done: 2 }, toolName: "progress" }, sequence: 0, stepIndex: 0, turnId: "turn_0" });
  s.result(0, 0, "p_1", "progress", { done: 3 });
  s.call(0, 0, "r_1", "flaky", {}).result(0, 0, "r_1", "flaky", "retry", "failed", { error: { code: "MODEL_CALL_ATTEMPT_RETRIED", message: "retried" } });
  s.call(0, 0, "f_1", "broken", { x: 1 }).e("action.result", { result: { callId: "f_1", isError: true, kind: "tool-result", output: { message: "boom" }, toolName: "broken" }, sequence: 0, status: "failed", stepIndex: 0, turnId: "turn_0", error: { code: "TOOL_FAILED", message: "boom", name: "Error" } });
  s.e("actions.requested", { actions: [{ callId: "sk_1", input: { name: "research" }, kind: "load-skill", name: "research" }], sequence: 0, stepIndex: 0, turnId: "turn_0" });
  s.e("action.result", { result: { callId: "sk_1", kind: "load-skill-result", name: "research", output: "ok" }, sequence: 0, status: "completed", stepIndex: 0, turnId: "turn_0" });
  s.e("actions.requested", { actions: [{ callId: "ag_1", input: { task: "dig" }, kind: "subagent-call", name: "researcher", subagentName: "researcher" }], sequence: 0, stepIndex: 0, turnId: "turn_0" });
  s.e("task.started", { callId: "ag_1", kind: "agent", name: "researcher", taskId: "task_1", turnId: "turn_0" });
  s.e("agent.started", { callId: "ag_1", name: "researcher", sessionId: "wrun_child", streamPath: "/eve/v1/session/wrun_child/stream", taskId: "task_1", turnId: "turn_0" });
  s.e("action.result", { result: { callId: "ag_1", kind: "subagent-result", output: { receipt: "task_1" }, subagentName: "researcher" }, sequence: 0, status: "completed", stepIndex: 0, turnId: "turn_0" });
  s.stepDone(0, 0, "tool-calls");
  s.e("turn.waiting", { on: "tasks", sequence: 0, turnId: "turn_0" });
  s.e("task.settled", { callId: "ag_1", kind: "agent", name: "researcher", output: { findings: 3 }, status: "completed", taskId: "task_1", turnId: "turn_0" });
  s.step(0, 1).text(0, 1, "Done.").e("result.completed", { result: { ok: true }, sequence: 0, stepIndex: 1, turnId: "turn_0" }).stepDone(0, 1).endTurn(0).waiting();
  s.delivery("dlv_gen_assorted_1");
  // A message without structured parts, and a completion that replaces the streamed text.
  s.e("turn.started", { sequence: 1, turnId: "turn_1" });
  s.e("message.received", { message: "plain", sequence: 1, turnId: "turn_1" });
  s.step(1, 0).text(1, 0, "Draft").textDone(1, 0, "Final answer").text(1, 0, " more").stepDone(1, 0).endTurn(1).waiting();
  return s.events;
}

export function generatedStreams() {
  return [
    { name: "gen-reasoning-and-tools", events: reasoningAndTools() },
    { name: "gen-question", events: question() },
    { name: "gen-approvals", events: approvals() },
    { name: "gen-authorizations", events: authorizations() },
    { name: "gen-cancels", events: cancels() },
    { name: "gen-failures", events: failures() },
    { name: "gen-controls", events: controls() },
    { name: "gen-assorted", events: assorted() },
  ];
}
