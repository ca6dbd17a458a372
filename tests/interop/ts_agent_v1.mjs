// A small ACP v1 agent written with the official TypeScript SDK's default export
// (@agentclientprotocol/sdk 2.4.0, "@agentclientprotocol/sdk": stable ACP v1, the
// app API `acp.agent()`), used to check acp_lite's v1 translator against someone
// else's v1 implementation. It behaves like py_sdk_agent_v1.py (same scenarios,
// same texts) so one set of tests drives both.
//
// Run: node ts_agent_v1.mjs HISTORY_DIR   (newline-delimited JSON-RPC on stdio)
//
// The first word of the prompt picks the behaviour (default: echo):
//   think      - a thought chunk, then a message chunk
//   recap      - echoes the prompt back as user_message_chunk first, then text
//   permission - tool_call (pending, edit) + session/request_permission; reports
//                the outcome it received ("outcome: selected allow; ..."); allowed:
//                in_progress -> completed with a diff; rejected: failed;
//                cancelled outcome: stop "cancelled"
//   ask        - session/request_permission before anything else (the tool call,
//                "Run ls", comes with it); allowed: completed, "ran ls"
//   slow       - a tool call in progress and "working...", then waits for
//                session/cancel (10 s cap): tool failed, stop "cancelled"
//   plan       - a plan of three entries, then the same plan with progress
//   mode       - switches the session mode itself (current_mode_update)
//   refuse     - stop reason "refusal"
//   fail       - a tool call that fails, then an error response (-32603)
//   invalid    - an error response (-32602) before any update
//   anything else - echo: "echo: " and the text, two chunks sharing a messageId
//                (v1 allows messageId on chunks; this agent uses it for echoes)
//
// Histories are saved to HISTORY_DIR/<sessionId>.json (the v1 updates sent and
// the prompts as user_message_chunk); session/load replays one, session/list lists
// them. Advertises loadSession, sessionCapabilities.list, one auth method, two
// modes (ask, code) and a "model" select option (values in a group); each new
// session gets an available_commands_update.
import { readFileSync, readdirSync, writeFileSync, mkdirSync, existsSync } from "node:fs";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

const HISTORY_DIR = process.argv[2];
const SLOW_LIMIT_MS = 10_000;
mkdirSync(HISTORY_DIR, { recursive: true });

/** @type {Map<string, Session>} */
const sessions = new Map();
let idCounter = 0;

function modes(current) {
  return {
    currentModeId: current,
    availableModes: [
      { id: "ask", name: "Ask", description: "Ask before editing" },
      { id: "code", name: "Code" },
    ],
  };
}

const MODELS = { fast: "Fast", smart: "Smart" };

/** One select option, its values in groups (v1 groups are keyed `group`). */
function configOptions(model) {
  return [
    {
      id: "model",
      name: "Model",
      category: "model",
      type: "select",
      currentValue: model,
      options: [
        {
          group: "house",
          name: "House models",
          options: Object.entries(MODELS).map(([value, name]) => ({ value, name })),
        },
      ],
    },
  ];
}

function text(t) {
  return { type: "text", text: t };
}

class Session {
  constructor(id, cwd, client) {
    this.id = id;
    this.cwd = cwd;
    this.client = client;
    this.mode = "ask";
    this.model = "fast";
    /** @type {AbortController} */
    this.abort = new AbortController();
    /** The v1 updates sent for this session (replayed by session/load). */
    this.history = [];
  }

  nextId(prefix) {
    // Unique in the process, so a loaded copy of a history never reuses an id.
    idCounter += 1;
    return `${prefix}-${idCounter}`;
  }

  async send(update, { record = true } = {}) {
    await this.client.notify(acp.methods.client.session.update, { sessionId: this.id, update });
    if (record) {
      this.history.push(update);
    }
  }

  say(t, messageId) {
    const update = { sessionUpdate: "agent_message_chunk", content: text(t) };
    return this.send(messageId ? { ...update, messageId } : update);
  }

  save() {
    const data = { cwd: this.cwd, mode: this.mode, model: this.model, history: this.history };
    writeFileSync(join(HISTORY_DIR, `${this.id}.json`), JSON.stringify(data));
  }
}

function sessionOf(sessionId) {
  const session = sessions.get(sessionId);
  if (!session) {
    throw acp.RequestError.resourceNotFound(sessionId);
  }
  return session;
}

function toolCall(toolCallId, title, kind, status) {
  return { sessionUpdate: "tool_call", toolCallId, title, kind, status };
}

function toolUpdate(toolCallId, fields) {
  return { sessionUpdate: "tool_call_update", toolCallId, ...fields };
}

function waitAborted(signal, ms) {
  return new Promise((resolve) => {
    if (signal.aborted) {
      resolve(true); // session/cancel arrived before we started waiting
      return;
    }
    const timer = setTimeout(() => resolve(false), ms);
    signal.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        resolve(true);
      },
      { once: true },
    );
  });
}

// --- scenarios: each returns the stop reason ---

const RUNNERS = {
  async echo(session, prompt) {
    const messageId = session.nextId("ts-msg");
    await session.say("echo: ", messageId);
    await session.say(prompt, messageId);
    return "end_turn";
  },
  async think(session) {
    await session.send({ sessionUpdate: "agent_thought_chunk", content: text("thinking about it") });
    await session.say("done thinking");
    return "end_turn";
  },
  async recap(session, prompt, blocks) {
    for (const block of blocks) {
      await session.client.notify(acp.methods.client.session.update, {
        sessionId: session.id,
        update: { sessionUpdate: "user_message_chunk", content: block },
      });
    }
    await session.say("recapped");
    return "end_turn";
  },
  async permission(session) {
    const toolCallId = session.nextId("write");
    const path = join(session.cwd, "greeting.txt");
    await session.send(toolCall(toolCallId, "Write greeting.txt", "edit", "pending"));
    const { outcome } = await session.client.request(
      acp.methods.client.session.requestPermission,
      {
        sessionId: session.id,
        toolCall: { toolCallId },
        options: [
          { optionId: "allow", name: "Allow once", kind: "allow_once" },
          { optionId: "reject", name: "Reject", kind: "reject_once" },
        ],
      },
    );
    if (outcome.outcome === "cancelled") {
      await session.send(toolUpdate(toolCallId, { status: "failed" }));
      return "cancelled";
    }
    await session.say(`outcome: selected ${outcome.optionId}; `);
    if (outcome.optionId !== "allow") {
      await session.send(toolUpdate(toolCallId, { status: "failed" }));
      await session.say("permission rejected");
      return "end_turn";
    }
    await session.send(toolUpdate(toolCallId, { status: "in_progress" }));
    await session.send(
      toolUpdate(toolCallId, {
        status: "completed",
        content: [{ type: "diff", path, newText: "hello\n" }],
        rawOutput: { bytes: 6 },
      }),
    );
    await session.say("permission granted");
    return "end_turn";
  },
  async ask(session) {
    // Asks first: the tool call comes with the request, nothing reported before.
    const toolCallId = session.nextId("shell");
    const { outcome } = await session.client.request(
      acp.methods.client.session.requestPermission,
      {
        sessionId: session.id,
        toolCall: { toolCallId, title: "Run ls", kind: "execute", rawInput: { command: "ls" } },
        options: [
          { optionId: "allow", name: "Allow once", kind: "allow_once" },
          { optionId: "reject", name: "Reject", kind: "reject_once" },
        ],
      },
    );
    if (outcome.outcome === "cancelled") {
      return "cancelled";
    }
    if (outcome.optionId !== "allow") {
      await session.send(toolUpdate(toolCallId, { status: "failed" }));
      await session.say("did not run ls");
      return "end_turn";
    }
    await session.send(
      toolUpdate(toolCallId, { status: "completed", rawOutput: { files: ["a.txt"] } }),
    );
    await session.say("ran ls");
    return "end_turn";
  },
  async slow(session) {
    const toolCallId = session.nextId("compute");
    await session.send(toolCall(toolCallId, "Long computation", "think", "in_progress"));
    await session.say("working...");
    if (!(await waitAborted(session.abort.signal, SLOW_LIMIT_MS))) {
      await session.send(toolUpdate(toolCallId, { status: "completed" }));
      return "end_turn";
    }
    // v1 tool calls have no cancelled status: an interrupted one failed.
    await session.send(
      toolUpdate(toolCallId, {
        status: "failed",
        content: [{ type: "content", content: text("interrupted") }],
      }),
    );
    return "cancelled";
  },
  async plan(session) {
    const steps = ["Read the code", "Write the fix", "Run the tests"];
    await session.send({
      sessionUpdate: "plan",
      entries: steps.map((content) => ({ content, priority: "medium", status: "pending" })),
    });
    await session.send({
      sessionUpdate: "plan",
      entries: [
        { content: steps[0], priority: "high", status: "completed" },
        { content: steps[1], priority: "high", status: "in_progress" },
        { content: steps[2], priority: "low", status: "pending" },
      ],
    });
    await session.say("planned");
    return "end_turn";
  },
  async mode(session) {
    session.mode = session.mode === "ask" ? "code" : "ask";
    await session.send({ sessionUpdate: "current_mode_update", currentModeId: session.mode });
    await session.say(`mode is now ${session.mode}`);
    return "end_turn";
  },
  async refuse(session) {
    await session.say("I cannot help with that");
    return "refusal";
  },
  async fail(session) {
    const toolCallId = session.nextId("model");
    await session.send(toolCall(toolCallId, "Call the model", "fetch", "in_progress"));
    await session.send(toolUpdate(toolCallId, { status: "failed" }));
    throw acp.RequestError.internalError({ details: "simulated model failure" });
  },
};

const app = acp
  .agent({ name: "acp-lite-interop-ts-agent-v1" })
  .onRequest(acp.methods.agent.initialize, () => ({
    protocolVersion: acp.PROTOCOL_VERSION,
    agentCapabilities: { loadSession: true, sessionCapabilities: { list: {} } },
    agentInfo: { name: "ts-sdk-v1-agent", title: "TS SDK v1 interop agent", version: "2.4.0" },
    authMethods: [{ id: "demo-key", name: "Demo key" }],
  }))
  .onRequest(acp.methods.agent.authenticate, () => ({}))
  .onRequest(acp.methods.agent.session.new, ({ params, client }) => {
    const session = new Session(`ts-sess-${sessions.size + 1}`, params.cwd, client);
    sessions.set(session.id, session);
    // Sent once the response is out, as many v1 agents do.
    setImmediate(() =>
      session.send(
        {
          sessionUpdate: "available_commands_update",
          availableCommands: [
            { name: "plan", description: "Make a plan" },
            { name: "think", description: "Think aloud" },
          ],
        },
        { record: false },
      ),
    );
    return { sessionId: session.id, modes: modes(session.mode), configOptions: configOptions("fast") };
  })
  .onRequest(acp.methods.agent.session.load, async ({ params, client }) => {
    const path = join(HISTORY_DIR, `${params.sessionId}.json`);
    if (!existsSync(path)) {
      throw acp.RequestError.resourceNotFound(params.sessionId);
    }
    const saved = JSON.parse(readFileSync(path, "utf8"));
    const session = new Session(params.sessionId, params.cwd, client);
    session.mode = saved.mode;
    session.model = saved.model;
    sessions.set(session.id, session);
    for (const update of saved.history) {
      await session.send(update);
    }
    return { modes: modes(session.mode), configOptions: configOptions(session.model) };
  })
  .onRequest(acp.methods.agent.session.list, ({ params }) => {
    const found = [];
    for (const name of readdirSync(HISTORY_DIR).sort()) {
      if (!name.endsWith(".json")) continue;
      const saved = JSON.parse(readFileSync(join(HISTORY_DIR, name), "utf8"));
      if (params.cwd == null || saved.cwd === params.cwd) {
        found.push({ sessionId: name.slice(0, -5), cwd: saved.cwd });
      }
    }
    return { sessions: found };
  })
  .onRequest(acp.methods.agent.session.setMode, ({ params }) => {
    const session = sessionOf(params.sessionId);
    if (!["ask", "code"].includes(params.modeId)) {
      throw acp.RequestError.invalidParams({ modeId: params.modeId });
    }
    session.mode = params.modeId;
    return {};
  })
  .onRequest(acp.methods.agent.session.setConfigOption, ({ params }) => {
    const session = sessionOf(params.sessionId);
    if (params.configId !== "model" || !Object.hasOwn(MODELS, params.value)) {
      throw acp.RequestError.invalidParams({ configId: params.configId, value: params.value });
    }
    session.model = params.value;
    return { configOptions: configOptions(session.model) };
  })
  .onRequest(acp.methods.agent.session.prompt, async ({ params }) => {
    const session = sessionOf(params.sessionId);
    const prompt = params.prompt
      .filter((block) => block.type === "text")
      .map((block) => block.text)
      .join("");
    const scenario = (prompt.trim().split(/\s+/)[0] ?? "").toLowerCase();
    if (scenario === "invalid") {
      throw acp.RequestError.invalidParams({ reason: "this prompt is refused up front" });
    }
    session.abort = new AbortController();
    for (const block of params.prompt) {
      session.history.push({ sessionUpdate: "user_message_chunk", content: block });
    }
    try {
      const run = Object.hasOwn(RUNNERS, scenario) ? RUNNERS[scenario] : RUNNERS.echo;
      return { stopReason: await run(session, prompt, params.prompt) };
    } finally {
      session.save();
    }
  })
  .onNotification(acp.methods.agent.session.cancel, ({ params }) => {
    sessions.get(params.sessionId)?.abort.abort();
  });

const connection = app.connect(
  acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)),
);
connection.closed.then(
  () => process.exit(0),
  () => process.exit(0),
);
