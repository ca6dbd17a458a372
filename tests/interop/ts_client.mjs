// A tiny ACP v2 client written with the official TypeScript SDK
// (@agentclientprotocol/sdk 2.4.0, export "experimental/v2"). It launches an
// agent, runs one prompt end to end and checks what the agent did against the
// v2 prompt lifecycle. Used to check acp_lite's reference agent with someone
// else's implementation.
//
// Usage:
//   node ts_client.mjs [options] -- AGENT_COMMAND [ARGS...]
// Options:
//   --prompt TEXT          prompt text (default "hello")
//   --expect-stop REASON   stop reason of the idle that ends the turn (default end_turn)
//   --expect-text TEXT     agent text of the turn must contain TEXT
//   --permission MODE      answer session/request_permission: allow | reject | cancel
//                          (default allow); the summary counts the requests
//   --expect-permission    fail unless at least one permission request arrived
//   --cancel               send session/cancel once the prompt is inserted and
//                          foreground work is reported running
//   --wait-background      after the idle, wait until the background list is []
//   --timeout-ms N         overall limit (default 5000)
// Prints one JSON summary on stdout; exits 0 when every check passed, 1 on a
// mismatch, 2 on a usage error or timeout.
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk/experimental/v2";

function parseArgs(argv) {
  const options = {
    prompt: "hello",
    expectStop: "end_turn",
    expectText: null,
    permission: "allow",
    expectPermission: false,
    cancel: false,
    waitBackground: false,
    timeoutMs: 5000,
    command: [],
  };
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    const value = () => {
      i += 1;
      if (i >= argv.length) usage(`${arg} needs a value`);
      return argv[i];
    };
    if (arg === "--") {
      options.command = argv.slice(i + 1);
      break;
    } else if (arg === "--prompt") options.prompt = value();
    else if (arg === "--expect-stop") options.expectStop = value();
    else if (arg === "--expect-text") options.expectText = value();
    else if (arg === "--permission") options.permission = value();
    else if (arg === "--expect-permission") options.expectPermission = true;
    else if (arg === "--cancel") options.cancel = true;
    else if (arg === "--wait-background") options.waitBackground = true;
    else if (arg === "--timeout-ms") options.timeoutMs = Number(value());
    else usage(`unknown option ${arg}`);
  }
  if (options.command.length === 0) usage("missing -- AGENT_COMMAND");
  if (!["allow", "reject", "cancel"].includes(options.permission)) {
    usage("--permission must be allow, reject or cancel");
  }
  return options;
}

function usage(message) {
  process.stderr.write(`ts_client.mjs: ${message}\n`);
  process.exit(2);
}

const options = parseArgs(process.argv.slice(2));
const summary = {
  ok: false,
  agent: null,
  protocolVersion: null,
  sessionId: null,
  messageId: null,
  userMessageSeen: false,
  states: [],
  stopReason: null,
  error: null,
  text: "",
  updateKinds: [],
  permissionRequests: [],
  backgroundSnapshots: [],
  mismatches: [],
  sdkErrors: [],
  stderrTail: "",
};
// The SDK reports messages it rejects (e.g. a session/update that fails its
// schema) with console.error and drops them: record those as mismatches.
const consoleError = console.error;
console.error = (...args) => {
  summary.sdkErrors.push(args.map((a) => (typeof a === "string" ? a : JSON.stringify(a))).join(" "));
  consoleError(...args);
};
const check = (condition, message) => {
  if (!condition) summary.mismatches.push(message);
};

// --- the agent process ---
const child = spawn(options.command[0], options.command.slice(1), {
  stdio: ["pipe", "pipe", "pipe"],
});
let stderr = "";
child.stderr.on("data", (data) => {
  stderr = (stderr + data.toString()).slice(-4000);
});
const childExited = new Promise((resolve) => child.on("exit", resolve));
child.on("error", (error) => finish(2, `cannot start agent: ${error.message}`));

// Filled while updates arrive, so a timeout still reports what was seen.
const userMessageIds = new Set();
const text = [];

let finished = false;
async function finish(code, reason) {
  if (finished) return;
  finished = true;
  if (reason) summary.mismatches.push(reason);
  for (const error of summary.sdkErrors) summary.mismatches.push(`SDK rejected a message: ${error}`);
  summary.text = text.join("");
  summary.userMessageSeen = summary.messageId !== null && userMessageIds.has(summary.messageId);
  summary.stderrTail = stderr.slice(-1000);
  summary.ok = code === 0 && summary.mismatches.length === 0;
  process.stdout.write(`${JSON.stringify(summary)}\n`);
  child.stdin.end();
  const killer = setTimeout(() => child.kill("SIGKILL"), 2000);
  await Promise.race([childExited, new Promise((r) => setTimeout(r, 2100))]);
  clearTimeout(killer);
  process.exit(summary.ok ? 0 : Math.max(code, 1));
}
setTimeout(() => finish(2, `timeout after ${options.timeoutMs} ms`), options.timeoutMs).unref();

// --- the client app ---
const app = acp
  .client({ name: "acp-lite-interop-ts-client" })
  .onRequest(acp.methods.client.session.requestPermission, ({ params, signal }) => {
    const record = { title: params.title, kinds: params.options.map((o) => o.kind) };
    summary.permissionRequests.push(record);
    // Already withdrawn with $/cancel_request: the spec's answer is "cancelled".
    if (signal.aborted) return { outcome: { outcome: "cancelled" } };
    if (options.permission === "cancel") return { outcome: { outcome: "cancelled" } };
    const wanted = options.permission === "allow" ? "allow_" : "reject_";
    const option = params.options.find((o) => o.kind.startsWith(wanted)) ?? params.options[0];
    record.answer = option.optionId;
    return { outcome: { outcome: "selected", optionId: option.optionId } };
  });

const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));

function idOf(item) {
  return item.terminalId ?? item.toolCallId ?? JSON.stringify(item);
}

async function run(ctx) {
  const init = await ctx.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    info: { name: "ts-interop-client", version: "2.4.0" },
    capabilities: {},
  });
  summary.agent = init.info;
  summary.protocolVersion = init.protocolVersion;
  check(init.protocolVersion === 2, `protocolVersion ${init.protocolVersion}, expected 2`);
  check(typeof init.info?.name === "string", "initialize response has no info.name");

  const session = await ctx.buildSession(process.cwd()).start();
  summary.sessionId = session.sessionId;
  check(typeof session.sessionId === "string", "session/new returned no sessionId");

  // Entities announced / finalised, to check the background rules.
  const announced = new Set();
  const finalised = new Set();
  let listed = new Set();
  let inserted = false;
  let running = false;
  let cancelled = false;

  const maybeCancel = async () => {
    if (options.cancel && inserted && running && !cancelled) {
      cancelled = true;
      await ctx.notify(acp.methods.agent.session.cancel, { sessionId: session.sessionId });
    }
  };

  const promptDone = session.prompt(options.prompt).then(async (response) => {
    summary.messageId = response.messageId;
    inserted = true;
    check(
      typeof response.messageId === "string" && response.messageId.length > 0,
      "prompt response has no messageId",
    );
    await maybeCancel();
  });
  let promptError = null;
  promptDone.catch((error) => {
    promptError = error;
  });

  const apply = (update) => {
    const kind = update.sessionUpdate;
    summary.updateKinds.push(kind === "state_update" ? `state:${update.state}` : kind);
    if (kind === "user_message" || kind === "user_message_chunk") {
      userMessageIds.add(update.messageId);
    } else if (kind === "agent_message_chunk" && update.content?.type === "text") {
      text.push(update.content.text);
    } else if (kind === "agent_message" && Array.isArray(update.content)) {
      for (const block of update.content) if (block.type === "text") text.push(block.text);
    } else if (kind === "tool_call_update") {
      announced.add(update.toolCallId);
      if (["completed", "failed", "cancelled"].includes(update.status)) {
        finalised.add(update.toolCallId);
      }
    } else if (kind === "terminal_update") {
      announced.add(update.terminalId);
      if (update.exitStatus) finalised.add(update.terminalId);
    } else if (kind === "state_update") {
      summary.states.push(update.state);
      if (update.state === "running" || update.state === "requires_action") running = true;
      if (Array.isArray(update.background)) {
        const now = new Set(update.background.map(idOf));
        summary.backgroundSnapshots.push([...now]);
        for (const id of now) {
          check(announced.has(id), `background item ${id} listed before it was announced`);
        }
        for (const id of listed) {
          if (!now.has(id)) {
            check(finalised.has(id), `background item ${id} removed before it was finalised`);
          }
        }
        listed = now;
      }
    }
  };

  // Foreground: read until the idle that ends the work started by the prompt.
  let idle = null;
  while (idle === null) {
    const message = await session.nextUpdate();
    apply(message.update);
    await maybeCancel();
    if (message.kind === "stop" && running) idle = message.update;
  }
  await promptDone.catch(() => {});
  if (promptError) {
    check(false, `prompt failed: ${promptError.message ?? promptError}`);
  }
  summary.stopReason = idle.stopReason ?? null;
  summary.error = idle.error ?? null;

  // Leading idle snapshots are initial state, not transitions (spec: "Initial state
  // and synchronization"); the work itself must start with an active state.
  const firstActive = summary.states.find((state) => state !== "idle");
  check(
    firstActive === "running" || firstActive === "requires_action",
    `first non-idle state was ${firstActive}, expected running or requires_action`,
  );
  check(
    userMessageIds.has(summary.messageId),
    `no user_message with the prompt's messageId ${summary.messageId}`,
  );
  check(
    summary.stopReason === options.expectStop,
    `stopReason ${summary.stopReason}, expected ${options.expectStop}`,
  );
  if (summary.stopReason === "error") {
    check(
      summary.error && Number.isInteger(summary.error.code) && typeof summary.error.message === "string",
      "stopReason error without an error object {code, message}",
    );
  }
  if (options.expectText !== null) {
    const got = text.join("");
    check(
      got.includes(options.expectText),
      `agent text ${JSON.stringify(got)} does not contain ${JSON.stringify(options.expectText)}`,
    );
  }
  if (options.expectPermission) {
    check(summary.permissionRequests.length > 0, "no session/request_permission arrived");
  }

  if (options.waitBackground) {
    check(listed.size > 0 || summary.backgroundSnapshots.some((s) => s.length > 0),
      "no background work was ever listed");
    while (listed.size > 0) {
      const message = await session.nextUpdate();
      apply(message.update);
    }
  }
  session.dispose();
}

app
  .connectWith(stream, run)
  .then(
    () => finish(0),
    (error) => finish(1, `client error: ${error?.message ?? error}`),
  );
