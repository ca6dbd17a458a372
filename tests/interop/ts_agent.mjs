// A small ACP v2 agent written with the official TypeScript SDK
// (@agentclientprotocol/sdk 2.4.0, export "experimental/v2"), used to check that
// acp_lite's client interoperates with someone else's implementation.
//
// Run: node ts_agent.mjs   (speaks newline-delimited JSON-RPC on stdin/stdout)
//
// Behaviour is chosen by the first word of the prompt text that names a
// scenario (default: echo):
//   stream      - streams several agent_message_chunk updates, then end_turn
//   permission  - a tool call that asks session/request_permission and branches
//                 on the outcome (allow -> runs, reject -> tool cancelled,
//                 cancelled outcome -> idle "cancelled")
//   withdraw    - asks permission, then withdraws the request itself after 150 ms
//                 ($/cancel_request, "internal cancellation") and reports how the
//                 client answered: "withdrawn: cancelled" or "withdrawn: -32800"
//   slow        - a tool call that runs until session/cancel -> idle "cancelled"
//                 (gives up with end_turn after 10 s so nothing hangs)
//   fail        - foreground work fails after insertion: idle "error" + error object
//   background  - starts a terminal and a tool call that keep running after idle;
//                 both are announced before they are listed and finalised before
//                 the snapshot that removes them
//   anything else - echo: streams "echo: <text>" back
//
// Every state_update carries the `background` list (spec: "An Agent that
// reports background work MUST include background on every state_update").
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk/experimental/v2";

const SCENARIOS = ["stream", "permission", "withdraw", "slow", "fail", "background"];
const WITHDRAW_AFTER_MS = 150;
const STREAM_WORDS = ["one ", "two ", "three ", "four ", "five"];
const SLOW_LIMIT_MS = 10_000;
// The background work's two steps after the idle. Their order after the idle does
// not depend on it (the idle is sent before any timer fires); it is a pause only, so
// short: each test with background work waits it out twice.
const BACKGROUND_DELAY_MS = Number(process.env.TS_AGENT_BACKGROUND_DELAY_MS ?? 20);

/** @type {Map<string, Session>} */
const sessions = new Map();
let sessionCounter = 0;

class Session {
  constructor(id, client) {
    this.id = id;
    this.client = client;
    this.counter = 0;
    this.busy = false;
    /** @type {AbortController | null} */
    this.abort = null;
    /** Prompts received while busy, inserted in order once idle (spec: held prompts). */
    this.held = [];
    /** Current background snapshot: [{type, toolCallId|terminalId}]. */
    this.background = [];
    /** Serialises notifications so the wire order is the order we call send(). */
    this.sendChain = Promise.resolve();
  }

  nextId(prefix) {
    this.counter += 1;
    return `${prefix}-${this.id}-${this.counter}`;
  }

  send(update) {
    this.sendChain = this.sendChain.then(() =>
      this.client.notify(acp.methods.client.session.update, {
        sessionId: this.id,
        update,
      }),
    );
    return this.sendChain;
  }

  state(state, extra = {}) {
    return this.send({
      sessionUpdate: "state_update",
      state,
      ...extra,
      background: this.background.map((item) => ({ ...item })),
    });
  }
}

function promptText(prompt) {
  return prompt
    .filter((block) => block.type === "text")
    .map((block) => block.text)
    .join("");
}

function scenarioOf(text) {
  const lowered = text.toLowerCase();
  return SCENARIOS.find((name) => lowered.includes(name)) ?? "echo";
}

function sleep(ms, signal) {
  return new Promise((resolve) => {
    if (signal?.aborted) {
      resolve();
      return;
    }
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}

function text(t) {
  return { type: "text", text: t };
}

// --- scenarios: each runs after insertion and ends by returning its idle fields ---

async function runEcho(session, prompt) {
  const messageId = session.nextId("agent");
  await session.send({
    sessionUpdate: "agent_message_chunk",
    messageId,
    content: text(`echo: ${promptText(prompt)}`),
  });
  return { stopReason: "end_turn" };
}

async function runStream(session) {
  const messageId = session.nextId("agent");
  for (const word of STREAM_WORDS) {
    await session.send({ sessionUpdate: "agent_message_chunk", messageId, content: text(word) });
  }
  return { stopReason: "end_turn" };
}

async function runPermission(session, _prompt, signal) {
  const toolCallId = session.nextId("tool");
  await session.send({
    sessionUpdate: "tool_call_update",
    toolCallId,
    title: "Write greeting.txt",
    kind: "edit",
    status: "pending",
  });
  // The foreground work is blocked on the answer: report requires_action, then
  // running once progress resumes (spec: "Waiting for user action").
  await session.state("requires_action");
  let outcome;
  try {
    const response = await session.client.request(
      acp.methods.client.session.requestPermission,
      {
        sessionId: session.id,
        title: "Allow writing greeting.txt?",
        subject: { type: "tool_call", toolCall: { toolCallId } },
        options: [
          { optionId: "allow", name: "Allow once", kind: "allow_once" },
          { optionId: "reject", name: "Reject", kind: "reject_once" },
        ],
      },
      // On session/cancel: send $/cancel_request and stop waiting (spec: Cancellation).
      { cancellationSignal: signal, stopWaitingOnCancel: true },
    );
    outcome = response.outcome;
  } catch (error) {
    if (signal.aborted) {
      outcome = { outcome: "cancelled" };
    } else {
      throw error;
    }
  }
  if (outcome.outcome === "selected" && outcome.optionId === "allow") {
    await session.state("running");
    await session.send({ sessionUpdate: "tool_call_update", toolCallId, status: "in_progress" });
    await session.send({
      sessionUpdate: "tool_call_update",
      toolCallId,
      status: "completed",
      content: [{ type: "content", content: text("wrote greeting.txt") }],
    });
    await session.send({
      sessionUpdate: "agent_message_chunk",
      messageId: session.nextId("agent"),
      content: text("permission granted"),
    });
    return { stopReason: "end_turn" };
  }
  if (outcome.outcome === "selected") {
    await session.state("running");
    await session.send({ sessionUpdate: "tool_call_update", toolCallId, status: "cancelled" });
    await session.send({
      sessionUpdate: "agent_message_chunk",
      messageId: session.nextId("agent"),
      content: text("permission rejected"),
    });
    return { stopReason: "end_turn" };
  }
  // "cancelled" (or any outcome we do not understand: never treat it as approval).
  await session.send({ sessionUpdate: "tool_call_update", toolCallId, status: "cancelled" });
  return { stopReason: "cancelled" };
}

async function runWithdraw(session) {
  const toolCallId = session.nextId("tool");
  await session.send({
    sessionUpdate: "tool_call_update",
    toolCallId,
    title: "Delete build/",
    kind: "delete",
    status: "pending",
  });
  await session.state("requires_action");
  const withdraw = new AbortController();
  const timer = setTimeout(() => withdraw.abort(), WITHDRAW_AFTER_MS);
  let answer;
  try {
    // Without stopWaitingOnCancel the SDK sends $/cancel_request and still waits
    // for the client's one response (spec, Cancellation: a valid response or -32800).
    const response = await session.client.request(
      acp.methods.client.session.requestPermission,
      {
        sessionId: session.id,
        title: "Delete build/?",
        subject: { type: "tool_call", toolCall: { toolCallId } },
        options: [{ optionId: "yes", name: "Delete", kind: "allow_once" }],
      },
      { cancellationSignal: withdraw.signal },
    );
    answer =
      response.outcome.outcome === "selected"
        ? `selected ${response.outcome.optionId}`
        : response.outcome.outcome;
  } catch (error) {
    answer = String(error?.code ?? error);
  } finally {
    clearTimeout(timer);
  }
  await session.state("running");
  await session.send({ sessionUpdate: "tool_call_update", toolCallId, status: "cancelled" });
  await session.send({
    sessionUpdate: "agent_message_chunk",
    messageId: session.nextId("agent"),
    content: text(`withdrawn: ${answer}`),
  });
  return { stopReason: "end_turn" };
}

async function runSlow(session, _prompt, signal) {
  const toolCallId = session.nextId("tool");
  await session.send({
    sessionUpdate: "tool_call_update",
    toolCallId,
    title: "Long computation",
    kind: "think",
    status: "in_progress",
  });
  await session.send({
    sessionUpdate: "agent_message_chunk",
    messageId: session.nextId("agent"),
    content: text("working..."),
  });
  await sleep(SLOW_LIMIT_MS, signal);
  if (signal.aborted) {
    // Updates after session/cancel are allowed as long as they precede the idle.
    await session.send({ sessionUpdate: "tool_call_update", toolCallId, status: "cancelled" });
    return { stopReason: "cancelled" };
  }
  await session.send({ sessionUpdate: "tool_call_update", toolCallId, status: "completed" });
  return { stopReason: "end_turn" };
}

async function runFail(session) {
  const toolCallId = session.nextId("tool");
  await session.send({
    sessionUpdate: "tool_call_update",
    toolCallId,
    title: "Call the model",
    kind: "fetch",
    status: "in_progress",
  });
  // Spec "Failures": give unfinished tool calls a terminal status first.
  await session.send({ sessionUpdate: "tool_call_update", toolCallId, status: "failed" });
  return {
    stopReason: "error",
    error: { code: -32603, message: "simulated model failure", data: { retryable: false } },
  };
}

async function runBackground(session) {
  const terminalId = session.nextId("term");
  const toolCallId = session.nextId("tool");
  // Announce before listing (spec: "Items are announced before they are listed").
  await session.send({
    sessionUpdate: "terminal_update",
    terminalId,
    command: "npm run dev",
    cwd: session.cwd,
  });
  await session.send({
    sessionUpdate: "tool_call_update",
    toolCallId,
    title: "Watch for file changes",
    kind: "other",
    status: "in_progress",
  });
  session.background = [
    { type: "terminal", terminalId },
    { type: "tool_call", toolCallId },
  ];
  await session.state("running");
  await session.send({
    sessionUpdate: "agent_message_chunk",
    messageId: session.nextId("agent"),
    content: text("started background work"),
  });
  // Finish after the idle: finalise before the snapshot that removes each item.
  setTimeout(async () => {
    await session.send({ sessionUpdate: "terminal_update", terminalId, exitStatus: { exitCode: 0 } });
    session.background = session.background.filter((item) => item.terminalId !== terminalId);
    await session.state(session.busy ? "running" : "idle");
    await sleep(BACKGROUND_DELAY_MS);
    await session.send({ sessionUpdate: "tool_call_update", toolCallId, status: "completed" });
    session.background = session.background.filter((item) => item.toolCallId !== toolCallId);
    await session.state(session.busy ? "running" : "idle");
  }, BACKGROUND_DELAY_MS);
  return { stopReason: "end_turn" };
}

const RUNNERS = {
  echo: runEcho,
  stream: runStream,
  permission: runPermission,
  withdraw: runWithdraw,
  slow: runSlow,
  fail: runFail,
  background: runBackground,
};

// --- prompt handling: insertion, then foreground work that ends with idle ---

/** Inserts the prompt and starts its work; returns the PromptResponse. */
async function insertAndRun(session, prompt) {
  session.busy = true;
  const abort = new AbortController();
  session.abort = abort;
  await session.state("running");
  const messageId = session.nextId("user");
  // Insertion: the user message is reported with the id the response returns.
  await session.send({ sessionUpdate: "user_message", messageId, content: prompt });
  const runner = RUNNERS[scenarioOf(promptText(prompt))];
  void (async () => {
    let idle;
    try {
      idle = await runner(session, prompt, abort.signal);
    } catch (error) {
      idle = abort.signal.aborted
        ? { stopReason: "cancelled" }
        : { stopReason: "error", error: { code: -32603, message: String(error) } };
    }
    if (abort.signal.aborted && idle.stopReason !== "cancelled") {
      // Spec "Cancellation": errors while aborting are reported as cancelled.
      idle = { stopReason: "cancelled" };
    }
    await session.state("idle", idle);
    session.busy = false;
    session.abort = null;
    const next = session.held.shift();
    if (next) {
      next.start();
    }
  })();
  return { messageId };
}

const app = acp
  .agent({ name: "acp-lite-interop-ts-agent" })
  .onRequest(acp.methods.agent.initialize, ({ params }) => {
    if (params.protocolVersion < acp.PROTOCOL_VERSION) {
      throw new acp.RequestError(-32022, "unsupported protocol version", {
        supported: [acp.PROTOCOL_VERSION],
      });
    }
    return {
      protocolVersion: acp.PROTOCOL_VERSION,
      info: { name: "ts-interop-agent", title: "TS SDK interop agent", version: "2.4.0" },
      capabilities: { session: {} },
      authMethods: [],
    };
  })
  .onRequest(acp.methods.agent.session.new, ({ params, client }) => {
    sessionCounter += 1;
    const session = new Session(`ts-sess-${sessionCounter}`, client);
    session.cwd = params.cwd;
    sessions.set(session.id, session);
    return { sessionId: session.id };
  })
  .onRequest(acp.methods.agent.session.prompt, ({ params, signal }) => {
    const session = sessions.get(params.sessionId);
    if (!session) {
      throw new acp.RequestError(-32002, "session not found", { sessionId: params.sessionId });
    }
    if (params.prompt.length === 0) {
      throw acp.RequestError.invalidParams(undefined, "empty prompt");
    }
    if (!session.busy) {
      return insertAndRun(session, params.prompt);
    }
    // Prompt during active work: never reject; hold and insert in order.
    return new Promise((resolve, reject) => {
      const entry = {
        start: () => insertAndRun(session, params.prompt).then(resolve, reject),
        reject,
      };
      session.held.push(entry);
      // $/cancel_request withdraws a held prompt. The SDK aborts `signal` as soon
      // as it reads the notification, possibly before this handler ran.
      const withdraw = () => {
        const index = session.held.indexOf(entry);
        if (index >= 0) {
          session.held.splice(index, 1);
          reject(acp.RequestError.requestCancelled());
        }
      };
      if (signal.aborted) {
        withdraw();
      } else {
        signal.addEventListener("abort", withdraw, { once: true });
      }
    });
  })
  .onRequest(acp.methods.agent.session.close, ({ params }) => {
    const session = sessions.get(params.sessionId);
    if (session) {
      session.abort?.abort();
      for (const entry of session.held.splice(0)) {
        entry.reject(acp.RequestError.requestCancelled());
      }
      sessions.delete(params.sessionId);
    }
    return {};
  })
  .onNotification(acp.methods.agent.session.cancel, ({ params }) => {
    const session = sessions.get(params.sessionId);
    if (!session) {
      return;
    }
    // session/cancel covers foreground work and prompts not yet inserted (-32800).
    for (const entry of session.held.splice(0)) {
      entry.reject(acp.RequestError.requestCancelled());
    }
    session.abort?.abort();
  });

const connection = app.connect(
  acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)),
);
connection.closed.then(
  () => process.exit(0),
  () => process.exit(0),
);
